import SGEMSupport

/// What `migrate-to` copied: each table with its row count on both sides.
public struct MoveReport: Sendable {
    public struct Table: Sendable {
        public let name: String
        public let sourceRows: Int
        public let targetRows: Int
    }
    public var tables: [Table] = []
    public var totalRows: Int { tables.reduce(0) { $0 + $1.targetRows } }
}

extension Store {
    /// Copies every row of this SQLite store into the PostgreSQL database at `url`, whose schema
    /// the caller has just migrated to the same migrations (rows the migrations seeded are
    /// replaced by the source's). One PostgreSQL
    /// transaction: parents before children, ids kept, identity sequences moved past them, row
    /// counts compared before it commits — on any difference nothing is kept. SQLite's own tables
    /// (FTS indexes and their shadows, `sqlite_sequence`) are left behind; PostgreSQL builds its
    /// search column from the rows. `progress` hears of each table as it is copied.
    public func move(to url: PostgresURL, progress: (String, Int) -> Void = { _, _ in }) async throws -> MoveReport {
        guard case .sqlite = location else { throw StoreError(code: .unsupported, message: "migrate-to moves an SQLite database") }
        let target = try PostgresConnection(url: url)
        let targetColumns = try Store.postgresColumns(target)
        let order = try Store.parentsFirst(Array(targetColumns.keys), target)
        let sourceTables = try await read { db in try Store.sqliteTables(db) }

        // Every source table with rows must have somewhere to go, with every column.
        for (table, columns) in sourceTables where table != "sgem_migrations" {
            guard let into = targetColumns[table] else {
                let rows = try await read { db in try db.queryOne("SELECT count(*) AS n FROM \(table)")?.int("n") ?? 0 }
                if rows > 0 { throw StoreError(code: .migration, message: "table \(table) (\(rows) rows) has no place in the PostgreSQL schema") }
                continue
            }
            let missing = columns.filter { !into.contains($0) }
            if !missing.isEmpty {
                throw StoreError(code: .migration, message: "\(table).\(missing.joined(separator: ", ")) has no column in the PostgreSQL schema")
            }
        }

        var report = MoveReport()
        try target.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
        do {
            try target.execute("SET CONSTRAINTS ALL DEFERRED")
            // The target was empty before its migrations: the rows it holds are theirs (singleton
            // rows such as the instance and the company profile), replaced by the source's own.
            for table in order.reversed() where table != "sgem_migrations" && sourceTables[table] != nil {
                _ = try target.execute("DELETE FROM \(table)")
            }
            for table in order where table != "sgem_migrations" {
                guard let columns = sourceTables[table] else { continue }
                let list = columns.joined(separator: ", ")
                let perStatement = max(1, min(1000, 30_000 / max(1, columns.count)))
                // Rowid tables page by rowid; WITHOUT ROWID ones (small link tables) by their key.
                let key = try await read { db in try Store.withoutRowIDKey(table, db) }
                var after: Int64 = Int64.min
                var offset = 0
                var sourceRows = 0
                while true {
                    let chunk = try await read { [after, offset] db in
                        if let key {
                            return try db.query("SELECT \(list) FROM \(table) ORDER BY \(key) LIMIT ? OFFSET ?", perStatement, offset)
                        }
                        return try db.query("SELECT rowid AS sgem_rowid, \(list) FROM \(table) WHERE rowid > ? ORDER BY rowid LIMIT ?", after, perStatement)
                    }
                    guard let last = chunk.last else { break }
                    after = last.int64("sgem_rowid") ?? after
                    offset += chunk.count
                    var placeholders: [String] = []
                    var values: [SQLValue] = []
                    for row in chunk {
                        let start = values.count
                        placeholders.append("(" + columns.indices.map { "$\(start + $0 + 1)" }.joined(separator: ", ") + ")")
                        values += columns.map { row[$0] }
                    }
                    _ = try target.execute("INSERT INTO \(table) (\(list)) OVERRIDING SYSTEM VALUE VALUES \(placeholders.joined(separator: ", "))", values)
                    sourceRows += chunk.count
                }
                let counted = try await read { db in try db.queryOne("SELECT count(*) AS n FROM \(table)")?.int("n") ?? 0 }
                let targetRows = try target.query("SELECT count(*) AS n FROM \(table)").first?.int("n") ?? 0
                guard counted == targetRows, sourceRows == targetRows else {
                    throw StoreError(code: .migration, message: "\(table): \(counted) rows in SQLite, \(targetRows) on PostgreSQL; nothing was kept")
                }
                report.tables.append(.init(name: table, sourceRows: counted, targetRows: targetRows))
                progress(table, targetRows)
            }
            // Identity columns continue after the ids brought over.
            for row in try target.query("""
                SELECT c.relname AS tbl, a.attname AS col FROM pg_attribute a
                JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND a.attidentity <> '' AND c.relkind = 'r'
                """) {
                guard let table = row.string("tbl"), let column = row.string("col") else { continue }
                _ = try target.query("""
                    SELECT setval(pg_get_serial_sequence($1, $2), GREATEST((SELECT COALESCE(max(\(column)), 0) FROM \(table)), 1),
                                  (SELECT count(*) > 0 FROM \(table)))
                    """, [.text(table), .text(column)])
            }
            try target.execute("SET CONSTRAINTS ALL IMMEDIATE")
            try target.execute("COMMIT")
        } catch {
            _ = try? target.execute("ROLLBACK")
            throw error
        }
        return report
    }

    /// The SQLite tables worth copying and their columns: not SQLite's own, not full-text
    /// indexes (virtual tables) nor their shadow tables.
    static func sqliteTables(_ db: Database) throws -> [String: [String]] {
        let all = try db.query("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        let virtual = all.filter { ($0.string("sql") ?? "").uppercased().hasPrefix("CREATE VIRTUAL TABLE") }.compactMap { $0.string("name") }
        var tables: [String: [String]] = [:]
        for row in all {
            guard let name = row.string("name"), !virtual.contains(name),
                  !virtual.contains(where: { name.hasPrefix($0 + "_") }) else { continue }
            tables[name] = try db.query("SELECT name FROM pragma_table_info(?)", name).compactMap { $0.string("name") }
        }
        return tables
    }

    /// The primary-key columns of a WITHOUT ROWID table (to order by), nil for a rowid table.
    static func withoutRowIDKey(_ table: String, _ db: Database) throws -> String? {
        let sql = try db.queryOne("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table)?.string("sql") ?? ""
        guard sql.uppercased().contains("WITHOUT ROWID") else { return nil }
        let key = try db.query("SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", table).compactMap { $0.string("name") }
        return key.isEmpty ? nil : key.joined(separator: ", ")
    }

    /// The current schema's tables on PostgreSQL and the columns one may insert into (generated
    /// columns, such as the search vector, are computed by PostgreSQL).
    static func postgresColumns(_ connection: PostgresConnection) throws -> [String: [String]] {
        var tables: [String: [String]] = [:]
        for row in try connection.query("""
            SELECT table_name AS t, column_name AS c FROM information_schema.columns
            WHERE table_schema = current_schema() AND is_generated = 'NEVER'
              AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE')
            ORDER BY table_name, ordinal_position
            """) {
            guard let table = row.string("t"), let column = row.string("c") else { continue }
            tables[table, default: []].append(column)
        }
        return tables
    }

    /// `tables` ordered so that every table comes after the tables its foreign keys point to
    /// (self-references and cycles are left to the deferred constraints).
    static func parentsFirst(_ tables: [String], _ connection: PostgresConnection) throws -> [String] {
        var parents: [String: Set<String>] = [:]
        for row in try connection.query("""
            SELECT c.relname AS child, p.relname AS parent FROM pg_constraint k
            JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
            JOIN pg_namespace n ON n.oid = c.relnamespace
            WHERE k.contype = 'f' AND n.nspname = current_schema()
            """) {
            guard let child = row.string("child"), let parent = row.string("parent"), child != parent else { continue }
            parents[child, default: []].insert(parent)
        }
        var ordered: [String] = []
        var placed = Set<String>()
        var remaining = tables.sorted()
        while !remaining.isEmpty {
            let ready = remaining.filter { (parents[$0] ?? []).allSatisfy { placed.contains($0) || !tables.contains($0) } }
            let next = ready.isEmpty ? [remaining[0]] : ready
            ordered += next
            placed.formUnion(next)
            remaining.removeAll { next.contains($0) }
        }
        return ordered
    }
}
