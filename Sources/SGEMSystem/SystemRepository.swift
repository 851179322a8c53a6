import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the system module's SQL: the instance row and the runtime settings table.
struct SystemRepository: Sendable {
    let store: Store

    static func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("system.002_runtime_settings", sqlite: """
            CREATE TABLE system_runtime_settings (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL,
                updated_at INTEGER NOT NULL
            );
            """, postgresql: """
            CREATE TABLE system_runtime_settings (
                key TEXT PRIMARY KEY,
                value TEXT NOT NULL,
                updated_at BIGINT NOT NULL
            );
            """)
        // One timestamp form across tables: INTEGER milliseconds since the epoch (PostgreSQL's
        // baseline has it already).
        migrations.add("system.003_instance_created_ms", sqlite: """
            ALTER TABLE system_instance ADD COLUMN created_ms INTEGER;
            UPDATE system_instance SET created_ms = CAST(strftime('%s', created_at) AS INTEGER) * 1000;
            ALTER TABLE system_instance DROP COLUMN created_at;
            ALTER TABLE system_instance RENAME COLUMN created_ms TO created_at;
            """, postgresql: "")
    }

    /// The instance id and creation time; nil before the first migration.
    func instance() async throws -> (id: String, createdAt: Timestamp?)? {
        try await store.read { db in
            guard let row = try db.queryOne("SELECT instance_id, created_at FROM system_instance WHERE id = 1"),
                  let id = row.string("instance_id") else { return nil }
            return (id, row.timestamp("created_at"))
        }
    }

    func runtimeValues() async throws -> [String: String] {
        try await store.read { db in
            var values: [String: String] = [:]
            for row in try db.query("SELECT key, value FROM system_runtime_settings") {
                if let key = row.string("key"), let value = row.string("value") { values[key] = value }
            }
            return values
        }
    }

    func runtimeValue(_ key: String) async throws -> String? {
        try await store.read { db in try db.queryOne("SELECT value FROM system_runtime_settings WHERE key = ?", key)?.string("value") }
    }

    /// The stored values of `keys` (those set), in the caller's transaction.
    static func runtimeValues(_ keys: [String], in db: Database) throws -> [(key: String, value: String)] {
        try keys.compactMap { key in
            try db.queryOne("SELECT value FROM system_runtime_settings WHERE key = ?", key)?.string("value").map { (key, $0) }
        }
    }

    /// Replaces stored values without leaving the old bytes in the page's free space: what is
    /// replaced here may be a secret kept in clear by an older release.
    static func overwriteRuntimeValues(_ values: [(key: String, value: String)], in db: Database) throws {
        try db.overwritingSecurely {
            for (key, value) in values { try setRuntimeValue(key, value, in: db) }
        }
    }

    static func setRuntimeValue(_ key: String, _ value: String?, in db: Database) throws {
        if let value {
            try db.execute("""
                INSERT INTO system_runtime_settings (key, value, updated_at) VALUES (?, ?, ?)
                ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at
                """, key, value, Timestamp.now().milliseconds)
        } else {
            try db.execute("DELETE FROM system_runtime_settings WHERE key = ?", key)
        }
    }
}

/// `RuntimeSettings` over `system_runtime_settings`: read from the store each time (admins and
/// the CLI may change a value while the server runs), checked against the modules' declarations.
/// Secrets are stored sealed by `secrets`, bound to their key. Each change records a
/// `RuntimeSettingChange` event in its own transaction, so every instance can drop what it keeps
/// of the setting, wherever the change was made.
struct StoredRuntimeSettings: RuntimeSettings {
    /// The store, opened on first use by the command line.
    let openStore: @Sendable () async throws -> Store
    let declared: [RuntimeSetting]
    let secrets: Secrets
    /// Where changes are recorded for the other instances.
    let journal: any EventJournal

    private var repository: SystemRepository {
        get async throws { SystemRepository(store: try await openStore()) }
    }

    private func declaration(_ key: String) throws -> RuntimeSetting {
        guard let setting = declared.first(where: { $0.key == key }) else { throw RuntimeSettingError.unknown(key) }
        return setting
    }

    func value(_ key: String) async throws -> String? {
        let setting = try declaration(key)
        return try await repository.runtimeValue(key).flatMap { try clear($0, of: setting) } ?? setting.defaultValue
    }

    /// A stored value as the module reads it: a secret opened, nil when it does not open.
    private func clear(_ stored: String, of setting: RuntimeSetting) throws -> String? {
        setting.secret ? try secrets.open(stored, as: setting.key) : stored
    }

    /// A value as it is stored: a secret sealed.
    private func stored(_ value: String?, of setting: RuntimeSetting) throws -> String? {
        guard setting.secret, let value else { return value }
        return try secrets.seal(value, as: setting.key)
    }

    /// The declaration of `key`; throws unless `key` is declared and its check accepts `value`.
    private func validate(_ key: String, _ value: String?) throws -> RuntimeSetting {
        let setting = try declaration(key)
        if let value, let check = setting.check, let problem = check(value) {
            throw RuntimeSettingError.invalid(key, problem)
        }
        return setting
    }

    func set(_ key: String, to value: String?, in db: Database) throws {
        let setting = try validate(key, value)
        try SystemRepository.setRuntimeValue(key, try stored(value, of: setting), in: db)
        try journal.record(RuntimeSettingChange.event(key: key), in: db)
    }

    func set(_ key: String, to value: String?) async throws {
        // Checked and sealed before queueing, so a refused value never reaches the writer.
        let setting = try validate(key, value)
        let stored = try stored(value, of: setting)
        let journal = self.journal
        try await repository.store.write { db in
            try SystemRepository.setRuntimeValue(key, stored, in: db)
            try journal.record(RuntimeSettingChange.event(key: key), in: db)
        }
    }

    func views() async throws -> [RuntimeSettingView] {
        let stored = try await repository.runtimeValues()
        return try declared.map { s in
            let value = stored[s.key]
            guard s.secret else { return RuntimeSettingView(key: s.key, secret: false, value: value ?? s.defaultValue, isSet: value != nil) }
            let opens = try value.map { try secrets.open($0, as: s.key) != nil } ?? false
            return RuntimeSettingView(key: s.key, secret: true, value: nil, isSet: opens, needsReentry: value != nil && !opens)
        }
    }

    /// Seals the secrets an older release stored in clear, in one transaction; returns their keys.
    func sealClearSecrets() async throws -> [String] {
        let keys = declared.filter(\.secret).map(\.key)
        let secrets = self.secrets
        return try await repository.store.write { db in
            let clear = try SystemRepository.runtimeValues(keys, in: db).filter { !SecretBox.isSealed($0.value) }
            let sealed = try clear.map { (key: $0.key, value: try secrets.seal($0.value, as: $0.key)) }
            if !sealed.isEmpty { try SystemRepository.overwriteRuntimeValues(sealed, in: db) }
            return sealed.map(\.key)
        }
    }

    /// The secrets stored under another key, which must be entered again.
    func secretsToReenter() async throws -> [String] {
        try await views().filter(\.needsReentry).map(\.key)
    }
}
