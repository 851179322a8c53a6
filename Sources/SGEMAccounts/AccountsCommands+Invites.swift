import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMSupport

/// `admin invite create | list | revoke`: invitation links from the command line, on the
/// database directly, with the same limits and audit entries as the API.
extension AccountsCommands {
    func registerInvites(_ commands: inout CommandRegistry) {
        let verbs = inviteVerbs()
        let overview = verbs.overview()
        commands.register(Command("invite", summary: "create, list and revoke invitation links (people sign up with them)",
                                  usage: "create | list | revoke (run 'invite VERB --help')\n\nverbs:\n\(overview)",
                                  positionals: 0...1000, passThrough: true) { args, ctx in
            guard !args.positionals.isEmpty else {
                throw CommandError.usage("missing invite verb: create, list or revoke (see 'invite --help')")
            }
            try await verbs.run(args.positionals, context: ctx, prefix: "sgem-server admin invite")
        })
    }

    func inviteVerbs() -> CommandRegistry {
        var verbs = CommandRegistry(noun: "invite verb", helpHint: "invite --help")
        verbs.register(Command("create", summary: "create an invitation link and print it (it is shown this once)",
                               usage: "[--role admin|employee] [--days N] [--uses N] [--note T] [--base-url URL]",
                               options: [.value("role", "ROLE", "the role of accounts made with it: employee (default) or admin"),
                                         .value("days", "N", "days the link works: 1 to 30 (default 7)"),
                                         .value("uses", "N", "accounts the link can make: 1 to 500 (default 1)"),
                                         .value("note", "T", "a note for admins (who it is for): at most 200 characters"),
                                         .value("base-url", "URL", "the address people open the console at, e.g. https://sgem.example.com "
                                                + "(default: from --host and --port)")]) { args, ctx in
            var wanted = InviteRequest()
            if let raw = args.value("role") {
                guard let role = UserRole(rawValue: raw) else { throw CommandError.usage("--role " + InviteRules.roleProblem) }
                wanted.role = role
            }
            if let raw = args.value("days") {
                guard let n = Int(raw), InviteRules.days.contains(n) else { throw CommandError.usage("--days " + InviteRules.dayProblem) }
                wanted.days = n
            }
            if let raw = args.value("uses") {
                guard let n = Int(raw), InviteRules.uses.contains(n) else { throw CommandError.usage("--uses " + InviteRules.useProblem) }
                wanted.maxUses = n
            }
            if let raw = args.value("note") {
                switch InviteRules.note(raw) {
                case let .success(note): wanted.note = note
                case let .failure(problem): throw CommandError.usage("--note " + problem.message)
                }
            }
            let (origin, guessed) = try linkOrigin(args.value("base-url"))
            try await withService { service in
                let (invite, token) = try await service.createInvite(wanted, actor: .commandLine)
                ctx.io.print(LinkOrigin.inviteURL(origin: origin, token: token))
                ctx.io.print("invite \(invite.id): \(invite.role == .admin ? "an admin" : "an employee") account, "
                             + "\(invite.maxUses) use\(invite.maxUses == 1 ? "" : "s"), until \(invite.expiresAt.rfc3339())")
                if guessed {
                    ctx.io.print("the link's address comes from --host and --port; if people reach the console elsewhere, "
                                 + "revoke it and pass --base-url")
                }
            }
        })
        verbs.register(Command("list", summary: "list invitation links that still work (with --all, every one), newest first",
                               usage: "[--all] [--json]",
                               options: [.flag("all", "also expired, used-up and revoked ones"), .flag("json", "print JSON")]) { args, ctx in
            try await withService { service in
                let invites = try await service.invites(all: args.has("all"))
                let now = service.clock()
                if args.has("json") {
                    ctx.io.print(try OrderedJSONEncoder.text(InviteListView(items: invites.map { $0.view(at: now) })))
                    return
                }
                let rows = [["ID", "ROLE", "USES", "EXPIRES", "STATUS", "NOTE"]] + invites.map {
                    [String($0.id), $0.role.rawValue, "\($0.uses)/\($0.maxUses)", $0.expiresAt.rfc3339(), $0.status(at: now), $0.note ?? ""]
                }
                let widths = (0..<6).map { c in rows.map { $0[c].count }.max() ?? 0 }
                for row in rows {
                    ctx.io.print(row.enumerated().map { c, cell in c == 5 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count) }
                        .joined(separator: "  "))
                }
                ctx.io.print("\(invites.count) invitation\(invites.count == 1 ? "" : "s")")
            }
        })
        verbs.register(Command("revoke", summary: "revoke an invitation link: it stops working at once", usage: "ID",
                               positionals: 1...1) { args, ctx in
            guard let id = Int64(args.positionals[0]), id > 0 else { throw CommandError.usage("the invitation id must be a positive whole number") }
            try await withService { service in
                do {
                    try await service.revokeInvite(id: id, actor: .commandLine)
                } catch AccountsError.noSuchInvitation {
                    throw CommandError.failure("no invitation with id \(id)")
                }
                ctx.io.print("revoked invitation \(id)")
            }
        })
        return verbs
    }

    /// `http(s)://HOST[:PORT]` from `--base-url`, else from the configured host and port (this
    /// machine's name when the server listens on every address); whether it was guessed.
    func linkOrigin(_ baseURL: String?) throws -> (String, Bool) {
        if let baseURL {
            var rest = Substring(baseURL.trimmingWhitespace())
            let scheme: String
            if rest.lowercased().hasPrefix("https://") { scheme = "https"; rest = rest.dropFirst(8) }
            else if rest.lowercased().hasPrefix("http://") { scheme = "http"; rest = rest.dropFirst(7) }
            else { throw CommandError.usage("--base-url must start with http:// or https://") }
            while rest.hasSuffix("/") { rest = rest.dropLast() }
            guard let authority = LinkOrigin.authority(String(rest)) else {
                throw CommandError.usage("--base-url must be http(s)://HOST or http(s)://HOST:PORT, without a path")
            }
            return (scheme + "://" + authority, false)
        }
        let configuration = context.configuration
        let host = ServerAddress.linkHost(configuration.string("host") ?? "0.0.0.0")
        let scheme = configuration.string("tls-cert") == nil ? "http" : "https"
        let port = configuration.int("port")
        let origin = "\(scheme)://\(host)" + ((scheme == "http" && port == 80) || (scheme == "https" && port == 443) ? "" : ":\(port)")
        guard LinkOrigin.authority(String(origin.dropFirst(scheme.count + 3))) != nil else {
            throw CommandError.usage("cannot make a link from --host \(host); pass --base-url")
        }
        return (origin, true)
    }
}
