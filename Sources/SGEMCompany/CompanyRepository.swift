import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the company module's SQL: the one-row `company_settings` and `company_profile` tables.
struct CompanyRepository: CompanySettingsProvider, CompanyNameProvider {
    let store: Store

    static func registerMigrations(_ migrations: inout MigrationList) {
        // One timestamp form across tables: INTEGER milliseconds since the epoch.
        migrations.add("company.002_settings_updated_ms", sql: """
            ALTER TABLE company_settings ADD COLUMN updated_ms INTEGER;
            UPDATE company_settings SET updated_ms = CAST(strftime('%s', updated_at) AS INTEGER) * 1000 WHERE updated_at IS NOT NULL;
            ALTER TABLE company_settings DROP COLUMN updated_at;
            ALTER TABLE company_settings RENAME COLUMN updated_ms TO updated_at;
            """)
        // NULL columns mean "the default" (or "no limit" / "never" where null is a value).
        migrations.add("company.003_more_settings", sql: """
            ALTER TABLE company_settings ADD COLUMN time_zone TEXT;
            ALTER TABLE company_settings ADD COLUMN max_simultaneous_absences INTEGER;
            ALTER TABLE company_settings ADD COLUMN carry_over_max_days INTEGER;
            ALTER TABLE company_settings ADD COLUMN carry_over_expires TEXT;
            """)
        // One row of company information; NULL is "not given".
        migrations.add("company.004_profile", sql: """
            CREATE TABLE company_profile (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                name TEXT, phone TEXT, email TEXT, website TEXT, address TEXT,
                updated_at INTEGER
            );
            INSERT INTO company_profile (id) VALUES (1);
            """)
    }

    // MARK: Settings

    func current() async throws -> CompanySettingsValue {
        try await store.read { db in try CompanyRepository.current(db) }
    }

    /// Applies `change` to the stored settings and saves the result, in one write transaction.
    /// `audited` records the change (before, after) in the same transaction.
    func update(audited: Audited<CompanySettingsValue>? = nil,
                _ change: @escaping @Sendable (CompanySettingsValue) throws -> CompanySettingsValue) async throws -> CompanySettingsValue {
        try await modify(load: CompanyRepository.current, save: CompanyRepository.save, audited: audited, change)
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

    static func current(_ db: Database) throws -> CompanySettingsValue {
        var value = CompanySettingsValue()
        guard let row = try db.queryOne("""
            SELECT default_allowance_days, working_days, registration, registration_domain, default_language, time_zone,
                   max_simultaneous_absences, carry_over_max_days, carry_over_expires, push_contact, updated_at
            FROM company_settings WHERE id = 1
            """) else { return value }
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
        return value
    }

    static func save(_ value: CompanySettingsValue, _ db: Database) throws {
        let days = value.workingDays.map(String.init).joined(separator: ",")
        try db.execute("""
            UPDATE company_settings SET default_allowance_days = ?, working_days = ?, registration = ?,
                registration_domain = ?, default_language = ?, time_zone = ?, max_simultaneous_absences = ?,
                carry_over_max_days = ?, carry_over_expires = ?, push_contact = ?, updated_at = ? WHERE id = 1
            """, value.defaultAllowanceDays, days, value.registration, value.registrationDomain, value.defaultLanguage,
            value.timeZone, value.maxSimultaneousAbsences, value.carryOverMaxDays, value.carryOverExpires,
            value.pushContact, value.updatedAt?.milliseconds)
    }

    // MARK: Profile

    func profile() async throws -> CompanyProfile {
        try await store.read { db in try CompanyRepository.profile(db) }
    }

    func companyName() async throws -> String? { try await profile().name }

    /// Applies `change` to the stored company information and saves it, in one write transaction.
    func updateProfile(audited: Audited<CompanyProfile>? = nil,
                       _ change: @escaping @Sendable (CompanyProfile) throws -> CompanyProfile) async throws -> CompanyProfile {
        try await modify(load: CompanyRepository.profile, save: CompanyRepository.save, audited: audited, change)
    }

    static func save(_ value: CompanyProfile, _ db: Database) throws {
        try db.execute("UPDATE company_profile SET name = ?, phone = ?, email = ?, website = ?, address = ?, updated_at = ? WHERE id = 1",
                       value.name, value.phone, value.email, value.website, value.address, value.updatedAt?.milliseconds)
    }

    static func profile(_ db: Database) throws -> CompanyProfile {
        guard let row = try db.queryOne("SELECT name, phone, email, website, address, updated_at FROM company_profile WHERE id = 1")
        else { return CompanyProfile() }
        return CompanyProfile(name: row.string("name"), phone: row.string("phone"), email: row.string("email"),
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
