import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `company` module: company-wide settings (holiday allowance, working days, registration,
/// default language). Company information (`/company`) arrives with its own issue.
public struct CompanyModule: Module {
    public let id: ModuleID = "company"

    public init() {}

    public func registerMigrations(_ migrations: inout MigrationList) {
        // One row; NULL columns mean "the default", so defaults can change in code.
        migrations.add("company.001_settings", sql: """
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
            """)
        CompanyRepository.registerMigrations(&migrations)
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        let repository = CompanyRepository(store: context.store)
        context.services.register((any CompanySettingsProvider).self, repository)
        return CompanyRuntime(repository: repository, services: context.services, logger: context.logger)
    }
}

/// The company module's routes.
struct CompanyRuntime: ModuleRuntime {
    let repository: CompanyRepository
    let services: ServiceRegistry
    let logger: Logger

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let admin = routes.group("/admin", middleware: [RequireAdmin(services: services)])
        let repository = self.repository
        let logger = self.logger
        admin.get("/settings", doc: RouteDoc(summary: "Company settings", tags: ["company"],
                                             responses: [ResponseDoc(status: 200, description: "The settings", schema: settingsSchema)],
                                             authenticated: true)) { _, _ in
            .json(try await repository.current().json)
        }
        admin.put("/settings", maxBody: 16 * 1024,
                  doc: RouteDoc(summary: "Change company settings (fields left out keep their value)", tags: ["company"],
                                requestSchema: settingsSchema,
                                responses: [ResponseDoc(status: 200, description: "The settings now", schema: settingsSchema),
                                            ResponseDoc(status: 422, description: "Invalid values, per field in details.fields")],
                                authenticated: true)) { request, context in
            let body = try SettingsBody(request)
            // Read, apply and save in one write transaction: two admins saving different fields
            // at once both keep their change.
            let updated = try await repository.update { current in try body.applied(to: current) }
            logger.notice("company settings changed", ["user.id": String(try context.user().id), "request.id": context.requestID])
            return .json(updated.json)
        }
    }
}

extension CompanySettingsValue {
    /// The contract's shape, `registrationDomain` included even when null.
    var json: JSONValue {
        [
            "defaultAllowanceDays": .number(Double(defaultAllowanceDays)),
            "workingDays": .array(workingDays.map { .number(Double($0)) }),
            "registration": .string(registration),
            "registrationDomain": registrationDomain.map(JSONValue.string) ?? .null,
            "defaultLanguage": .string(defaultLanguage),
        ]
    }
}

/// A `PUT /admin/settings` body, checked field by field.
struct SettingsBody {
    let fields: [String: JSONValue]

    init(_ request: Request) throws { fields = try JSONBody(request).fields }

    /// `current` with the body's fields applied; 422 listing every invalid field.
    func applied(to current: CompanySettingsValue) throws -> CompanySettingsValue {
        var value = current
        var problems: [String: String] = [:]
        if let raw = fields["defaultAllowanceDays"] {
            if let n = raw.numberValue, n == n.rounded(), (0...366).contains(n) {
                value.defaultAllowanceDays = Int(n)
            } else {
                problems["defaultAllowanceDays"] = "must be a whole number from 0 to 366"
            }
        }
        if let raw = fields["workingDays"] {
            let numbers = raw.arrayValue?.compactMap { v -> Int? in
                guard let n = v.numberValue, n == n.rounded(), (1...7).contains(n) else { return nil }
                return Int(n)
            }
            if let numbers, !numbers.isEmpty, numbers.count == raw.arrayValue?.count, Set(numbers).count == numbers.count {
                value.workingDays = numbers.sorted()
            } else {
                problems["workingDays"] = "must be a non-empty list of distinct ISO weekday numbers 1 to 7"
            }
        }
        if let raw = fields["registration"] {
            if let s = raw.stringValue, CompanySettingsValue.registrationModes.contains(s) {
                value.registration = s
            } else {
                problems["registration"] = "must be one of closed, open, domain"
            }
        }
        if let raw = fields["registrationDomain"] {
            switch raw {
            case .null: value.registrationDomain = nil
            case let .string(s) where s.isEmpty: value.registrationDomain = nil
            case let .string(s) where isDomainName(s.lowercased()): value.registrationDomain = s.lowercased()
            default: problems["registrationDomain"] = "must be a domain name such as example.com"
            }
        }
        if value.registration == "domain", value.registrationDomain == nil, problems["registrationDomain"] == nil {
            problems["registrationDomain"] = "is required when registration is 'domain'"
        }
        if let raw = fields["defaultLanguage"] {
            if let s = raw.stringValue, s.utf8.count == 2, s.utf8.allSatisfy({ $0 >= 0x61 && $0 <= 0x7A }) {
                value.defaultLanguage = s
            } else {
                problems["defaultLanguage"] = "must be an ISO 639-1 code of two lowercase letters"
            }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        return value
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

let settingsSchema: JSONValue = [
    "type": "object",
    "properties": [
        "defaultAllowanceDays": ["type": "integer", "minimum": 0, "maximum": 366],
        "workingDays": ["type": "array", "items": ["type": "integer", "minimum": 1, "maximum": 7]],
        "registration": ["type": "string", "enum": ["closed", "open", "domain"]],
        "registrationDomain": ["type": "string", "nullable": true],
        "defaultLanguage": ["type": "string", "pattern": "^[a-z]{2}$"],
    ],
]
