/// One schema change, identified as `<module>.<NNN_name>` (for example `holidays.001_create_requests`).
public struct Migration: Sendable {
    /// `<module>.<NNN_name>`, recorded in `sgem_migrations` once applied.
    public let id: String
    let apply: @Sendable (Database) throws -> Void

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

    /// Appends a migration made of SQL statements.
    public mutating func add(_ id: String, sql: String) {
        migrations.append(Migration(id: id, apply: { try $0.executeScript(sql) }))
    }

    /// Appends a migration written in Swift (data fix-ups, conditional changes).
    public mutating func add(_ id: String, _ body: @escaping @Sendable (Database) throws -> Void) {
        migrations.append(Migration(id: id, apply: body))
    }

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
