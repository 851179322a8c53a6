import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the company module's SQL: the one-row `company_settings` table.
struct CompanyRepository: CompanySettingsProvider {
    let store: Store

    static func registerMigrations(_ migrations: inout MigrationList) {
        // One timestamp form across tables: INTEGER milliseconds since the epoch.
        migrations.add("company.002_settings_updated_ms", sql: """
            ALTER TABLE company_settings ADD COLUMN updated_ms INTEGER;
            UPDATE company_settings SET updated_ms = CAST(strftime('%s', updated_at) AS INTEGER) * 1000 WHERE updated_at IS NOT NULL;
            ALTER TABLE company_settings DROP COLUMN updated_at;
            ALTER TABLE company_settings RENAME COLUMN updated_ms TO updated_at;
            """)
    }

    func current() async throws -> CompanySettingsValue {
        try await store.read { db in try CompanyRepository.current(db) }
    }

    /// Applies `change` to the stored settings and saves the result, in one write transaction.
    func update(_ change: @escaping @Sendable (CompanySettingsValue) throws -> CompanySettingsValue) async throws -> CompanySettingsValue {
        try await store.write { db in
            let updated = try change(try CompanyRepository.current(db))
            try CompanyRepository.save(updated, db)
            return updated
        }
    }

    static func current(_ db: Database) throws -> CompanySettingsValue {
        var value = CompanySettingsValue()
        guard let row = try db.queryOne("""
            SELECT default_allowance_days, working_days, registration, registration_domain, default_language
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
        return value
    }

    static func save(_ value: CompanySettingsValue, _ db: Database) throws {
        let days = value.workingDays.map(String.init).joined(separator: ",")
        try db.execute("""
            UPDATE company_settings SET default_allowance_days = ?, working_days = ?, registration = ?,
                registration_domain = ?, default_language = ?, updated_at = ? WHERE id = 1
            """, value.defaultAllowanceDays, days, value.registration, value.registrationDomain, value.defaultLanguage,
            Timestamp.now().milliseconds)
    }
}
