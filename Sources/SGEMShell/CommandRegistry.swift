/// Typed values a command can look up in its context (the store, the configuration, …).
public protocol CommandContextKey { associatedtype Value: Sendable }

/// What a running command gets: its I/O and the values the application put in.
public struct CommandContext: Sendable {
    public let io: any CommandIO
    private var values: [ObjectIdentifier: any Sendable] = [:]

    public init(io: any CommandIO) { self.io = io }

    public subscript<K: CommandContextKey>(key: K.Type) -> K.Value? {
        get { values[ObjectIdentifier(key)] as? K.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

/// One command: its name, help text, options and what it does.
public struct Command: Sendable {
    public typealias Run = @Sendable (ParsedArguments, CommandContext) async throws -> Void

    public let name: String
    public let summary: String
    public let usage: String
    public let options: [OptionSpec]
    public let positionals: ClosedRange<Int>
    /// Hands every word after the name to `run` unparsed (as positionals): for `admin`, whose
    /// verbs parse their own options.
    public let passThrough: Bool
    public let run: Run

    /// - Parameters:
    ///   - usage: the synopsis after the command's name, e.g. `USERNAME [--json]`.
    ///   - positionals: how many positional arguments the command takes.
    public init(_ name: String, summary: String, usage: String = "", options: [OptionSpec] = [],
                positionals: ClosedRange<Int> = 0...0, passThrough: Bool = false, run: @escaping Run) {
        self.passThrough = passThrough
        self.name = name
        self.summary = summary
        self.usage = usage
        self.options = options
        self.positionals = positionals
        self.run = run
    }

    /// The `--help` text.
    public func help(prefix: String) -> String {
        var text = "usage: \(prefix) \(name)\(usage.isEmpty ? "" : " " + usage)\n\n\(summary)\n"
        let all = options + [.flag("help", "show this help")]
        text += "\noptions:\n"
        let width = all.map { "--\($0.name)\($0.valueName.map { " " + $0 } ?? "")".count }.max() ?? 0
        for o in all {
            let left = "--\(o.name)\(o.valueName.map { " " + $0 } ?? "")"
            text += "  \(left)\(String(repeating: " ", count: width - left.count + 2))\(o.help)\n"
        }
        return text
    }

    /// Parses `arguments`, prints help for `--help`, checks the positional count and runs.
    public func invoke(_ arguments: [String], context: CommandContext, prefix: String) async throws {
        let helpAsked = passThrough ? ["--help", "-h"].contains(arguments.first ?? "") : (arguments.contains("--help") || arguments.contains("-h"))
        if helpAsked {
            context.io.write(help(prefix: prefix))
            return
        }
        let parsed = passThrough ? try ParsedArguments(["--"] + arguments, specs: []) : try ParsedArguments(arguments, specs: options)
        guard positionals.contains(parsed.positionals.count) else {
            let expected = positionals.lowerBound == positionals.upperBound
                ? "\(positionals.lowerBound)" : "\(positionals.lowerBound) to \(positionals.upperBound)"
            throw CommandError.usage("'\(name)' takes \(expected) argument\(positionals.upperBound == 1 ? "" : "s"), got \(parsed.positionals.count) (see '\(prefix) \(name) --help')")
        }
        try await run(parsed, context)
    }
}

/// The admin verbs modules contribute; `sgem-server admin VERB` and the `sgem>` shell use it.
public struct CommandRegistry: Sendable {
    public private(set) var commands: [Command] = []
    /// How errors name a command ("admin command") and where they point for help.
    let noun: String
    let helpHint: String

    public init(noun: String = "admin command", helpHint: String = "help") {
        self.noun = noun
        self.helpHint = helpHint
    }

    /// Adds a verb. Names are unique: a second registration of the same name is a programming
    /// error in the module list and stops start-up.
    public mutating func register(_ command: Command) {
        precondition(!commands.contains(where: { $0.name == command.name }), "admin command '\(command.name)' registered twice")
        precondition(!["help", "exit", "quit", "shell"].contains(command.name), "'\(command.name)' is reserved")
        commands.append(command)
    }

    public func command(named name: String) -> Command? { commands.first { $0.name == name } }

    /// The sorted list of verbs with their summaries.
    public func overview() -> String {
        let sorted = commands.sorted { $0.name < $1.name }
        let width = sorted.map(\.name.count).max() ?? 0
        return sorted.map { "  \($0.name)\(String(repeating: " ", count: width - $0.name.count + 2))\($0.summary)" }.joined(separator: "\n")
    }

    /// Runs one verb with its arguments.
    public func run(_ words: [String], context: CommandContext, prefix: String) async throws {
        guard let verb = words.first else { throw CommandError.usage("missing \(noun) (try '\(helpHint)')") }
        guard let command = command(named: verb) else {
            throw CommandError.usage("unknown \(noun) '\(verb)' (try '\(helpHint)')")
        }
        try await command.invoke(Array(words.dropFirst()), context: context, prefix: prefix)
    }
}
