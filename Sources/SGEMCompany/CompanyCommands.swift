import SGEMContracts
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport

/// `admin company show|set` and `admin settings show|set KEY VALUE`: the same reads and the same
/// validated read-modify-write transactions as the API, on the database directly.
struct CompanyCommands: Sendable {
    let context: CommandModuleContext

    func register(_ commands: inout CommandRegistry) {
        let openStore = context.openStore
        let services = context.services
        // Changes from the command line are in the audit log too, marked as such.
        let trail: @Sendable () -> (any AuditTrail)? = { services.resolve((any AuditTrail).self) }
        // Other modules' verbs (create-user's default language) read the settings through this.
        context.services.register((any CompanySettingsProvider).self, StoredCompanySettings(openStore: openStore))

        var company = CommandRegistry(noun: "company verb", helpHint: "admin company --help")
        company.register(Command("show", summary: "print the company's information", usage: "[--json]",
                                 options: [.flag("json", "print JSON")]) { args, ctx in
            let profile = try await CompanyRepository(store: try await openStore()).profile()
            if args.has("json") { ctx.io.print(profile.json.serialized()); return }
            for name in CompanyProfile.fieldNames {
                let value = profile[name] ?? "-"
                ctx.io.print("\(name): \(value.replacingOccurrences(of: "\n", with: "\n  "))")
            }
        })
        let fieldOptions = CompanyProfile.fieldNames.map { OptionSpec.value($0, $0.uppercased(), "the company's \($0) (\"\" clears it)") }
        company.register(Command("set", summary: "change the company's information; options left out keep their value",
                                 usage: "[--name N] [--phone P] [--email E] [--website W] [--address A]", options: fieldOptions) { args, ctx in
            var fields: [String: JSONValue] = [:]
            for name in CompanyProfile.fieldNames { if let v = args.value(name) { fields[name] = .string(v) } }
            guard !fields.isEmpty else { throw CommandError.usage("give at least one of --name, --phone, --email, --website, --address") }
            let change = fields
            let repository = CompanyRepository(store: try await openStore())
            do {
                let audit = trail()
                _ = try await repository.updateProfile(audited: { try CompanyAudit.profile($0, $1, by: .commandLine, trail: audit, in: $2) }) {
                    try $0.applying(change)
                }
            } catch let error as CompanyError {
                throw CommandError.failure(CompanyCommands.describe(error, flags: true))
            }
            ctx.io.print("company information saved")
        })
        company.register(feedsCommand())
        commands.register(nested("company", summary: "show or change the company's information and feeds",
                                 usage: "show [--json] | set [--name N] [--phone P] [--email E] [--website W] [--address A] | feeds [set URL… | clear]",
                                 company))

        var settings = CommandRegistry(noun: "settings verb", helpHint: "admin settings --help")
        settings.register(Command("show", summary: "print the company settings", usage: "[--json]",
                                  options: [.flag("json", "print JSON")]) { args, ctx in
            let value = try await CompanyRepository(store: try await openStore()).current()
            if args.has("json") { ctx.io.print(value.json.serialized()); return }
            for (key, v) in value.json.objectValue ?? [] { ctx.io.print("\(key): \(CompanyCommands.plain(v))") }
        })
        settings.register(Command("set", summary: "change one setting; KEY is its API name, VALUE is checked like the API",
                                  usage: "KEY VALUE   (keys: \(SettingsChange.keys.joined(separator: ", ")); workingDays as 1,2,3,4,5; null or \"\" clears)",
                                  positionals: 2...2) { args, ctx in
            let key = args.positionals[0]
            guard let value = CompanyCommands.settingValue(key, args.positionals[1]) else {
                throw CommandError.usage("unknown setting '\(key)'; keys: \(SettingsChange.keys.joined(separator: ", "))")
            }
            let change = SettingsChange(fields: [key: value])
            let repository = CompanyRepository(store: try await openStore())
            do {
                let audit = trail()
                _ = try await repository.update(audited: { try CompanyAudit.settings($0, $1, by: .commandLine, trail: audit, in: $2) }) {
                    try change.applied(to: $0)
                }
            } catch let error as CompanyError {
                throw CommandError.failure(CompanyCommands.describe(error, flags: false))
            }
            let saved = try await repository.current().json[key] ?? .null
            ctx.io.print("\(key) = \(CompanyCommands.plain(saved))")
        })
        commands.register(nested("settings", summary: "show or change the company settings", usage: "show [--json] | set KEY VALUE", settings))
    }

    /// A verb whose first word picks one of `verbs` (`admin company show`).
    func nested(_ name: String, summary: String, usage: String, _ verbs: CommandRegistry) -> Command {
        Command(name, summary: summary, usage: usage, positionals: 0...100, passThrough: true) { args, ctx in
            try await verbs.run(args.positionals, context: ctx, prefix: "sgem-server admin \(name)")
        }
    }

    /// VALUE as the JSON the API would get for `key`; nil for an unknown key. A VALUE of the
    /// wrong type is passed on as a string, so the API's check names the problem.
    static func settingValue(_ key: String, _ raw: String) -> JSONValue? {
        let clears = raw.isEmpty || raw == "null"
        func number(_ s: String) -> JSONValue { Int(s.trimmingWhitespace()).map { .number(Double($0)) } ?? .string(s) }
        switch key {
        case "defaultAllowanceDays", "carryOverMaxDays": return number(raw)
        case "maxSimultaneousAbsences": return clears ? .null : number(raw)
        case "workingDays": return .array(raw.split(separator: ",", omittingEmptySubsequences: false).map { number(String($0)) })
        case "registrationDomain", "carryOverExpires", "pushContact": return clears ? .null : .string(raw)
        case "registration", "defaultLanguage", "timeZone": return .string(raw)
        default: return nil
        }
    }

    /// One line for a refused change: "invalid email: must be …; invalid …", fields in order.
    static func describe(_ error: CompanyError, flags: Bool) -> String {
        switch error {
        case let .invalid(fields):
            fields.sorted { $0.key < $1.key }.map { "invalid \(flags ? "--" : "")\($0.key): \($0.value)" }.joined(separator: "; ")
        }
    }

    static func plain(_ v: JSONValue) -> String {
        switch v {
        case .null: "null"
        case let .string(s): s
        case let .array(items): items.map(plain).joined(separator: ",")
        default: v.serialized()
        }
    }
}

/// The company settings read from the command's store when a verb asks for them.
struct StoredCompanySettings: CompanySettingsProvider {
    let openStore: @Sendable () async throws -> Store

    func current() async throws -> CompanySettingsValue { try await CompanyRepository(store: try await openStore()).current() }
}
