import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// The `company` module: the company's information (`/company`) and the company-wide settings
/// (holiday allowance, working days, registration, default language, time zone, absences,
/// carry-over).
public struct CompanyModule: Module {
    public let id: ModuleID = "company"

    public init() {}

    public var auditEvents: [String] { CompanyAudit.events }

    public func registerMigrations(_ migrations: inout MigrationList) {
        // One row; NULL columns mean "the default", so defaults can change in code.
        // PostgreSQL starts from the module's final schema (what 001 to 006 leave on SQLite:
        // the settings row, the profile row, the feeds), so its forms of 002 to 006 are empty.
        migrations.add("company.001_settings", sqlite: """
            CREATE TABLE company_settings (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                default_allowance_days INTEGER,
                working_days TEXT,
                registration TEXT,
                registration_domain TEXT,
                default_language TEXT,
                updated_at TEXT
            );
            INSERT INTO company_settings (id) VALUES (1);
            """, postgresql: CompanyRepository.postgresqlBaseline + FeedRepository.postgresqlBaseline)
        CompanyRepository.registerMigrations(&migrations)
        FeedRepository.registerMigrations(&migrations)
        // The contact push services are given (VAPID sub); NULL: none.
        migrations.add("company.006_push_contact", sqlite: """
            ALTER TABLE company_settings ADD COLUMN push_contact TEXT;
            """, postgresql: "")
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let repository = CompanyRepository(store: context.store)
        context.services.register((any CompanySettingsProvider).self, repository)
        context.services.register((any CompanyNameProvider).self, repository)
        let services = context.services
        // The outbound client is looked up per round: the system module publishes it, and the
        // company module does not depend on it (tests boot company without system).
        let fetcher = FeedFetcher(repository: FeedRepository(store: context.store),
                                  timeout: context.configuration.duration(CompanyModule.feedTimeout),
                                  logger: context.logger, client: { services.resolve(HTTPClient.self) },
                                  rounds: { services.resolve((any PeriodicRounds).self) })
        // Only this module can name the type: tests resolve it to run a round and wait for it.
        context.services.register(FeedFetcher.self, fetcher)
        return CompanyRuntime(repository: repository, feeds: fetcher.repository, fetcher: fetcher,
                              feedInterval: context.configuration.duration(CompanyModule.feedInterval),
                              registry: context.services, logger: context.logger)
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        CompanyCommands(context: context).register(&commands)
    }
}

/// The company module's routes and its feed fetcher.
struct CompanyRuntime: ModuleRuntime {
    let repository: CompanyRepository
    let feeds: FeedRepository
    let fetcher: FeedFetcher
    let feedInterval: Duration
    let registry: ServiceRegistry
    let logger: Logger

    var services: [any ModuleService] { [fetcher.service(every: feedInterval)] }

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let user = routes.group("", middleware: [RequireUser(services: registry)])
        let admin = routes.group("/admin", middleware: [RequireAdmin(services: registry)])
        let repository = self.repository
        let logger = self.logger
        let registry = self.registry
        user.get("/company", doc: RouteDoc(summary: "The company's name and contact information", tags: ["company"],
                                           responses: [ResponseDoc(status: 200, description: "The company", schema: profileSchema)],
                                           authenticated: true)) { _, _ in
            .json(try await repository.profile().json)
        }
        admin.put("/company", maxBody: 16 * 1024, doc: RouteDoc(
            summary: "Change the company's information (fields left out keep their value; null or \"\" clears)", tags: ["company"],
            requestSchema: profileRequestSchema,
            responses: [ResponseDoc(status: 200, description: "The company now", schema: profileSchema),
                        ResponseDoc(status: 422, description: "Invalid values, per field in details.fields")],
            authenticated: true)) { request, context in
            let fields = try JSONBody(request).fields
            // Resolved per request: accounts, which keeps the audit log, boots after company.
            let (trail, actor) = (registry.resolve((any AuditTrail).self), AuditActor(userID: try context.user().id, ip: request.clientAddress))
            let updated = try await repository.updateProfile(audited: { try CompanyAudit.profile($0, $1, by: actor, trail: trail, in: $2) }) {
                current in try current.applying(fields)
            }
            logger.notice("company information changed", ["user.id": String(try context.user().id), "request.id": context.requestID])
            return .json(updated.json)
        }
        admin.get("/settings", doc: RouteDoc(summary: "Company settings", tags: ["company"],
                                             responses: [ResponseDoc(status: 200, description: "The settings", schema: settingsSchema)],
                                             authenticated: true)) { _, _ in
            .json(try await repository.current().json)
        }
        admin.put("/settings", maxBody: 16 * 1024,
                  doc: RouteDoc(summary: "Change company settings (fields left out keep their value)", tags: ["company"],
                                requestSchema: settingsRequestSchema,
                                responses: [ResponseDoc(status: 200, description: "The settings now", schema: settingsSchema),
                                            ResponseDoc(status: 422, description: "Invalid values, per field in details.fields")],
                                authenticated: true)) { request, context in
            let body = try SettingsBody(request)
            // Read, apply and save in one write transaction: two admins saving different fields
            // at once both keep their change.
            let (trail, actor) = (registry.resolve((any AuditTrail).self), AuditActor(userID: try context.user().id, ip: request.clientAddress))
            let updated = try await repository.update(audited: { try CompanyAudit.settings($0, $1, by: actor, trail: trail, in: $2) }) {
                current in try body.applied(to: current)
            }
            logger.notice("company settings changed", ["user.id": String(try context.user().id), "request.id": context.requestID])
            return .json(updated.json)
        }
        registerFeedRoutes(user: user, admin: admin)
    }
}

extension CompanySettingsValue {
    /// The contract's shape, nullable fields included even when null.
    var json: JSONValue {
        [
            "defaultAllowanceDays": .number(Double(defaultAllowanceDays)),
            "workingDays": .array(workingDays.map { .number(Double($0)) }),
            "registration": .string(registration),
            "registrationDomain": registrationDomain.map(JSONValue.string) ?? .null,
            "defaultLanguage": .string(defaultLanguage),
            "timeZone": .string(timeZone),
            "maxSimultaneousAbsences": maxSimultaneousAbsences.map { .number(Double($0)) } ?? .null,
            "carryOverMaxDays": .number(Double(carryOverMaxDays)),
            "carryOverExpires": carryOverExpires.map(JSONValue.string) ?? .null,
            "pushContact": pushContact.map(JSONValue.string) ?? .null,
            "updatedAt": updatedAt.map { .string($0.rfc3339()) } ?? .null,
        ]
    }
}

/// `example.com`, `mail.example.co.uk`: two or more labels of letters, digits and inner hyphens,
/// a last label of letters.
func isDomainName(_ s: String) -> Bool {
    guard s.utf8.count <= 253 else { return false }
    let labels = s.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2, let tld = labels.last, tld.count >= 2, tld.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) else { return false }
    return labels.allSatisfy { label in
        let b = Array(label.utf8)
        guard (1...63).contains(b.count), b.first != 0x2D, b.last != 0x2D else { return false }
        return b.allSatisfy { ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2D }
    }
}

let nullableString: JSONValue = ["type": "string", "nullable": true]
let timestampSchema: JSONValue = ["type": "string", "format": "date-time", "nullable": true]

let settingsRequestSchema: JSONValue = [
    "type": "object",
    "properties": [
        "defaultAllowanceDays": ["type": "integer", "minimum": 0, "maximum": 366],
        "workingDays": ["type": "array", "items": ["type": "integer", "minimum": 1, "maximum": 7]],
        "registration": ["type": "string", "enum": ["closed", "open", "domain"]],
        "registrationDomain": nullableString,
        "defaultLanguage": ["type": "string", "pattern": "^[a-z]{2}$"],
        "timeZone": ["type": "string", "description": "IANA time zone name, e.g. Europe/Madrid"],
        "maxSimultaneousAbsences": ["type": "integer", "minimum": 1, "maximum": 10000, "nullable": true],
        "carryOverMaxDays": ["type": "integer", "minimum": 0, "maximum": 366],
        "carryOverExpires": ["type": "string", "pattern": "^[0-9]{2}-[0-9]{2}$", "nullable": true],
        "pushContact": ["type": "string", "nullable": true, "maxLength": 200,
                        "description": "mailto: or https: contact push services are given (VAPID sub)"],
    ],
]

let settingsSchema: JSONValue = [
    "type": "object",
    "properties": [
        "defaultAllowanceDays": ["type": "integer"],
        "workingDays": ["type": "array", "items": ["type": "integer"]],
        "registration": ["type": "string", "enum": ["closed", "open", "domain"]],
        "registrationDomain": nullableString,
        "defaultLanguage": ["type": "string"],
        "timeZone": ["type": "string"],
        "maxSimultaneousAbsences": ["type": "integer", "nullable": true],
        "carryOverMaxDays": ["type": "integer"],
        "carryOverExpires": nullableString,
        "pushContact": nullableString,
        "updatedAt": timestampSchema,
    ],
    "required": ["defaultAllowanceDays", "workingDays", "registration", "registrationDomain", "defaultLanguage", "timeZone",
                 "maxSimultaneousAbsences", "carryOverMaxDays", "carryOverExpires", "updatedAt"],
]

let profileRequestSchema: JSONValue = [
    "type": "object",
    "properties": [
        "name": nullableString, "phone": nullableString, "email": nullableString, "website": nullableString,
        "address": nullableString,
    ],
]

let profileSchema: JSONValue = [
    "type": "object",
    "properties": [
        "name": nullableString, "phone": nullableString, "email": nullableString, "website": nullableString,
        "address": nullableString, "updatedAt": timestampSchema,
    ],
    "required": ["name", "phone", "email", "website", "address", "updatedAt"],
]
