#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport

/// Backups, restores and checks of a PostgreSQL database, through PostgreSQL's own tools.
extension Store {
    /// Writes a custom-format `pg_dump` of the database at `url` to `path` (mode 0600, written to
    /// `path.tmp`, synced and renamed, as SQLite backups are). `pg_dump` reads one snapshot, so
    /// the copy is consistent while servers keep writing.
    public static func backupPostgres(_ url: PostgresURL, to path: String) throws {
        guard let pgDump = PostgresTools.find("pg_dump") else {
            throw StoreError(code: .backup, message: "pg_dump is not installed (Debian: apt install postgresql-client)")
        }
        let temporary = path + ".tmp"
        try FileOps.removeIfPresent(temporary, code: .backup)
        try FileOps.createPrivate(temporary, code: .backup)
        let (status, errors) = try PostgresTools.run(pgDump, ["--format=custom", "--no-owner", "--no-privileges",
                                                              "--file=" + temporary, "--dbname=" + url.withoutPassword], url: url)
        guard status == 0 else {
            try? FileOps.removeIfPresent(temporary, code: .backup)
            throw StoreError(code: .backup, message: "pg_dump failed (exit \(status)): \(firstLines(errors))")
        }
        try FileOps.makePrivate(temporary, code: .backup)
        try FileOps.sync(temporary, code: .backup)
        try FileOps.rename(temporary, to: path, code: .backup)
        try FileOps.syncDirectory(of: path, code: .backup)
    }

    /// Replaces the sgem tables of the database at `url` with those of a `pg_dump` file, in one
    /// transaction (`pg_restore --single-transaction --clean`): a failure leaves the database as
    /// it was. Refused while another sgem-server session is connected, and for a file that is
    /// not a custom-format dump of an sgem database.
    public static func restorePostgres(_ url: PostgresURL, from source: String) throws {
        guard let pgRestore = PostgresTools.find("pg_restore") else {
            throw StoreError(code: .restore, message: "pg_restore is not installed (Debian: apt install postgresql-client)")
        }
        guard FileOps.exists(source) else { throw StoreError(code: .restore, message: "backup file \(source) does not exist") }
        let magic = FileOps.firstBytes(source, count: 16)
        if magic.starts(with: Array("SQLite format 3".utf8)) {
            throw StoreError(code: .restore, message: "\(source) is an SQLite backup; on PostgreSQL restore a pg_dump backup, or move an SQLite company with 'migrate-to'")
        }
        guard magic.starts(with: Array("PGDMP".utf8)) else {
            throw StoreError(code: .restore, message: "\(source) is not a pg_dump custom-format backup")
        }
        let (listed, listErrors) = try PostgresTools.run(pgRestore, ["--list", source], url: url)
        guard listed == 0 else { throw StoreError(code: .restore, message: "pg_restore cannot read \(source): \(firstLines(listErrors))") }
        let connection = try PostgresConnection(url: url)
        let others = try connection.query("""
            SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = $1 AND pid <> pg_backend_pid()
            """, [.text(PostgresConnection.applicationName)]).first?.int("n") ?? 0
        guard others == 0 else {
            throw StoreError(code: .restore, message: "refused: \(others) sgem-server connection\(others == 1 ? " is" : "s are") open on \(url); stop every server first")
        }
        let (status, errors) = try PostgresTools.run(pgRestore, ["--clean", "--if-exists", "--no-owner", "--no-privileges",
                                                                 "--single-transaction", "--exit-on-error",
                                                                 "--dbname=" + url.withoutPassword, source], url: url)
        guard status == 0 else {
            throw StoreError(code: .restore, message: "pg_restore failed (exit \(status)), nothing was changed: \(firstLines(errors))")
        }
        guard case .sgem = try Store.probe(url) else {
            throw StoreError(code: .restore, message: "\(source) restored, but it holds no sgem schema")
        }
    }

    /// What `check` finds wrong on PostgreSQL: an identity sequence behind its column's largest
    /// value (the next insert would collide), and a journal whose retention marker is past its
    /// newest event. Empty when sound. PostgreSQL enforces keys and constraints itself.
    public func postgresProblems() async throws -> [String] {
        try await read { db in
            var problems: [String] = []
            let identities = try db.query("""
                SELECT c.relname AS tbl, a.attname AS col, pg_get_serial_sequence(quote_ident(c.relname), a.attname) AS seq
                FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = current_schema() AND a.attidentity <> '' AND c.relkind = 'r'
                """)
            for row in identities {
                guard let table = row.string("tbl"), let column = row.string("col"), let sequence = row.string("seq") else { continue }
                let largest = try db.queryOne("SELECT max(\(column)) AS m FROM \(table)")?.int64("m") ?? 0
                let state = try db.queryOne("SELECT last_value AS v, is_called AS c FROM \(sequence)")
                let next = (state?.int64("v") ?? 0) + ((state?.bool("c") ?? false) ? 1 : 0)
                if largest >= next {
                    problems.append("\(table).\(column): the identity sequence would hand out \(next), but \(largest) is taken")
                }
            }
            if try db.queryOne("SELECT to_regclass('system_events') IS NOT NULL AS present")?.bool("present") == true,
               try db.queryOne("SELECT to_regclass('system_events_removed') IS NOT NULL AS present")?.bool("present") == true {
                let oldest = try db.queryOne("SELECT min(id) AS m FROM system_events")?.int64("m")
                let removed = try db.queryOne("SELECT removed_through AS m FROM system_events_removed WHERE id = 1")?.int64("m")
                if let oldest, let removed, oldest <= removed {
                    problems.append("journal: retention recorded removing every event through \(removed), yet event \(oldest) is stored")
                }
            }
            return problems
        }
    }

    /// The server's version, e.g. "PostgreSQL 15.8".
    public func postgresVersion() async throws -> String {
        try await read { db in
            let number = try db.queryOne("SHOW server_version")?.string(at: 0) ?? "?"
            return "PostgreSQL " + (number.split(separator: " ").first.map(String.init) ?? number)
        }
    }
}

/// The first three lines of a tool's stderr, on one line.
private func firstLines(_ text: String) -> String {
    text.split(whereSeparator: \.isNewline).prefix(3).joined(separator: " ")
}
