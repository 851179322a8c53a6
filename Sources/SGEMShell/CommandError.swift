/// A command's failure, with the exit code it maps to: 2 for usage errors, 1 for failures.
public struct CommandError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable {
        public let rawValue: String
        public static let usage = Code(rawValue: "usage")
        public static let failure = Code(rawValue: "failure")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The command line was wrong: unknown verb, missing or malformed argument.
    public static func usage(_ message: String) -> CommandError { CommandError(.usage, message) }
    /// The command was well-formed but could not be carried out.
    public static func failure(_ message: String) -> CommandError { CommandError(.failure, message) }

    public var exitCode: Int32 { code == .usage ? 2 : 1 }
    public var description: String { message }
}
