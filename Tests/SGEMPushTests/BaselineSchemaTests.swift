import SGEMCore
import SGEMHolidays
import SGEMNotices
import SGEMPush
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// PostgreSQL starts the holidays, notices and push modules from a baseline that must equal the
/// schema SQLite reaches by replaying every migration: the same tables, columns (kind of value,
/// NULL or not) and index names.
@Suite("Holidays, notices, push: PostgreSQL's baselines equal SQLite's final schemas",
       .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct BaselineSchemaTests {
    /// A column as both backends can describe it: table, name, kind (integer, real, text), NOT NULL.
    struct Column: Hashable, CustomStringConvertible {
        let table: String, name: String, kind: String, notNull: Bool
        var description: String { "\(table).\(name) \(kind)\(notNull ? " NOT NULL" : "")" }
    }

    static let tables = ["holidays_", "notices", "push_"]

    static func schema(_ backend: TestBackend) async throws -> (columns: Set<Column>, indexes: Set<String>) {
        let database = try TestDatabase(backend)
        let store = try database.open()
        var migrations = MigrationList()
        HolidaysModule().registerMigrations(&migrations)
        NoticesModule().registerMigrations(&migrations)
        PushModule().registerMigrations(&migrations)
        _ = try await store.migrate(migrations)
        let found = try await store.read { db -> ([Row], [String]) in
            switch backend {
            case .sqlite:
                let columns = try db.fetchAll("""
                    SELECT m.name AS tbl, p.name AS col, p.type AS type, p."notnull" AS not_null, p.pk AS pk
                    FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'
                    """)
                let indexes = try db.fetchAll("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
                return (columns, indexes.compactMap { $0.string("name") })
            case .postgresql:
                let columns = try db.fetchAll("""
                    SELECT c.table_name AS tbl, c.column_name AS col, c.data_type AS type,
                        CASE WHEN c.is_nullable = 'NO' THEN 1 ELSE 0 END AS not_null, 0 AS pk
                    FROM information_schema.columns c WHERE c.table_schema = current_schema()
                    """)
                // Less those PostgreSQL makes for PRIMARY KEY and UNIQUE (SQLite's autoindexes).
                let indexes = try db.fetchAll("""
                    SELECT i.indexname AS name FROM pg_indexes i WHERE i.schemaname = current_schema()
                      AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conname = i.indexname)
                    """)
                return (columns, indexes.compactMap { $0.string("name") })
            }
        }
        await store.close()
        let columns = try found.0.map { row in
            let type = try row.required("type", Row.string).lowercased()
            let kind = type.contains("int") ? "integer" : type.contains("double") || type.contains("real") ? "real" : type
            return Column(table: try row.required("tbl", Row.string), name: try row.required("col", Row.string), kind: kind,
                          notNull: row.int64("not_null") == 1 || row.int64("pk") == 1)
        }
        func ours(_ name: String) -> Bool { tables.contains { name.hasPrefix($0) } }
        return (Set(columns.filter { ours($0.table) }), Set(found.1.filter(ours)))
    }

    @Test("the same tables, columns and indexes on both backends")
    func baselinesMatch() async throws {
        let sqlite = try await Self.schema(.sqlite)
        let postgresql = try await Self.schema(.postgresql)
        #expect(sqlite.columns.count > 50 && sqlite.indexes.count >= 8)
        #expect(sqlite.columns.subtracting(postgresql.columns).isEmpty, "only on SQLite: \(sqlite.columns.subtracting(postgresql.columns))")
        #expect(postgresql.columns.subtracting(sqlite.columns).isEmpty, "only on PostgreSQL: \(postgresql.columns.subtracting(sqlite.columns))")
        #expect(sqlite.indexes == postgresql.indexes)
    }
}
