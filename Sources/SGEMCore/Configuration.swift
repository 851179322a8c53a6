#if canImport(Glibc)
import Glibc
#endif
import SGEMShell
import SGEMStore
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
/// key (`data_dir`), kind, default, help and an optional extra check. The platform's settings are
/// `Settings.platform`; each module declares its own in `Module.settings`.
public struct Setting: Sendable {
    public let name: String
    public let kind: SettingKind
    public let defaultValue: String?
    public let help: String
    /// A further check of a value that passed the kind's: the problem in words, or nil when fine.
    public let check: (@Sendable (String) -> String?)?

    public init(_ name: String, _ kind: SettingKind, default defaultValue: String?, _ help: String,
                check: (@Sendable (String) -> String?)? = nil) {
        self.name = name
        self.kind = kind
        self.defaultValue = defaultValue
        self.help = help
        self.check = check
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

/// The platform's own settings: listening, TLS, limits, logging and the store. Modules add theirs.
public enum Settings {
    public static let platform: [Setting] = [
        Setting("host", .string, default: "0.0.0.0", "address to listen on"),
        Setting("port", .int(0...65535), default: "8080", "TCP port to listen on (0 picks a free one)"),
        Setting("data-dir", .path, default: "./sgem-data", "directory holding the database (created if missing)"),
        Setting("database-url", .string, default: nil,
                "where the data lives: sqlite:PATH (default DATA_DIR/sgem.db) or postgresql://USER[:PASSWORD]@HOST[:PORT]/DB (a Unix socket with ?host=/dir)",
                check: { value in StoreLocation(databaseURL: value) == nil ? "must be sqlite:PATH or a postgresql:// URL" : nil }),
        Setting("config", .path, default: nil, "configuration file (key = value lines)"),
        Setting("tls-cert", .path, default: nil, "PEM certificate chain; with --tls-key serves HTTPS (TLS 1.2+)"),
        Setting("tls-key", .path, default: nil, "PEM private key for --tls-cert"),
        Setting("trusted-proxy", .string, default: nil,
                "comma-separated IP addresses of reverse proxies whose X-Forwarded-For/-Proto are believed",
                check: { value in
                    let bad = value.split(separator: ",").map { $0.trimmingCharacters(in: " \t") }.filter { !isIPAddress($0) }
                    return bad.isEmpty ? nil : "must list IP addresses, not '\(bad[0])'"
                }),
        Setting("log-level", .choice(LogLevel.allCases.map(\.name)), default: "info", "lowest level of log lines written to stderr"),
        Setting("event-loops", .int(0...64), default: "0", "HTTP event-loop threads (0: one per available CPU)"),
        Setting("max-connections", .int(1...1_000_000), default: "4096", "open connections accepted at once; more are refused"),
        Setting("max-connections-per-address", .int(0...1_000_000), default: "256",
                "open connections one client address may hold (trusted proxies are exempt; 0: no limit)"),
        Setting("max-header-bytes", .int(1024...1_048_576), default: "16384", "largest request header section (431 past it)"),
        Setting("max-uri-bytes", .int(256...1_048_576), default: "8192", "longest request target (414 past it)"),
        Setting("max-body-bytes", .int(0...1_073_741_824), default: "1048576", "default request body cap for routes that set none (413 past it)"),
        Setting("header-timeout", .seconds(1...3600), default: "10", "seconds a client has to send a request's headers"),
        Setting("body-timeout", .seconds(1...3600), default: "10", "seconds a client has to send a request's body"),
        Setting("idle-timeout", .seconds(1...86400), default: "60", "seconds an idle keep-alive connection stays open"),
        Setting("handler-timeout", .seconds(1...3600), default: "30", "seconds a request may take to be answered before it gets 503"),
        Setting("shutdown-grace", .seconds(0...3600), default: "10", "seconds in-flight requests get to finish at shutdown"),
        Setting("ws-max-message-bytes", .int(1024...67_108_864), default: "1048576", "largest WebSocket message accepted (closed with 1009 past it)"),
        Setting("ws-max-buffered-bytes", .int(4096...268_435_456), default: "4194304", "outgoing WebSocket bytes buffered for a slow peer before it is closed (realtime sends a resync first)"),
        Setting("store-readers", .int(1...64), default: "2", "reader connections (SQLite or PostgreSQL)"),
        Setting("store-busy-timeout-ms", .int(0...600_000), default: "5000", "milliseconds to wait on a locked database"),
        Setting("secret-key-file", .path, default: nil,
                "file of the key that seals stored secrets, made on first start (default DATA_DIR/secret.key); keep it beside backups"),
        Setting("store-write-batch", .int(1...10_000), default: "256", "most writes grouped into one commit (1 disables group commit)"),
    ]
}

/// Every setting the command line understands: the platform's and each module's, names unique.
public struct SettingsCatalogue: Sendable {
    public let all: [Setting]
    private let byName: [String: Int]

    /// The settings in help order; a name declared twice is a bug in the module list.
    public init(_ settings: [Setting]) {
        var byName: [String: Int] = [:]
        for (index, s) in settings.enumerated() {
            precondition(byName[s.name] == nil, "setting '\(s.name)' declared twice")
            byName[s.name] = index
        }
        self.all = settings
        self.byName = byName
    }

    /// The platform's settings alone.
    public static let platform = SettingsCatalogue(Settings.platform)

    public func named(_ name: String) -> Setting? { byName[name].map { all[$0] } }

    /// Option specs for the command-line parser.
    public var optionSpecs: [OptionSpec] {
        all.map { s in
            if case .bool = s.kind { return .flag(s.name, s.help) }
            return .value(s.name, s.valueName, s.help)
        }
    }
}

/// Whether `text` is an IPv4 or IPv6 address.
public func isIPAddress(_ text: String) -> Bool {
    var v4 = in_addr()
    var v6 = in6_addr()
    return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
}

/// Resolved settings: flags over `SGEM_*` environment over the config file over defaults.
public struct Configuration: Sendable {
    public private(set) var values: [String: String]
    /// Where each value came from: "flag", "environment", "file" or "default".
    public private(set) var sources: [String: String]

    /// Builds the configuration from parsed flags, an environment and the config file they name;
    /// `catalogue` lists every setting that may appear.
    public init(flags: ParsedArguments, environment: [String: String], catalogue: SettingsCatalogue = .platform) throws(CommandError) {
        var values: [String: String] = [:]
        var sources: [String: String] = [:]
        for s in catalogue.all {
            if let d = s.defaultValue { values[s.name] = d; sources[s.name] = "default" }
        }
        let configPath = flags.value("config") ?? environment["SGEM_CONFIG"]
        if let configPath {
            for (key, value) in try Configuration.readFile(configPath) {
                guard let s = catalogue.all.first(where: { $0.fileKey == key }), s.name != "config" else {
                    throw .usage("\(configPath): unknown setting '\(key)'")
                }
                values[s.name] = value
                sources[s.name] = "file"
            }
        }
        for s in catalogue.all {
            if let v = environment[s.environmentVariable] { values[s.name] = v; sources[s.name] = "environment" }
        }
        for s in catalogue.all {
            if case .bool = s.kind {
                if flags.flags.contains(s.name) { values[s.name] = "true"; sources[s.name] = "flag" }
            } else if let v = flags.value(s.name) {
                values[s.name] = v
                sources[s.name] = "flag"
            }
        }
        for s in catalogue.all {
            guard let v = values[s.name] else { continue }
            values[s.name] = try Configuration.validate(s, v, source: sources[s.name] ?? "default")
        }
        if (values["tls-cert"] == nil) != (values["tls-key"] == nil) {
            throw .usage("--tls-cert and --tls-key go together")
        }
        self.values = values
        self.sources = sources
    }

    /// The platform defaults with `overrides` on top, unchecked (tests). Module settings left out
    /// read as their declared defaults through the `Setting` accessors.
    public init(overrides: [String: String] = [:]) {
        var values: [String: String] = [:]
        for s in Settings.platform { if let d = s.defaultValue { values[s.name] = d } }
        for (k, v) in overrides { values[k] = v }
        self.values = values
        self.sources = values.mapValues { _ in "default" }
    }

    /// This configuration with `name` set to `value` (as if given as a flag), unchecked.
    public func setting(_ name: String, to value: String) -> Configuration {
        var copy = self
        copy.values[name] = value
        copy.sources[name] = "flag"
        return copy
    }

    public func string(_ name: String) -> String? { values[name] }
    public func int(_ name: String) -> Int { Int(values[name] ?? "") ?? 0 }
    public func bool(_ name: String) -> Bool { values[name] == "true" }
    public func duration(_ name: String) -> Duration { .seconds(int(name)) }

    /// A module setting's value, or its declared default when the configuration has none.
    public func string(_ setting: Setting) -> String? { values[setting.name] ?? setting.defaultValue }
    public func int(_ setting: Setting) -> Int { Int(string(setting) ?? "") ?? 0 }
    public func bool(_ setting: Setting) -> Bool { string(setting) == "true" }
    public func duration(_ setting: Setting) -> Duration { .seconds(int(setting)) }

    public var dataDirectory: String { values["data-dir"] ?? "./sgem-data" }
    /// The SQLite file: `--database-url sqlite:PATH`, else `DATA_DIR/sgem.db`. Meaningful only when
    /// `databaseLocation` is SQLite.
    public var databasePath: String {
        if case .sqlite(let path)? = values["database-url"].flatMap(StoreLocation.init(databaseURL:)) { return path }
        return dataDirectory + "/sgem.db"
    }
    /// Where the store lives: `--database-url`, else the SQLite file in the data directory.
    public var databaseLocation: StoreLocation {
        values["database-url"].flatMap(StoreLocation.init(databaseURL:)) ?? .sqlite(path: dataDirectory + "/sgem.db")
    }
    public var lockPath: String { dataDirectory + "/sgem.lock" }
    /// The key that seals stored secrets: `--secret-key-file`, else `DATA_DIR/secret.key`.
    public var secretKeyPath: String { values["secret-key-file"] ?? dataDirectory + "/secret.key" }

    static func origin(of s: Setting, source: String) -> String {
        source == "flag" ? s.flag : source == "environment" ? s.environmentVariable : source == "file" ? "config key '\(s.fileKey)'" : s.name
    }

    static func validateKind(_ s: Setting, _ raw: String, source: String) throws(CommandError) -> String {
        let v = raw.trimmingCharacters(in: " \t")
        let origin = origin(of: s, source: source)
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

    /// The kind's check, then the setting's own.
    static func validate(_ s: Setting, _ raw: String, source: String) throws(CommandError) -> String {
        let v = try validateKind(s, raw, source: source)
        if let check = s.check, let problem = check(v) {
            throw .usage("\(origin(of: s, source: source)) \(problem)")
        }
        return v
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
