import Testing
@testable import SGEMShell

@Suite struct ArgumentTests {
    let specs: [OptionSpec] = [.value("to", "FILE", "target"), .flag("json", "json output")]

    @Test func parsesValuesFlagsAndPositionals() throws {
        let a = try ParsedArguments(["alice", "--to", "x.db", "--json", "--", "--not-an-option"], specs: specs)
        #expect(a.positionals == ["alice", "--not-an-option"])
        #expect(a.value("to") == "x.db")
        #expect(a.has("json"))
        let b = try ParsedArguments(["--to=y.db"], specs: specs)
        #expect(b.value("to") == "y.db")
        #expect(!b.has("json"))
    }

    @Test(arguments: [
        (["--nope"], "unknown option '--nope'"),
        (["--to"], "option '--to' needs a value (FILE)"),
        (["--json=1"], "option '--json' takes no value"),
        (["-x"], "unknown option '-x'"),
    ])
    func rejectsBadLines(_ args: [String], _ message: String) {
        #expect(throws: CommandError.usage(message)) { try ParsedArguments(args, specs: specs) }
    }

    @Test func requireAndIntRanges() throws {
        let a = try ParsedArguments(["--to", "5"], specs: specs)
        #expect(try a.require("to") == "5")
        #expect(throws: CommandError.self) { try ParsedArguments([], specs: specs).require("to") }
        #expect(try a.int("to", default: 1, in: 1...10) == 5)
        #expect(throws: CommandError.self) { try a.int("to", default: 1, in: 6...10) }
    }

    @Test(arguments: [
        ("create-user --username 'Ann Lee' --email a@b.c", ["create-user", "--username", "Ann Lee", "--email", "a@b.c"]),
        (#"say "a \"quoted\" word" plain\ space"#, ["say", #"a "quoted" word"#, "plain space"]),
        ("  spaced   out  ", ["spaced", "out"]),
        ("empty '' arg", ["empty", "", "arg"]),
    ])
    func splitsLikeAShell(_ line: String, _ words: [String]) throws {
        #expect(try splitCommandLine(line) == words)
    }

    @Test func unterminatedQuoteIsAUsageError() {
        #expect(throws: CommandError.usage("unterminated quote")) { try splitCommandLine("say 'oops") }
    }
}


@Suite struct RegistryAndShellTests {
    /// A registry with a verb that records its calls and one that fails.
    func registry(log: MemoryIO) -> CommandRegistry {
        var r = CommandRegistry()
        r.register(Command("greet", summary: "say hello", usage: "NAME [--loud]", options: [.flag("loud", "shout")], positionals: 1...1) { args, ctx in
            let text = "hello \(args.positionals[0])"
            ctx.io.print(args.has("loud") ? text.uppercased() : text)
        })
        r.register(Command("fail", summary: "always fails") { _, _ in throw CommandError.failure("it failed") })
        return r
    }

    @Test func runsVerbsAndChecksArity() async throws {
        let io = MemoryIO()
        let r = registry(log: io)
        try await r.run(["greet", "ann", "--loud"], context: CommandContext(io: io), prefix: "x")
        #expect(io.output == "HELLO ANN\n")
        await #expect(throws: CommandError.self) { try await r.run(["greet"], context: CommandContext(io: io), prefix: "x") }
        await #expect(throws: CommandError.usage("unknown admin command 'nope' (try 'help')")) {
            try await r.run(["nope"], context: CommandContext(io: io), prefix: "x")
        }
    }

    @Test func helpListsOptions() async throws {
        let io = MemoryIO()
        try await registry(log: io).run(["greet", "--help"], context: CommandContext(io: io), prefix: "sgem-server admin")
        #expect(io.output.contains("usage: sgem-server admin greet NAME [--loud]"))
        #expect(io.output.contains("--loud"))
        #expect(io.output.contains("--help"))
    }

    @Test func scriptStopsAtFirstFailureWithItsLine() async {
        let io = MemoryIO(input: ["# a comment", "greet ann", "", "fail", "greet never"])
        let code = await AdminShell(registry: registry(log: io)).run(context: CommandContext(io: io))
        #expect(code == 1)
        #expect(io.output == "hello ann\n")
        #expect(io.errors == ["error: line 4: it failed"])
    }

    @Test func usageErrorInScriptExitsTwo() async {
        let io = MemoryIO(input: ["greet"])
        let code = await AdminShell(registry: registry(log: io)).run(context: CommandContext(io: io))
        #expect(code == 2)
    }

    @Test func interactiveShellKeepsGoingAfterErrorsAndPrompts() async {
        let io = MemoryIO(input: ["fail", "help", "greet bo", "exit", "greet unreached"], interactive: true)
        let code = await AdminShell(registry: registry(log: io)).run(context: CommandContext(io: io))
        #expect(code == 0)
        #expect(io.errors == ["error: it failed"])
        #expect(io.output.contains("sgem> "))
        #expect(io.output.contains("greet  say hello"))
        #expect(io.output.contains("hello bo"))
        #expect(!io.output.contains("unreached"))
    }
}
