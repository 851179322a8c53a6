#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Where a command writes its output and reads its input: the terminal, or memory in tests.
public protocol CommandIO: Sendable {
    /// Writes text to standard output (no newline added).
    func write(_ text: String)
    /// Writes one line to standard error.
    func writeError(_ line: String)
    /// Reads one line from standard input without its newline; nil at end of input.
    func readLine() -> String?
    /// True when standard input is a terminal (prompts are shown only then).
    var isInteractive: Bool { get }
}

extension CommandIO {
    /// Writes `line` and a newline to standard output.
    public func print(_ line: String = "") { write(line + "\n") }
}

/// The process's real standard streams.
public struct StandardIO: CommandIO {
    public init() {}

    public func write(_ text: String) { StandardIO.writeAll(1, text) }
    public func writeError(_ line: String) { StandardIO.writeAll(2, line + "\n") }
    public var isInteractive: Bool { isatty(0) == 1 }

    public func readLine() -> String? { Swift.readLine(strippingNewline: true) }

    static func writeAll(_ fd: Int32, _ text: String) {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 { if errno == EINTR { continue }; return }
                offset += n
            }
        }
    }
}

/// Captures output and serves scripted input; used by tests.
public final class MemoryIO: CommandIO {
    private struct State { var out = "", err: [String] = [], input: [String] }
    private let state: Mutex<State>
    public let isInteractive: Bool

    public init(input: [String] = [], interactive: Bool = false) {
        state = Mutex(State(input: input))
        isInteractive = interactive
    }

    public func write(_ text: String) { state.withLock { $0.out += text } }
    public func writeError(_ line: String) { state.withLock { $0.err.append(line) } }
    public func readLine() -> String? {
        state.withLock { $0.input.isEmpty ? nil : $0.input.removeFirst() }
    }
    public var output: String { state.withLock { $0.out } }
    public var errors: [String] { state.withLock { $0.err } }
}
