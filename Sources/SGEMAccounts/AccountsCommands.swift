import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The user admin verbs: `create-user`, `list-users`, `set-role`, `deactivate`, `activate`,
/// `reset-password`, `invite`. They run the same operations as the API (last-admin rule, session
/// revocation, audit log), on the database directly, so they work while the server runs.
struct AccountsCommands: Sendable {
    let context: CommandModuleContext

    func register(_ commands: inout CommandRegistry) {
        let passwordOptions: [OptionSpec] = [
            .flag("password-stdin", "read the password from one line of standard input"),
            .flag("random-password", "generate a password and print it once"),
        ]
        commands.register(Command("create-user", summary: "create a user (an admin with --role admin)",
                                  usage: "--username U --email E [--name N] [--role admin|employee] [--language L] (--password-stdin | --random-password)",
                                  options: [.value("username", "U", "login name: 3-32 of a-z 0-9 . _ -"),
                                            .value("email", "E", "email address"),
                                            .value("name", "N", "display name (default: the username)"),
                                            .value("role", "ROLE", "admin or employee (default employee)"),
                                            .value("language", "L", "ISO 639-1 code (default: the browser's at the first login, else the company's)")] + passwordOptions) { args, ctx in
            let rawUsername = try args.require("username")
            guard let username = AccountRules.username(rawUsername) else {
                throw CommandError.usage("--username must be 3 to 32 of a-z, 0-9, '.', '_' and '-'")
            }
            guard let email = AccountRules.email(try args.require("email")) else { throw CommandError.usage("--email must be an email address") }
            let name = (args.value("name") ?? username).trimmingWhitespace()
            guard !name.isEmpty, name.count <= 100 else { throw CommandError.usage("--name must be 1 to 100 characters") }
            let language: AccountLanguage
            if let given = args.value("language") {
                guard AccountRules.isLanguage(given) else { throw CommandError.usage("--language " + AccountRules.languageProblem) }
                language = AccountLanguage(code: given, chosen: true)
            } else {
                // None of its own: the company's default until the person's first login in the console.
                let code = try await context.services.resolve((any CompanySettingsProvider).self)?.current().defaultLanguage ?? "en"
                language = AccountLanguage(code: code, chosen: false)
            }
            let roleName = args.value("role") ?? "employee"
            guard let role = UserRole(rawValue: roleName) else { throw CommandError.usage("--role must be admin or employee") }
            let (password, generated) = try readPassword(args, ctx)
            try await withService { service in
                do {
                    try await service.checkAvailable(username: username, email: email)
                    let hash = try await service.hasher.hash(password, for: PasswordHasher.commandLineClient)
                    let user = try await service.create(username: username, email: email, displayName: name, role: role, language: language,
                                                        passwordHash: hash, mustChangePassword: generated, event: "user.create",
                                                        actor: .commandLine)
                    ctx.io.print("created \(role.rawValue) '\(user.username)' (id \(user.id))")
                    if generated {
                        ctx.io.print("password: \(password)")
                        ctx.io.print("they choose their own at the first login")
                    }
                } catch let error as AccountsError {
                    throw CommandError.failure(error.message)
                }
            }
        })
        commands.register(Command("list-users", summary: "list every user", usage: "[--json]",
                                  options: [.flag("json", "print JSON")]) { args, ctx in
            try await withService { service in
                let (users, _, total, active) = try await service.list(query: "", status: .all, limit: 1_000_000)
                if args.has("json") {
                    ctx.io.print(JSONValue.object([("items", .array(users.map { u in
                        .object([("id", .number(Double(u.id))), ("username", .string(u.username)), ("displayName", .string(u.displayName)),
                                 ("email", .string(u.email)), ("role", .string(u.role.rawValue)), ("active", .bool(u.active)),
                                 ("createdAt", .string(u.createdAt.rfc3339())),
                                 ("lastLoginAt", u.lastLoginAt.map { .string($0.rfc3339()) } ?? .null)])
                    })), ("total", .number(Double(total))), ("active", .number(Double(active)))]).serialized())
                    return
                }
                let rows = [["ID", "USERNAME", "ROLE", "ACTIVE", "EMAIL", "NAME"]] + users.map {
                    [String($0.id), $0.username, $0.role.rawValue, $0.active ? "yes" : "no", $0.email, $0.displayName]
                }
                let widths = (0..<6).map { c in rows.map { $0[c].count }.max() ?? 0 }
                for row in rows {
                    ctx.io.print(row.enumerated().map { c, cell in c == 5 ? cell : cell + String(repeating: " ", count: widths[c] - cell.count) }
                        .joined(separator: "  "))
                }
                ctx.io.print("\(total) user\(total == 1 ? "" : "s"), \(active) active")
            }
        })
        commands.register(Command("set-role", summary: "make a user an admin or an employee", usage: "USER admin|employee",
                                  positionals: 2...2) { args, ctx in
            guard let role = UserRole(rawValue: args.positionals[1]) else { throw CommandError.usage("the role must be admin or employee") }
            try await change(args.positionals[0], role: role, active: nil, ctx) { "'\($0)' is now \(role == .admin ? "an admin" : "an employee")" }
        })
        commands.register(Command("deactivate", summary: "deactivate a user and end their sessions", usage: "USER",
                                  positionals: 1...1) { args, ctx in
            try await change(args.positionals[0], role: nil, active: false, ctx) { "deactivated '\($0)'; their sessions have ended" }
        })
        commands.register(Command("activate", summary: "reactivate a user", usage: "USER", positionals: 1...1) { args, ctx in
            try await change(args.positionals[0], role: nil, active: true, ctx) { "activated '\($0)'" }
        })
        commands.register(Command("reset-password", summary: "set a temporary password (replaced at the next login) and end the user's sessions",
                                  usage: "USER (--password-stdin | --random-password)", options: passwordOptions, positionals: 1...1) { args, ctx in
            let (password, generated) = try readPassword(args, ctx)
            try await withService { service in
                let user = try await find(args.positionals[0], service)
                let hash = try await service.hasher.hash(password, for: PasswordHasher.commandLineClient)
                // A reset password, typed or generated, is not the person's own (the contract's "reset").
                try await service.setPassword(userID: user.id, hash: hash, mustChange: true, keepSession: nil, event: "password.reset",
                                              actor: .commandLine)
                ctx.io.print("password of '\(user.username)' reset; their sessions have ended; they choose their own at the next login")
                if generated { ctx.io.print("password: \(password)") }
            }
        })
        registerInvites(&commands)
    }

    /// The password from `--password-stdin` or `--random-password` (exactly one of them), and
    /// whether it was generated.
    func readPassword(_ args: ParsedArguments, _ ctx: CommandContext) throws -> (String, Bool) {
        switch (args.has("password-stdin"), args.has("random-password")) {
        case (true, false):
            guard let line = ctx.io.readLine() else { throw CommandError.failure("no password on standard input") }
            if let problem = AccountRules.passwordProblem(line) { throw CommandError.failure("the password \(problem)") }
            return (line, false)
        case (false, true):
            return (AccountRules.generatedPassword(), true)
        case (true, true):
            throw CommandError.usage("use either --password-stdin or --random-password, not both")
        case (false, false):
            throw CommandError.usage("choose --password-stdin or --random-password")
        }
    }

    /// Runs `body` with an account service on the command's store; one hashing thread is enough.
    func withService(_ body: (AccountService) async throws -> Void) async throws {
        let store = try await context.openStore()
        let hasher = PasswordHasher(logN: context.configuration.int(AccountsModule.hashLogN), threads: 1)
        defer { hasher.shutdown() }
        let sessions = SessionManager(store: store, idleHours: context.configuration.int(AccountsModule.sessionIdleHours),
                                      maxDays: context.configuration.int(AccountsModule.sessionMaxDays), logger: Logger(label: "accounts"))
        // The journal tells the server's realtime hubs (another process) which streams to close.
        try await body(AccountService(store: store, hasher: hasher, sessions: sessions,
                                      journal: context.services.resolve((any EventJournal).self)))
    }

    /// The user named by username or email; a one-line failure when there is none.
    func find(_ name: String, _ service: AccountService) async throws -> UserRecord {
        guard let (user, _) = try await service.user(login: name) else { throw CommandError.failure("user '\(name)' not found") }
        return user
    }

    func change(_ name: String, role: UserRole?, active: Bool?, _ ctx: CommandContext, done: (String) -> String) async throws {
        try await withService { service in
            let user = try await find(name, service)
            do {
                _ = try await service.update(userID: user.id, changes: ProfileChanges(), role: role, active: active, actor: .commandLine)
            } catch AccountsError.lastAdmin {
                throw CommandError.failure("refused: '\(user.username)' is the last active admin")
            } catch let error as AccountsError {
                throw CommandError.failure(error.message)
            }
            ctx.io.print(done(user.username))
        }
    }
}
