import SGEMSupport

/// The `sgem>` prompt: the admin verbs one line at a time, from a terminal or a script on stdin.
public struct AdminShell: Sendable {
    public let registry: CommandRegistry
    public let prefix: String

    public init(registry: CommandRegistry, prefix: String = "sgem-server admin") {
        self.registry = registry
        self.prefix = prefix
    }

    /// Runs until `exit`, `quit` or end of input. At a terminal an error is printed and the
    /// prompt returns; in a script the first failing line stops it, with that line's exit code.
    /// Returns the exit code for the process.
    public func run(context: CommandContext) async -> Int32 {
        let io = context.io
        var lineNumber = 0
        if io.isInteractive { io.print("sgem-server admin shell. Type 'help' for the commands, 'exit' to leave.") }
        while true {
            if io.isInteractive { io.write("sgem> ") }
            guard let line = io.readLine() else { break }
            lineNumber += 1
            let trimmed = line.trimmingWhitespace()
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            do {
                let words = try splitCommandLine(trimmed)
                switch words.first {
                case "exit", "quit": return 0
                case "help":
                    if words.count > 1, let command = registry.command(named: words[1]) {
                        io.write(command.help(prefix: ""))
                    } else {
                        io.print("commands:\n\(registry.overview())\n  help [COMMAND]  show the commands, or one command's options\n  exit            leave the shell")
                    }
                default:
                    try await registry.run(words, context: context, prefix: "")
                }
            } catch {
                let (message, code) = AdminShell.describe(error)
                if io.isInteractive {
                    io.writeError("error: \(message)")
                } else {
                    io.writeError("error: line \(lineNumber): \(message)")
                    return code
                }
            }
        }
        return 0
    }

    /// One line of text and an exit code for any error a command throws.
    public static func describe(_ error: any Error) -> (String, Int32) {
        if let e = error as? CommandError { return (e.message, e.exitCode) }
        return ("\(error)", 1)
    }
}

