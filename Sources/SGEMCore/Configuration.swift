#if canImport(Glibc)
import Glibc
#endif
import SGEMShell
import SGEMSupport

/// The kind of value a setting holds; values are checked when the configuration loads.
public enum SettingKind: Sendable {
    case string, path, bool
    case int(ClosedRange<Int>)
    /// Whole seconds within the range.
    case seconds(ClosedRange<Int>)
    case choice([String])
}

/// One setting: its flag (`--data-dir`), environment variable (`SGEM_DATA_DIR`), config-file
/// key (`data_dir`), kind, default and help. All settings live in `Settings.all`.
public struct Setting: Sendable {
    public let name: String
    public let kind: SettingKind
    public let defaultValue: String?
    public let help: String

    public init(_ name: String, _ kind: SettingKind, default defaultValue: String?, _ help: String) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
    }

    public var flag: String { "--" + name }
    public var environmentVariable: String { "SGEM_" + name.uppercased().replacingDashes(with: "_") }
    public var fileKey: String { name.replacingDashes(with: "_") }
    public var valueName: String {
        switch kind {
        case .bool: "true|false"
        case .int: "N"
        case .seconds: "SECONDS"
        case .path: "PATH"
        case let .choice(options): options.joined(separator: "|")
        case .string: "VALUE"
        }
    }
}

/// The catalogue of every setting the server understands.
public enum Settings {
    public static let all: [Setting] = [
        Setting("host", .string, default: "0.0.0.0", "address to listen on"),
        Setting("port", .int(0...65535), default: "8080", "TCP port to listen on (0 picks a free one)"),
        Setting("data-dir", .path, default: "./sgem-data", "directory holding the database (created if missing)"),
        Setting("config", .path, default: nil, "configuration file (key = value lines)"),
        Setting("tls-cert", .path, default: nil, "PEM certificate chain; with --tls-key serves HTTPS (TLS 1.2+)"),
        Setting("tls-key", .path, default: nil, "PEM private key for --tls-cert"),
        Setting("log-level", .choice(LogLevel.allCases.map(\.name)), default: "info", "lowest level of log lines written to stderr"),
        Setting("event-loops", .int(0...64), default: "0", "HTTP event-loop threads (0: one per available CPU)"),
        Setting("max-connections", .int(1...1_000_000), default: "4096", "open connections accepted at once; more are refused"),
        Setting("max-header-bytes", .int(1024...1_048_576), default: "16384", "largest request header section (431 past it)"),
        Setting("max-uri-bytes", .int(256...1_048_576), default: "8192", "longest request target (414 past it)"),
        Setting("max-body-bytes", .int(0...1_073_741_824), default: "1048576", "default request body cap for routes that set none (413 past it)"),
        Setting("header-timeout", .seconds(1...3600), default: "10", "seconds a client has to send a request's headers"),
        Setting("body-timeout", .seconds(1...3600), default: "10", "seconds a client has to send a request's body"),
        Setting("idle-timeout", .seconds(1...86400), default: "60", "seconds an idle keep-alive connection stays open"),
        Setting("shutdown-grace", .seconds(0...3600), default: "10", "seconds in-flight requests get to finish at shutdown"),
        Setting("ws-max-message-bytes", .int(1024...67_108_864), default: "1048576", "largest WebSocket message accepted (closed with 1009 past it)"),
        Setting("ws-max-buffered-bytes", .int(4096...268_435_456), default: "4194304", "outgoing WebSocket bytes buffered for a slow peer before it is dropped"),
        Setting("store-readers", .int(1...64), default: "2", "SQLite reader connections"),
        Setting("store-busy-timeout-ms", .int(0...600_000), default: "5000", "milliseconds to wait on a locked database"),
        Setting("store-write-batch", .int(1...10_000), default: "256", "most writes grouped into one commit (1 disables group commit)"),
        Setting("password-hash-log-n", .int(10...20), default: "17", "scrypt cost as log2(N) for new password hashes (OWASP: 17; lower only for tests)"),
        Setting("session-idle-hours", .int(1...8760), default: "168", "hours a session lives without use (each use renews it)"),
        Setting("session-max-days", .int(1...365), default: "30", "days after which a session ends even if used"),
        Setting("bench-module", .bool, default: "false", "enable the benchmark-only write endpoint (never in production)"),
    ]

    public static func named(_ name: String) -> Setting? { all.first { $0.name == name } }

    /// Option specs for the command-line parser.
    public static var optionSpecs: [OptionSpec] {
        all.map { s in
            if case .bool = s.kind { return .flag(s.name, s.help) }
            return .value(s.name, s.valueName, s.help)
        }
    }
}

/// Resolved settings: flags over `SGEM_*` environment over the config file over defaults.
public struct Configuration: Sendable {
    public private(set) var values: [String: String]
    /// Where each value came from: "flag", "environment", "file" or "default".
    public private(set) var sources: [String: String]

    /// Builds the configuration from parsed flags, an environment and the config file they name.
    public init(flags: ParsedArguments, environment: [String: String]) throws(CommandError) {
        var values: [String: String] = [:]
        var sources: [String: String] = [:]
        for s in Settings.all {
            if let d = s.defaultValue { values[s.name] = d; sources[s.name] = "default" }
        }
        let configPath = flags.value("config") ?? environment["SGEM_CONFIG"]
        if let configPath {
            for (key, value) in try Configuration.readFile(configPath) {
                guard let s = Settings.all.first(where: { $0.fileKey == key }), s.name != "config" else {
                    throw .usage("\(configPath): unknown setting '\(key)'")
                }
                values[s.name] = value
                sources[s.name] = "file"
            }
        }
        for s in Settings.all {
            if let v = environment[s.environmentVariable] { values[s.name] = v; sources[s.name] = "environment" }
        }
        for s in Settings.all {
            if case .bool = s.kind {
                if flags.flags.contains(s.name) { values[s.name] = "true"; sources[s.name] = "flag" }
            } else if let v = flags.value(s.name) {
                values[s.name] = v
                sources[s.name] = "flag"
            }
        }
        for s in Settings.all {
            guard let v = values[s.name] else { continue }
            values[s.name] = try Configuration.validate(s, v, source: sources[s.name] ?? "default")
        }
        if (values["tls-cert"] == nil) != (values["tls-key"] == nil) {
            throw .usage("--tls-cert and --tls-key go together")
        }
        self.values = values
        self.sources = sources
    }

    /// The defaults alone, with optional overrides (tests).
    public init(overrides: [String: String] = [:]) {
        var values: [String: String] = [:]
        for s in Settings.all { if let d = s.defaultValue { values[s.name] = d } }
        for (k, v) in overrides { precondition(Settings.named(k) != nil, "unknown setting \(k)"); values[k] = v }
        self.values = values
        self.sources = values.mapValues { _ in "default" }
    }

    public func string(_ name: String) -> String? { values[name] }
    public func int(_ name: String) -> Int { Int(values[name] ?? "") ?? 0 }
    public func bool(_ name: String) -> Bool { values[name] == "true" }
    public func duration(_ name: String) -> Duration { .seconds(int(name)) }

    public var dataDirectory: String { values["data-dir"] ?? "./sgem-data" }
    public var databasePath: String { dataDirectory + "/sgem.db" }
    public var lockPath: String { dataDirectory + "/sgem.lock" }

    static func validate(_ s: Setting, _ raw: String, source: String) throws(CommandError) -> String {
        let v = raw.trimmingCharacters(in: " \t")
        let origin = source == "flag" ? s.flag : source == "environment" ? s.environmentVariable : source == "file" ? "config key '\(s.fileKey)'" : s.name
        switch s.kind {
        case .string, .path:
            guard !v.isEmpty else { throw .usage("\(origin) must not be empty") }
            return v
        case .bool:
            switch v.lowercased() {
            case "true", "1", "yes", "on": return "true"
            case "false", "0", "no", "off": return "false"
            default: throw .usage("\(origin) must be true or false, not '\(raw)'")
            }
        case let .int(range), let .seconds(range):
            guard let n = Int(v), range.contains(n) else {
                throw .usage("\(origin) must be a whole number from \(range.lowerBound) to \(range.upperBound), not '\(raw)'")
            }
            return String(n)
        case let .choice(options):
            guard options.contains(v.lowercased()) else { throw .usage("\(origin) must be one of \(options.joined(separator: ", ")), not '\(raw)'") }
            return v.lowercased()
        }
    }

    /// Reads `key = value` lines; `#` starts a comment; values may be double-quoted.
    static func readFile(_ path: String) throws(CommandError) -> [(String, String)] {
        guard let text = readTextFile(path, limit: 1 << 20) else {
            throw .usage("cannot read config file '\(path)'")
        }
        var pairs: [(String, String)] = []
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = String(rawLine).trimmingCharacters(in: " \t\r")
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let eq = line.firstIndex(of: "=") else {
                throw .usage("\(path):\(lineNumber): expected 'key = value'")
            }
            let key = String(line[..<eq]).trimmingCharacters(in: " \t")
            var value = String(line[line.index(after: eq)...]).trimmingCharacters(in: " \t")
            if value.hasPrefix("\"") {
                guard value.count >= 2, value.hasSuffix("\"") else { throw .usage("\(path):\(lineNumber): unterminated quote") }
                value = String(value.dropFirst().dropLast())
            } else if let hash = value.firstIndex(of: "#") {
                value = String(value[..<hash]).trimmingCharacters(in: " \t")
            }
            guard !key.isEmpty else { throw .usage("\(path):\(lineNumber): missing key") }
            pairs.append((key, value))
        }
        return pairs
    }
}

/// Reads a whole file as UTF-8 text, up to `limit` bytes; nil when it cannot be read.
public func readTextFile(_ path: String, limit: Int) -> String? {
    guard let bytes = readFileBytes(path, limit: limit) else { return nil }
    return String(decoding: bytes, as: UTF8.self)
}

/// Reads a whole file, up to `limit` bytes; nil when it cannot be read or is larger.
public func readFileBytes(_ path: String, limit: Int) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return nil }
        if n == 0 { break }
        out.append(contentsOf: chunk[0..<n])
        if out.count > limit { return nil }
    }
    return out
}

extension String {
    func replacingDashes(with replacement: String) -> String {
        split(separator: "-", omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
