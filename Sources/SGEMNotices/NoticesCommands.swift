#if canImport(Glibc)
import Glibc
#endif
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport

/// `admin notices post | list | delete`: the board from the command line, on the database
/// directly (so it works while the server runs). A notice posted here has no author (the
/// operator) and records its `notice.created` event like one posted through the API.
struct NoticesCommands: Sendable {
    let context: CommandModuleContext

    /// Most bytes `--body-file` / `--body-stdin` read: a 20,000-character body in 4-byte UTF-8.
    static let maxBodyBytes = 4 * NoticeRules.maxBody

    func register(_ commands: inout CommandRegistry) {
        let verbs = subcommands()
        let overview = verbs.overview()
        commands.register(Command("notices", summary: "post, list and delete company notices",
                                  usage: "post | list | delete (run 'notices VERB --help')\n\nverbs:\n\(overview)",
                                  positionals: 0...1000, passThrough: true) { args, ctx in
            guard !args.positionals.isEmpty else {
                throw CommandError.usage("missing notices verb: post, list or delete (see 'notices --help')")
            }
            try await verbs.run(args.positionals, context: ctx, prefix: "sgem-server admin notices")
        })
    }

    func subcommands() -> CommandRegistry {
        var verbs = CommandRegistry(noun: "notices verb", helpHint: "notices --help")
        verbs.register(Command("post", summary: "post a company notice and print its id",
                               usage: "--title T (--body-file F | --body-stdin) [--pinned]",
                               options: [.value("title", "T", "the title: 1 to 200 characters, one line"),
                                         .value("body-file", "F", "read the body (plain text, UTF-8) from file F"),
                                         .flag("body-stdin", "read the body from standard input, to its end"),
                                         .flag("pinned", "pin the notice to the top of the board")]) { args, ctx in
            let title: String
            switch NoticeRules.title(try args.require("title")) {
            case let .success(t): title = t
            case let .failure(p): throw CommandError.usage("--title \(p.message)")
            }
            let text = try readBody(args, ctx)
            if case let .failure(p) = NoticeRules.body(text) { throw CommandError.failure("the body \(p.message)") }
            let board = try await makeBoard()
            let notice = try await board.post(title: title, body: text, pinned: args.has("pinned"), author: nil)
            ctx.io.print(String(notice.id))
        })
        verbs.register(Command("list", summary: "list company notices, pinned first, then newest", usage: "[--json]",
                               options: [.flag("json", "print JSON")]) { args, ctx in
            let notices = try await makeBoard().companyNotices(limit: 10_000)
            if args.has("json") {
                ctx.io.print(try OrderedJSONEncoder.text(NoticeListView(items: notices.map(NoticeView.init(listing:)))))
                return
            }
            let rows = [["ID", "PINNED", "READS", "CREATED", "TITLE"]] + notices.map {
                [String($0.id), $0.pinned ? "yes" : "no", String($0.readCount), $0.createdAt.rfc3339(), $0.title]
            }
            let widths = (0..<5).map { c in rows.map { $0[c].count }.max() ?? 0 }
            for row in rows {
                ctx.io.print(row.enumerated().map { c, cell in c == 4 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count) }
                    .joined(separator: "  "))
            }
            ctx.io.print("\(notices.count) notice\(notices.count == 1 ? "" : "s")")
        })
        verbs.register(Command("delete", summary: "delete a company notice and its read marks", usage: "ID", positionals: 1...1) { args, ctx in
            guard let id = Int64(args.positionals[0]), id > 0 else { throw CommandError.usage("the notice id must be a positive whole number") }
            do {
                try await makeBoard().delete(id)
            } catch NoticesError.noticeNotFound {
                throw CommandError.failure("no company notice with id \(id)")
            }
            ctx.io.print("deleted notice \(id)")
        })
        return verbs
    }

    /// The board on the command's store, with the journal the system module's verbs offer.
    func makeBoard() async throws -> NoticeBoard {
        guard let journal = context.services.resolve((any EventJournal).self) else {
            throw CommandError.failure("the event journal is not available (the system module is missing)")
        }
        return NoticeBoard(store: try await context.openStore(), journal: journal,
                           directory: context.services.resolve((any UserDirectory).self),
                           audit: context.services.resolve((any AuditTrail).self))
    }

    /// The body from exactly one of `--body-file` and `--body-stdin`, as UTF-8 text.
    func readBody(_ args: ParsedArguments, _ ctx: CommandContext) throws -> String {
        let bytes: [UInt8]
        switch (args.value("body-file"), args.has("body-stdin")) {
        case let (path?, false):
            guard let data = CommandFile.read(path, limit: NoticesCommands.maxBodyBytes + 1) else {
                throw CommandError.failure("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            bytes = data
        case (nil, true):
            var lines: [String] = []
            var size = 0
            while let line = ctx.io.readLine() {
                size += line.utf8.count + 1
                if size > NoticesCommands.maxBodyBytes + 1 { break }
                lines.append(line)
            }
            bytes = Array(lines.joined(separator: "\n").utf8)
        case (_?, true):
            throw CommandError.usage("use either --body-file or --body-stdin, not both")
        case (nil, false):
            throw CommandError.usage("choose --body-file F or --body-stdin")
        }
        guard bytes.count <= NoticesCommands.maxBodyBytes else {
            throw CommandError.failure("the body must be at most \(NoticeRules.maxBody) characters")
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw CommandError.failure("the body is not UTF-8 text") }
        return text
    }
}
