import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the company module's SQL: the one-row `company_settings` and `company_profile` tables.
struct CompanyRepository: CompanySettingsProvider, CompanyNameProvider {
    let store: Store

    /// The settings and profile tables as SQLite's 001 to 006 leave them, for PostgreSQL's
    /// baseline (`company.001_settings`).
    static let postgresqlBaseline = """
        CREATE TABLE company_settings (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            default_allowance_days BIGINT,
            working_days TEXT,
            registration TEXT,
            registration_domain TEXT,
            default_language TEXT,
            updated_at BIGINT,
            time_zone TEXT,
            max_simultaneous_absences BIGINT,
            carry_over_max_days BIGINT,
            carry_over_expires TEXT,
            push_contact TEXT
        );
        INSERT INTO company_settings (id) VALUES (1);
        CREATE TABLE company_profile (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            name TEXT, phone TEXT, email TEXT, website TEXT, address TEXT,
            updated_at BIGINT
        );
        INSERT INTO company_profile (id) VALUES (1);

        """

    static func registerMigrations(_ migrations: inout MigrationList) {
        // One timestamp form across tables: INTEGER milliseconds since the epoch.
        migrations.add("company.002_settings_updated_ms", sqlite: """
            ALTER TABLE company_settings ADD COLUMN updated_ms INTEGER;
            UPDATE company_settings SET updated_ms = CAST(strftime('%s', updated_at) AS INTEGER) * 1000 WHERE updated_at IS NOT NULL;
            ALTER TABLE company_settings DROP COLUMN updated_at;
            ALTER TABLE company_settings RENAME COLUMN updated_ms TO updated_at;
            """, postgresql: "")
        // NULL columns mean "the default" (or "no limit" / "never" where null is a value).
        migrations.add("company.003_more_settings", sqlite: """
            ALTER TABLE company_settings ADD COLUMN time_zone TEXT;
            ALTER TABLE company_settings ADD COLUMN max_simultaneous_absences INTEGER;
            ALTER TABLE company_settings ADD COLUMN carry_over_max_days INTEGER;
            ALTER TABLE company_settings ADD COLUMN carry_over_expires TEXT;
            """, postgresql: "")
        // One row of company information; NULL is "not given".
        migrations.add("company.004_profile", sqlite: """
            CREATE TABLE company_profile (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                name TEXT, phone TEXT, email TEXT, website TEXT, address TEXT,
                updated_at INTEGER
            );
            INSERT INTO company_profile (id) VALUES (1);
            """, postgresql: "")
    }

    // MARK: Settings

    func current() async throws -> CompanySettingsValue {
        try await store.read { db in try CompanyRepository.current(in: db) }
    }

    /// Applies `change` to the stored settings and saves the result, in one write transaction.
    /// `audited` records the change (before, after) in the same transaction.
    func update(audited: Audited<CompanySettingsValue>? = nil,
                _ change: @escaping @Sendable (CompanySettingsValue) throws -> CompanySettingsValue) async throws -> CompanySettingsValue {
        try await modify(load: { try CompanyRepository.current(in: $0) }, save: { try CompanyRepository.save($0, in: $1) },
                         audited: audited, change)
    }

    /// What records a change of a one-row table in the audit log, given the row before and after.
    typealias Audited<Value> = @Sendable (Value, Value, Database) throws -> Void

    /// Reads one row, applies `change`, stamps and saves the result, in one write transaction:
    /// two admins saving different fields at once both keep their change.
    private func modify<Value: StampedRow>(load: @escaping @Sendable (Database) throws -> Value,
                                           save: @escaping @Sendable (Value, Database) throws -> Void,
                                           audited: Audited<Value>? = nil,
                                           _ change: @escaping @Sendable (Value) throws -> Value) async throws -> Value {
        try await store.write { db in
            let current = try load(db)
            var updated = try change(current)
            updated.updatedAt = Timestamp(milliseconds: Timestamp.now().milliseconds)
            try save(updated, db)
            try audited?(current, updated, db)
            return updated
        }
    }

    static func current(in db: Database) throws -> CompanySettingsValue {
        try db.fetchOne(StoredSettings.self, """
            SELECT default_allowance_days, working_days, registration, registration_domain, default_language, time_zone,
                   max_simultaneous_absences, carry_over_max_days, carry_over_expires, push_contact, updated_at
            FROM company_settings WHERE id = 1
            """)?.value ?? CompanySettingsValue()
    }

    static func save(_ value: CompanySettingsValue, in db: Database) throws {
        let days = value.workingDays.map(String.init).joined(separator: ",")
        try db.run("""
            UPDATE company_settings SET default_allowance_days = \(value.defaultAllowanceDays), working_days = \(days),
                registration = \(value.registration), registration_domain = \(value.registrationDomain),
                default_language = \(value.defaultLanguage), time_zone = \(value.timeZone),
                max_simultaneous_absences = \(value.maxSimultaneousAbsences), carry_over_max_days = \(value.carryOverMaxDays),
                carry_over_expires = \(value.carryOverExpires), push_contact = \(value.pushContact),
                updated_at = \(value.updatedAt?.milliseconds)
            WHERE id = 1
            """)
    }

    // MARK: Profile

    func profile() async throws -> CompanyProfile {
        try await store.read { db in try CompanyRepository.profile(in: db) }
    }

    func companyName() async throws -> String? { try await profile().name }

    /// Applies `change` to the stored company information and saves it, in one write transaction.
    func updateProfile(audited: Audited<CompanyProfile>? = nil,
                       _ change: @escaping @Sendable (CompanyProfile) throws -> CompanyProfile) async throws -> CompanyProfile {
        try await modify(load: { try CompanyRepository.profile(in: $0) }, save: { try CompanyRepository.save($0, in: $1) },
                         audited: audited, change)
    }

    static func save(_ value: CompanyProfile, in db: Database) throws {
        try db.run("""
            UPDATE company_profile SET name = \(value.name), phone = \(value.phone), email = \(value.email),
                website = \(value.website), address = \(value.address), updated_at = \(value.updatedAt?.milliseconds)
            WHERE id = 1
            """)
    }

    static func profile(in db: Database) throws -> CompanyProfile {
        try db.fetchOne(CompanyProfile.self, "SELECT name, phone, email, website, address, updated_at FROM company_profile WHERE id = 1")
            ?? CompanyProfile()
    }
}

/// The settings row (`CompanySettingsValue` belongs to SGEMCore, which knows no rows).
private struct StoredSettings: RowDecodable {
    let value: CompanySettingsValue

    /// NULL columns keep their defaults.
    init(row: Row) {
        var value = CompanySettingsValue()
        if let n = row.int("default_allowance_days") { value.defaultAllowanceDays = n }
        if let days = row.string("working_days") {
            let parsed = days.split(separator: ",").compactMap { Int($0) }
            if !parsed.isEmpty { value.workingDays = parsed }
        }
        if let r = row.string("registration") { value.registration = r }
        value.registrationDomain = row.string("registration_domain")
        if let l = row.string("default_language") { value.defaultLanguage = l }
        if let z = row.string("time_zone") { value.timeZone = z }
        value.maxSimultaneousAbsences = row.int("max_simultaneous_absences")
        if let n = row.int("carry_over_max_days") { value.carryOverMaxDays = n }
        value.carryOverExpires = row.string("carry_over_expires")
        value.pushContact = row.string("push_contact")
        value.updatedAt = row.int64("updated_at").map(Timestamp.init(milliseconds:))
        self.value = value
    }
}

extension CompanyProfile: RowDecodable {
    /// The profile row; NULL is "not given".
    init(row: Row) {
        self.init(name: row.string("name"), phone: row.string("phone"), email: row.string("email"),
                  website: row.string("website"), address: row.string("address"),
                  updatedAt: row.int64("updated_at").map(Timestamp.init(milliseconds:)))
    }
}

/// A one-row table whose saves are stamped with the time.
protocol StampedRow: Sendable {
    var updatedAt: Timestamp? { get set }
}

extension CompanySettingsValue: StampedRow {}
extension CompanyProfile: StampedRow {}
