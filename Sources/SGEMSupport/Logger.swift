#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Severity of a log line, lowest first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical

    public var name: String {
        switch self {
        case .trace: "trace"
        case .debug: "debug"
        case .info: "info"
        case .notice: "notice"
        case .warning: "warning"
        case .error: "error"
        case .critical: "critical"
        }
    }

    public init?(name: String) {
        guard let level = LogLevel.allCases.first(where: { $0.name == name.lowercased() }) else { return nil }
        self = level
    }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where log lines go. The default writes each line to stderr in one `write(2)`.
public protocol LogSink: Sendable {
    func write(line: String)
}

/// Writes whole lines to standard error.
public struct StandardErrorSink: LogSink {
    public init() {}
    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(2, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
    }
}

/// Collects lines in memory; used by tests to assert on what was logged.
public final class MemorySink: LogSink {
    private let storage = Mutex<[String]>([])
    public init() {}
    public func write(line: String) { storage.withLock { $0.append(line) } }
    public var lines: [String] { storage.withLock { $0 } }
}

/// Process-wide logging settings: the minimum level and the sink. Set once at start-up.
public enum LogSettings {
    private static let state = Mutex<(level: LogLevel, sink: any LogSink)>((.info, StandardErrorSink()))

    public static var level: LogLevel {
        get { state.withLock { $0.level } }
        set { state.withLock { $0.level = newValue } }
    }

    public static var sink: any LogSink {
        get { state.withLock { $0.sink } }
        set { state.withLock { $0.sink = newValue } }
    }

    static func snapshot() -> (LogLevel, any LogSink) { state.withLock { ($0.level, $0.sink) } }
}

/// A structured logger: a constant message plus facts as metadata, written as one logfmt line
/// (`ts=… level=info module=http msg="request done" request.id=…`).
public struct Logger: Sendable {
    public let label: String
    public private(set) var metadata: [(String, String)]
    /// This logger's own sink and minimum level; nil uses the process-wide `LogSettings`.
    let sink: (any LogSink)?
    let minimumLevel: LogLevel?

    public init(label: String, metadata: [(String, String)] = [], sink: (any LogSink)? = nil, level: LogLevel? = nil) {
        self.label = label
        self.metadata = metadata
        self.sink = sink
        self.minimumLevel = level
    }

    /// A copy of this logger that adds `value` under `key` to every line.
    public func with(_ key: String, _ value: String) -> Logger {
        var copy = self
        copy.metadata.append((key, value))
        return copy
    }

    public func trace(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.trace, message(), facts) }
    public func debug(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.debug, message(), facts) }
    public func info(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.info, message(), facts) }
    public func notice(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.notice, message(), facts) }
    public func warning(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.warning, message(), facts) }
    public func error(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.error, message(), facts) }
    public func critical(_ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) { log(.critical, message(), facts) }

    public func isEnabled(_ level: LogLevel) -> Bool { level >= (minimumLevel ?? LogSettings.level) }

    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ facts: KeyValuePairs<String, String> = [:]) {
        let (globalMinimum, globalSink) = LogSettings.snapshot()
        guard level >= (minimumLevel ?? globalMinimum) else { return }
        let sink = self.sink ?? globalSink
        var line = "ts=\(Timestamp.now().rfc3339(fractional: true)) level=\(level.name) module=\(Logger.quoted(label)) msg=\(Logger.quoted(message()))"
        for (key, value) in metadata { line += " \(key)=\(Logger.quoted(value))" }
        for (key, value) in facts { line += " \(key)=\(Logger.quoted(value))" }
        sink.write(line: line)
    }

    /// logfmt quoting: bare when safe, otherwise in double quotes with escapes; control characters
    /// are escaped so one event is always one line.
    static func quoted(_ value: String) -> String {
        var needsQuotes = value.isEmpty
        for scalar in value.unicodeScalars where scalar == " " || scalar == "=" || scalar == "\"" || scalar.value < 0x20 || scalar == "\\" || scalar.value == 0x7F {
            needsQuotes = true
            break
        }
        guard needsQuotes else { return value }
        var out = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u" + String(scalar.value, radix: 16).leftPadded(to: 4)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
