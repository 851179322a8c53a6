/// One schema change, identified as `<module>.<NNN_name>` (for example `holidays.001_create_requests`).
///
/// A migration has a form per backend under one id. SQLite replays its history (table rebuilds
/// and all); PostgreSQL starts each module from a baseline equal to the final schema of the
/// release that added PostgreSQL, so its later forms of older ids are empty. A migration without
/// a PostgreSQL form cannot run there (the store says which).
public struct Migration: Sendable {
    /// `<module>.<NNN_name>`, recorded in `sgem_migrations` once applied.
    public let id: String
    let sqlite: @Sendable (Database) throws -> Void
    let postgresql: (@Sendable (Database) throws -> Void)?

    /// The form for `dialect`, or nil when there is none for it.
    func body(for dialect: SQLDialect) -> (@Sendable (Database) throws -> Void)? {
        dialect == .postgresql ? postgresql : sqlite
    }

    /// True when the migration can run on PostgreSQL.
    public var hasPostgreSQLForm: Bool { postgresql != nil }

    /// True when `id` has the shape `^[a-z][a-z0-9_]*\.[0-9]{3}_[a-z0-9_]+$`.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        func isLower(_ b: UInt8) -> Bool { b >= 0x61 && b <= 0x7A }
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        func isWord(_ b: UInt8) -> Bool { isLower(b) || isDigit(b) || b == 0x5F }
        guard let dot = bytes.firstIndex(of: 0x2E), dot > 0, isLower(bytes[0]),
              bytes[1..<dot].allSatisfy(isWord) else { return false }
        let rest = bytes[(dot + 1)...]
        guard rest.count >= 5 else { return false }
        let start = rest.startIndex
        return rest[start..<start + 3].allSatisfy(isDigit)
            && rest[start + 3] == 0x5F
            && rest[(start + 4)...].allSatisfy(isWord)
    }
}

/// The migrations of every module, in the order they are applied. Append-only: a released
/// migration is never edited or removed.
public struct MigrationList: Sendable {
    private(set) var migrations: [Migration] = []

    /// An empty list.
    public init() {}

    /// Appends a migration made of SQL statements, for SQLite only.
    public mutating func add(_ id: String, sql: String) {
        migrations.append(Migration(id: id, sqlite: { try $0.executeScript(sql) }, postgresql: nil))
    }

    /// Appends a migration written in Swift (data fix-ups, conditional changes), for SQLite only.
    public mutating func add(_ id: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        migrations.append(Migration(id: id, sqlite: body, postgresql: nil))
    }

    /// Appends a migration with a script for each backend; an empty PostgreSQL script records the
    /// id and changes nothing (the module's PostgreSQL baseline already has what it adds).
    public mutating func add(_ id: String, sqlite: String, postgresql: String) {
        migrations.append(Migration(id: id, sqlite: { try $0.executeScript(sqlite) },
                                    postgresql: { db in if !postgresql.isEmpty { try db.executeScript(postgresql) } }))
    }

    /// Appends a migration written in Swift for SQLite with a script for PostgreSQL (empty: nothing to do there).
    public mutating func add(_ id: String, sqlite: @escaping @Sendable (Database) throws -> Void, postgresql: String) {
        migrations.append(Migration(id: id, sqlite: sqlite,
                                    postgresql: { db in if !postgresql.isEmpty { try db.executeScript(postgresql) } }))
    }

    /// Appends a migration written in Swift with statements both backends run alike.
    public mutating func add(portable id: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        migrations.append(Migration(id: id, sqlite: body, postgresql: body))
    }

    /// The migrations that have no PostgreSQL form yet.
    public var withoutPostgreSQLForm: [String] { migrations.filter { !$0.hasPostgreSQLForm }.map(\.id) }

    /// The ids, in order.
    public var ids: [String] { migrations.map(\.id) }

    /// The migrations before `id` (all of them when it is not listed): a database as an older
    /// release left it, for testing the migrations that follow.
    public func before(_ id: String) -> MigrationList {
        var list = MigrationList()
        list.migrations = Array(migrations.prefix { $0.id != id })
        return list
    }

    /// Throws `.invalidMigrationID` for the first malformed or repeated id.
    public func validate() throws {
        var seen = Set<String>()
        for migration in migrations {
            guard Migration.isValidID(migration.id) else {
                throw StoreError(code: .invalidMigrationID,
                                 message: "migration id \"\(migration.id)\" must look like <module>.<NNN_name>, e.g. accounts.001_create_users")
            }
            guard seen.insert(migration.id).inserted else {
                throw StoreError(code: .invalidMigrationID, message: "migration id \"\(migration.id)\" is listed twice")
            }
        }
    }
}
