#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Severity of a log line, lowest first.
public enum LogLevel: Int, Sendable, Comparable, CaseIterable {
    case trace, debug, info, notice, warning, error, critical

    public var name: String { staticName.description }

    /// The name as a `StaticString`, which a `LogLine` copies without looking into a String.
    var staticName: StaticString {
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

/// Where log lines go. The process default is `BufferedLogSink.standardError`: callers hand a
/// line over and return; one writer thread writes to stderr.
public protocol LogSink: Sendable {
    /// Takes one line, without its newline.
    func write(line: String)
    /// Takes one line as UTF-8 bytes, without its newline; sinks that store bytes avoid a String.
    func write(bytes: UnsafeRawBufferPointer)
    /// Waits up to `timeoutMilliseconds` for lines taken so far to be written; true when they were.
    func flush(timeoutMilliseconds: Int) -> Bool
}

extension LogSink {
    /// Decodes the bytes and calls `write(line:)`.
    public func write(bytes: UnsafeRawBufferPointer) { write(line: String(decoding: bytes, as: UTF8.self)) }
    /// Nothing is buffered: done.
    public func flush(timeoutMilliseconds: Int) -> Bool { true }
}

/// Writes whole lines to standard error synchronously, on the caller's thread. Blocks when
/// stderr does; the default `BufferedLogSink.standardError` does not.
public struct StandardErrorSink: LogSink {
    public init() {}
    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        bytes.withUnsafeBytes { _ = BufferedLogSink.writeFully(2, $0) }
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
    // The level is read on every log call: an atomic, not a lock.
    private static let minimum = Atomic<Int>(LogLevel.info.rawValue)
    private static let current = Mutex<any LogSink>(BufferedLogSink.standardError)

    /// Lines below this level are skipped (loggers without their own level).
    public static var level: LogLevel {
        get { LogLevel(rawValue: minimum.load(ordering: .relaxed)) ?? .info }
        set { minimum.store(newValue.rawValue, ordering: .relaxed) }
    }

    /// Where loggers without their own sink write.
    public static var sink: any LogSink {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// Waits up to `timeoutMilliseconds` for the lines logged so far to reach the sink's
    /// destination; true when they did. Call before exiting: a buffered line is lost otherwise.
    @discardableResult
    public static func flush(timeoutMilliseconds: Int = 2000) -> Bool {
        sink.flush(timeoutMilliseconds: timeoutMilliseconds)
    }
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
        log(level, message()) { line in
            for (key, value) in facts { line.append(field: key, value) }
        }
    }

    /// Logs one line whose facts `addFacts` appends (typed, without a String per number): the
    /// cheap form for hot paths such as the access log.
    public func log(_ level: LogLevel, _ message: @autoclosure () -> String, facts addFacts: (inout LogLine) -> Void) {
        guard isEnabled(level) else { return }
        let sink = self.sink ?? LogSettings.sink
        LogLine.withLine(level: level, label: label, message: message()) { line in
            for (key, value) in metadata { line.append(field: key, value) }
            addFacts(&line)
            line.withBytes { sink.write(bytes: $0) }
        }
    }

    /// logfmt quoting: bare when safe, otherwise in double quotes with escapes; control characters
    /// are escaped so one event is always one line.
    static func quoted(_ value: String) -> String {
        LogLine.withEmptyLine { line in
            line.appendValue(value)
            return line.withBytes { String(decoding: $0, as: UTF8.self) }
        }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
