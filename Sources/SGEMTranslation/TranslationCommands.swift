import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// `admin translation show | set KEY VALUE | test`: the provider settings the Settings screen
/// and `PUT /admin/translation` change, on the database directly (a running server picks them
/// up within a second). The key is write-only here too.
struct TranslationCommands: Sendable {
    let context: CommandModuleContext

    /// The command line's names for the settings.
    static let keys: KeyValuePairs<String, String> = [
        "provider": TranslationDesk.providerKey, "url": TranslationDesk.urlKey,
        "api-key": TranslationDesk.apiKeyKey, "timeout-ms": TranslationDesk.timeoutKey,
    ]

    func register(_ commands: inout CommandRegistry) {
        let context = self.context
        var verbs = CommandRegistry(noun: "translation verb", helpHint: "admin translation --help")
        verbs.register(Command("show", summary: "print the translation provider's settings (never the key)", usage: "[--json]",
                               options: [.flag("json", "print JSON")]) { args, ctx in
            let desk = try await TranslationCommands.desk(context)
            let view = try await desk.settingsView()
            if args.has("json") { ctx.io.print(String(decoding: Response.json(view).body, as: UTF8.self)); return }
            ctx.io.print("provider:   \(view.provider)")
            ctx.io.print("url:        \(view.url.isEmpty ? "-" : view.url)")
            let keyState = view.apiKeyNeedsReentry ? "must be entered again (saved under another secret key)" : view.apiKeySet ? "set" : "not set"
            ctx.io.print("api-key:    \(keyState)")
            ctx.io.print("timeout-ms: \(view.timeoutMs)")
            if let problem = view.problem { ctx.io.print("note:       \(problem)") }
        })
        let names = TranslationCommands.keys.map(\.key).joined(separator: ", ")
        verbs.register(Command("set", summary: "change one setting; \"\" clears url or api-key; api-key - reads the key from standard input",
                               usage: "KEY VALUE   (keys: \(names); provider is libretranslate, deepl, yandex or none)",
                               positionals: 2...2) { args, ctx in
            let name = args.positionals[0]
            guard let key = TranslationCommands.keys.first(where: { $0.key == name })?.value else {
                throw CommandError.usage("unknown setting '\(name)'; keys: \(names)")
            }
            var value: String? = args.positionals[1]
            if name == "api-key", value == "-" {
                value = ctx.io.readLine()
                guard value != nil else { throw CommandError.failure("no key on standard input") }
            }
            value = value?.trimmingSpaces
            if value == "", name == "url" || name == "api-key" { value = nil }
            let desk = try await TranslationCommands.desk(context)
            let settings = desk.settings
            let audit = context.services.resolve((any AuditTrail).self)
            let entry = AuditRecord(event: "translation.settings", actorID: nil, ip: nil,
                                    detail: TranslationDesk.describe([(key, value)]) + " (command line)")
            let change = value
            do {
                try await desk.store.write { db in
                    try settings.set(key, to: change, in: db)
                    try audit?.record(entry, in: db)
                }
            } catch let error as RuntimeSettingError {
                throw CommandError.failure("\(name) \(error.message.split(separator: " ", maxSplits: 1).last.map(String.init) ?? error.message)")
            }
            ctx.io.print(name == "api-key" ? (value == nil ? "api-key removed" : "api-key saved") : "\(name) = \(value ?? "")")
        })
        verbs.register(Command("test", summary: "check the configured provider live: translate a short sentence and say what went wrong",
                               options: []) { _, ctx in
            let client = try HTTPClient(configuration: OutboundSettings.client(context.configuration))
            defer { client.shutdown() }
            let desk = try await TranslationCommands.desk(context, client: client)
            let (ok, message) = await desk.test()
            guard ok else { throw CommandError.failure(message) }
            ctx.io.print(message)
        })
        let all = verbs
        commands.register(Command("translation", summary: "show or change the translation provider, or test it",
                                  usage: "show [--json] | set KEY VALUE | test", positionals: 0...100, passThrough: true) { args, ctx in
            try await all.run(args.positionals, context: ctx, prefix: "sgem-server admin translation")
        })
    }

    /// A desk over the command line's store and the runtime settings the system module offers it.
    static func desk(_ context: CommandModuleContext, client: HTTPClient? = nil) async throws -> TranslationDesk {
        guard let settings = context.services.resolve((any RuntimeSettings).self) else {
            throw CommandError.failure("the runtime settings are not available")
        }
        return TranslationDesk(store: try await context.openStore(), settings: settings, client: client, logger: Logger(label: "translation"),
                               metrics: TranslationMetrics(MetricsRegistry()))
    }
}
