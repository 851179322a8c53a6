#if canImport(Glibc)
import Glibc
#endif
import CSQLite
import COpenSSL
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport

/// The command line: `serve` (the default), `migrate`, `backup`, `restore`, `check`, `version`
/// and `admin …`. Every command takes the server settings as flags too.
public enum Application {
    static let name = "sgem-server"

    /// Runs the command in `arguments` (without the program name) and returns the exit code:
    /// 0 success, 1 failure, 2 usage error. Errors are one line on stderr.
    /// - Parameter configureLogging: set the process-wide log level from the settings; in-process
    ///   callers (tests) that share the process with other work pass false.
    public static func main(_ arguments: [String], environment: [String: String], io: any CommandIO = StandardIO(),
                            configureLogging: Bool = true) async -> Int32 {
        do {
            let (settingsArgs, rest) = splitSettings(arguments)
            let flags = try ParsedArguments(settingsArgs, specs: settingsCatalogue.optionSpecs)
            let configuration = try Configuration(flags: flags, environment: environment, catalogue: settingsCatalogue)
            if configureLogging, let level = LogLevel(name: configuration.string("log-level") ?? "info") {
                LogSettings.level = level
                // One-shot commands speak through stdout and one error line; their routine log
                // lines (store opened/closed) would be noise unless asked for.
                let serving = rest.first == nil || rest.first == "serve" || rest.first?.hasPrefix("--") == true
                if !serving && configuration.sources["log-level"] == "default" { LogSettings.level = .warning }
            }
            let commands = topLevelCommands(configuration: configuration)

            guard let first = rest.first else {
                try await commands.run(["serve"], context: CommandContext(io: io), prefix: name)
                return 0
            }
            switch first {
            case "--help", "-h", "help":
                if rest.count > 1, let command = commands.command(named: rest[1]) {
                    io.write(command.help(prefix: name) + settingsHelp())
                } else {
                    io.write(overview(commands))
                }
                return 0
            case "--version":
                io.print("\(name) \(Version.current)")
                return 0
            default:
                var words = rest
                if first.hasPrefix("--") { words.insert("serve", at: 0) }
                try await commands.run(words, context: CommandContext(io: io), prefix: name)
                return 0
            }
        } catch let exit as ExitCode {
            return exit.code
        } catch {
            let (message, code) = AdminShell.describe(error)
            io.writeError("\(name): \(message)")
            return code
        }
    }

    /// Separates the server settings (`--data-dir D`, `--bench-module`, …) from the command's
    /// own words, so settings may appear anywhere on the line.
    static func splitSettings(_ arguments: [String]) -> ([String], [String]) {
        var settings: [String] = []
        var rest: [String] = []
        var i = 0
        while i < arguments.count {
            let arg = arguments[i]
            i += 1
            if arg == "--" { rest.append(contentsOf: arguments[(i - 1)...]); break }
            guard arg.hasPrefix("--") else { rest.append(arg); continue }
            let name = String(arg.dropFirst(2).prefix { $0 != "=" })
            guard let setting = settingsCatalogue.named(name) else { rest.append(arg); continue }
            settings.append(arg)
            if case .bool = setting.kind { continue }
            if !arg.contains("="), i < arguments.count {
                settings.append(arguments[i])
                i += 1
            }
        }
        return (settings, rest)
    }

    static func overview(_ commands: CommandRegistry) -> String {
        """
        \(name) \(Version.current): one binary for a small company's directory, holidays, notices and chat.

        usage: \(name) [COMMAND] [SETTINGS…]

        commands:
        \(commands.overview())

        Run '\(name) COMMAND --help' for a command's options, '\(name) admin help' for the admin verbs.
        \(settingsHelp())
        """
    }

    static func settingsHelp() -> String {
        var text = "\nsettings (flag, or SGEM_* environment variable, or key in the --config file):\n"
        let rows = settingsCatalogue.all.map { s -> (String, String) in
            let left = s.flag + (s.kind.isBool ? "" : " " + s.valueName)
            let def = s.defaultValue.map { " (default \($0))" } ?? ""
            return (left, "\(s.help)\(def); \(s.environmentVariable)")
        }
        let width = rows.map(\.0.count).max() ?? 0
        for (left, right) in rows {
            text += "  \(left)\(String(repeating: " ", count: width - left.count + 2))\(right)\n"
        }
        text += "\nexit codes: 0 success, 1 failure, 2 usage error\n"
        return text
    }

    /// The top-level commands; `admin` dispatches to the verbs modules registered.
    static func topLevelCommands(configuration: Configuration) -> CommandRegistry {
        var registry = CommandRegistry(noun: "command", helpHint: "\(name) --help")
        registry.register(Command("serve", summary: "run the server (the default command)") { _, ctx in
            try await Server.run(configuration: configuration, io: ctx.io)
        })
        registry.register(Command("migrate", summary: "apply pending database migrations and exit") { _, ctx in
            try makeDataDirectory(configuration)
            let store = try await openMigratedStore(configuration, report: { ctx.io.print("applied \($0)") })
            await store.close()
            ctx.io.print("database is up to date: \(configuration.databaseLocation)")
        })
        registry.register(Command("backup", summary: "write an online, consistent copy of the database (safe while the server runs)",
                                  usage: "--to FILE", options: [.value("to", "FILE", "where to write the backup (must not exist)")]) { args, ctx in
            let target = try args.require("to")
            guard access(target, F_OK) != 0 else { throw CommandError.failure("\(target) already exists; choose a new file") }
            let store = try await openExistingStore(configuration)
            do {
                try await store.backup(to: target)
            } catch {
                await store.close()
                throw CommandError.failure("backup failed: \(error)")
            }
            await store.close()
            ctx.io.print("backup written to \(target)")
            ctx.io.print("keep the secret key file \(configuration.secretKeyPath) beside it: the secrets in the backup open only with that key")
        })
        registry.register(Command("restore", summary: "replace the database with a backup (refused while a server runs)",
                                  usage: "--from FILE", options: [.value("from", "FILE", "the backup to restore")]) { args, ctx in
            let source = try args.require("from")
            guard access(source, R_OK) == 0 else { throw CommandError.failure("cannot read \(source)") }
            try makeDataDirectory(configuration)
            guard let lock = try DataDirectoryLock.acquire(configuration.lockPath) else {
                throw CommandError.failure("refused: a server is running on \(configuration.dataDirectory); stop it first")
            }
            do {
                try Store.restore(from: source, to: configuration.databasePath)
            } catch {
                throw CommandError.failure("restore failed: \(error)")
            }
            ctx.io.print("restored \(configuration.databasePath) from \(source)")
            let store = try await openExistingStore(configuration)
            let lost = try? await secretsToReenter(configuration, store: store)
            await store.close()
            _ = lock
            if let line = lostSecretsLine(lost ?? [], configuration) { ctx.io.print(line) }
        })
        registry.register(Command("check", summary: "check the database's integrity and pending migrations") { _, ctx in
            let store = try await openExistingStore(configuration)
            let problems: [String]
            let applied: [String]
            let lostSecrets: [String]
            do {
                problems = try await store.integrityCheck()
                applied = try await store.appliedMigrations()
                lostSecrets = try await secretsToReenter(configuration, store: store)
            } catch {
                await store.close()
                throw CommandError.failure("check failed: \(error)")
            }
            await store.close()
            let pending = allMigrations(configuration).ids.filter { !applied.contains($0) }
            if !problems.isEmpty {
                for p in problems.prefix(20) { ctx.io.print("problem: \(p)") }
                throw CommandError.failure("integrity check found \(problems.count) problem\(problems.count == 1 ? "" : "s") in \(configuration.databasePath)")
            }
            ctx.io.print("integrity ok: \(configuration.databasePath)")
            ctx.io.print("migrations: \(applied.count) applied, \(pending.count) pending")
            if let line = lostSecretsLine(lostSecrets, configuration) { ctx.io.print(line) }
        })
        registry.register(Command("version", summary: "print the version and the libraries it runs on") { _, ctx in
            let openssl = String(cString: OpenSSL_version(0))
            ctx.io.print("\(name) \(Version.current)")
            ctx.io.print("SQLite \(String(cString: sqlite3_libversion()))")
            ctx.io.print(openssl)
        })
        registry.register(Command("admin", summary: "run an admin verb, or 'admin shell' for the sgem> prompt",
                                  usage: "VERB [ARGS…] | shell | help", positionals: 0...1000, passThrough: true) { args, ctx in
            try await runAdmin(args.positionals, configuration: configuration, io: ctx.io)
        })
        return registry
    }

    /// `admin VERB …`, `admin shell` and `admin help`. Arguments after the verb go to the verb
    /// unparsed, so it sees its own options.
    static func runAdmin(_ words: [String], configuration: Configuration, io: any CommandIO) async throws {
        let lazy = LazyStore(configuration: configuration)
        let (_, registry) = try adminCommands(configuration, openStore: { try await lazy.get() },
                                              secrets: Secrets(keyFile: configuration.secretKeyPath))
        defer { Task { await lazy.close() } }
        let ctx = CommandContext(io: io)
        switch words.first {
        case nil, "help":
            if words.count > 1, let command = registry.command(named: words[1]) {
                io.write(command.help(prefix: "\(name) admin"))
            } else {
                io.print("usage: \(name) admin VERB [ARGS…]\n\nverbs:\n\(registry.overview())\n  shell  the sgem> prompt; reads a script from stdin when it is not a terminal\n\nRun '\(name) admin VERB --help' for a verb's options.")
            }
        case "shell":
            let code = await AdminShell(registry: registry).run(context: ctx)
            await lazy.close()
            if code != 0 { throw ExitCode(code: code) }
        default:
            do {
                try await registry.run(words, context: ctx, prefix: "\(name) admin")
            } catch {
                await lazy.close()
                throw error
            }
        }
        await lazy.close()
    }

    /// Every module's admin verbs, over `openStore` and `secrets`, and the services they offer.
    static func adminCommands(_ configuration: Configuration, openStore: @escaping @Sendable () async throws -> Store,
                              secrets: Secrets) throws -> (CommandModuleContext, CommandRegistry) {
        let ordered = try bootOrder(modules(configuration: configuration))
        let context = CommandModuleContext(configuration: configuration, openStore: openStore,
                                           declaredRuntimeSettings: ordered.flatMap(\.runtimeSettings), secrets: secrets)
        var registry = CommandRegistry()
        for module in ordered { module.registerCommands(&registry, context: context) }
        return (context, registry)
    }

    /// The stored secrets that do not open under the key file (`check` makes no key file).
    static func secretsToReenter(_ configuration: Configuration, store: Store) async throws -> [String] {
        let (context, _) = try adminCommands(configuration, openStore: { store },
                                             secrets: Secrets(keyFile: configuration.secretKeyPath, creating: false))
        guard let settings = context.services.resolve((any RuntimeSettings).self) else { return [] }
        return try await settings.views().filter(\.needsReentry).map(\.key)
    }

    /// What `check` and `restore` say about secrets that do not open; nil when there are none.
    static func lostSecretsLine(_ keys: [String], _ configuration: Configuration) -> String? {
        keys.isEmpty ? nil : "secrets: \(keys.joined(separator: ", ")) must be entered again (sealed under another key than \(configuration.secretKeyPath))"
    }

    static func allMigrations(_ configuration: Configuration) -> MigrationList {
        var list = MigrationList()
        let ordered = (try? bootOrder(modules(configuration: configuration))) ?? []
        for module in ordered { module.registerMigrations(&list) }
        return list
    }

    static func storeConfiguration(_ configuration: Configuration) -> StoreConfiguration {
        var c = StoreConfiguration()
        c.readers = configuration.int("store-readers")
        c.busyTimeoutMilliseconds = configuration.int("store-busy-timeout-ms")
        c.maxBatch = configuration.int("store-write-batch")
        return c
    }

    static func makeDataDirectory(_ configuration: Configuration) throws {
        guard makeDirectories(configuration.dataDirectory) else {
            throw CommandError.failure("cannot create data directory \(configuration.dataDirectory): \(String(cString: strerror(errno)))")
        }
    }

    /// Opens the database and applies pending migrations, creating it when there is none yet.
    /// A file that is not an sgem-server database, or fails SQLite's quick check, is refused.
    /// Only here (serve, migrate): `check` runs the full integrity check itself, and backups and
    /// admin verbs work on the database a server already checked at its start.
    static func openMigratedStore(_ configuration: Configuration, report: (String) -> Void = { _ in }) async throws -> Store {
        let store = try await openStore(configuration, creating: true)
        let place = configuration.databaseLocation.description
        if !configuration.databaseLocation.isPostgreSQL {
            let problems: [String]
            do {
                problems = try await store.quickCheck()
            } catch {
                await store.close()
                throw CommandError.failure("cannot read \(place): \(error)")
            }
            if let first = problems.first {
                await store.close()
                throw CommandError.failure("\(place) fails SQLite's quick check (\(first)); restore a backup with '\(name) restore --from FILE'")
            }
        }
        do {
            for id in try await store.migrate(allMigrations(configuration), refuseNewerSchema: true) { report(id) }
        } catch let error as StoreError where error.code == .schemaTooNew {
            await store.close()
            throw CommandError.failure(error.message)
        } catch {
            await store.close()
            throw CommandError.failure("migration failed: \(error)")
        }
        return store
    }

    /// Opens an existing database without creating one (backup, check, admin verbs).
    static func openExistingStore(_ configuration: Configuration) async throws -> Store {
        try await openStore(configuration, creating: false)
    }

    /// Opens the store after checking that the database is sgem-server's: a missing SQLite file
    /// (or a PostgreSQL database without tables) is used only when `creating`; anything else must
    /// be an sgem database. Nothing is created or changed on the way to a refusal.
    static func openStore(_ configuration: Configuration, creating: Bool) async throws -> Store {
        try refuseUnusableStore(configuration, creating: creating)
        let location = configuration.databaseLocation
        var storeConfiguration = storeConfiguration(configuration)
        storeConfiguration.createIfMissing = creating
        let store: Store
        do {
            store = try Store(location: location, configuration: storeConfiguration, logger: Logger(label: "store"))
        } catch {
            throw CommandError.failure("cannot open \(location): \(error)")
        }
        return store
    }

    /// Throws one line unless the configured database is sgem's, or new and `creating`.
    static func refuseUnusableStore(_ configuration: Configuration, creating: Bool) throws {
        switch configuration.databaseLocation {
        case .sqlite: try refuseUnusableFile(configuration, creating: creating)
        case .postgresql(let url): try refuseUnusableDatabase(url, configuration, creating: creating)
        }
    }

    /// Throws one line unless the PostgreSQL database (its schema the connection uses) is sgem's,
    /// or holds no tables and `creating`. Reads only.
    static func refuseUnusableDatabase(_ url: PostgresURL, _ configuration: Configuration, creating: Bool) throws {
        let kind: PostgresDatabaseKind
        do {
            kind = try Store.probe(url)
        } catch let error as StoreError {
            // libpq's reason already names the URL (password masked) and may span lines.
            throw CommandError.failure(error.message.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: " \t") }.joined(separator: " "))
        } catch {
            throw CommandError.failure("cannot connect to \(url): \(error)")
        }
        switch kind {
        case .empty:
            guard creating else {
                throw CommandError.failure("no sgem database at \(url) yet; create it with '\(name) migrate --database-url URL' or start the server")
            }
        case .foreign(let tables):
            throw CommandError.failure("\(url) holds \(tables) table\(tables == 1 ? "" : "s") of another program and no sgem schema; refusing to use it (choose an empty database)")
        case .sgem:
            break
        }
    }

    /// Throws one line naming the database file unless it is sgem's, or missing and `creating`.
    /// Reads the file only.
    static func refuseUnusableFile(_ configuration: Configuration, creating: Bool) throws {
        let path = configuration.databasePath
        let kind: DatabaseFileKind
        do {
            kind = try Store.probe(path)
        } catch {
            throw CommandError.failure("cannot read \(path): \(error)")
        }
        switch kind {
        case .missing:
            guard creating else {
                throw CommandError.failure("no database in \(configuration.dataDirectory) (looked for \(path)); create it with "
                    + "'\(name) migrate\(dataDirFlag(configuration))' or start the server")
            }
        case .empty:
            // Only a missing file means a fresh install; an empty one is a lost database (a failed
            // copy, a full disk), and starting a new company over it would hide that.
            throw CommandError.failure("\(path) is empty, not an sgem database; refusing to start a new company over it "
                + "(restore a backup with '\(name) restore --from FILE', or remove the file to start afresh)")
        case .notSQLite:
            throw CommandError.failure("\(path) is not an SQLite database; refusing to use it (move it away or choose another --data-dir)")
        case .foreign:
            throw CommandError.failure("\(path) is an SQLite database of another program; refusing to use it")
        case .sgem:
            break
        }
    }

    /// ` --data-dir D` when the data directory is not the default, for hints.
    static func dataDirFlag(_ configuration: Configuration) -> String {
        configuration.sources["data-dir"] == "default" || configuration.sources["data-dir"] == nil ? "" : " --data-dir \(configuration.dataDirectory)"
    }
}

/// Opens the store the first time an admin verb asks for it, migrated, and closes it at the end.
actor LazyStore {
    let configuration: Configuration
    var store: Store?

    init(configuration: Configuration) { self.configuration = configuration }

    /// The existing database with pending migrations applied; never creates one.
    func get() async throws -> Store {
        if let store { return store }
        let opened = try await Application.openExistingStore(configuration)
        do {
            _ = try await opened.migrate(Application.allMigrations(configuration), refuseNewerSchema: true)
        } catch {
            await opened.close()
            throw CommandError.failure("migration failed: \(error)")
        }
        store = opened
        return opened
    }

    func close() async {
        await store?.close()
        store = nil
    }
}

/// Ends a command with a specific exit code after its output has said why.
struct ExitCode: Error, CustomStringConvertible {
    let code: Int32
    var description: String { "exit \(code)" }
}

extension SettingKind {
    var isBool: Bool { if case .bool = self { true } else { false } }
}
