import SGEMStore
import SGEMTestSupport
import Testing

/// The same `SQL` statements on SQLite and PostgreSQL give the same rows.
// Needs the throwaway server `make test` starts; SGEM_TEST_DATABASE_URL names it.
@Suite(.enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct SQLBothBackendsTests {
    static let schema: [SQL] = [
        "CREATE TABLE people (id \(.identityPrimaryKey), name TEXT NOT NULL UNIQUE, active \(.booleanType) NOT NULL, score \(.doubleType), photo \(.blobType))",
        "CREATE TABLE settings (k TEXT PRIMARY KEY, v TEXT NOT NULL)",
    ]

    /// Writes, each returning rows (RETURNING) so their answers compare too.
    static let writes: [SQL] = {
        let people: [(String, Bool, Double?, [UInt8]?)] = [
            ("Ana", true, 2.5, [0, 1, 2, 255]), ("Zoë 日本", false, nil, nil), ("Bo", true, 1.0, []), ("O'Brien", false, 7.25, [0x5C, 0x78]),
        ]
        var writes: [SQL] = people.map { name, active, score, photo in
            "INSERT INTO people (name, active, score, photo) VALUES (\(name), \(active), \(score), \(photo)) RETURNING id, name"
        }
        writes.append("INSERT INTO settings (k, v) VALUES (\("theme"), \("light")) \(upsertOn: ["k"], update: ["v"]) RETURNING k, v")
        writes.append("INSERT INTO settings (k, v) VALUES (\("theme"), \("dark")) \(upsertOn: ["k"], update: ["v"]) RETURNING k, v")
        writes.append("INSERT INTO settings (k, v) VALUES (\("lang"), \("es")) \(upsertOn: ["k"], update: []) RETURNING k")
        writes.append("UPDATE people SET score = \(9.75) WHERE name = \("Ana") RETURNING id, score")
        writes.append("DELETE FROM people WHERE name IN \(list: ["Bo", "nobody"]) RETURNING name")
        return writes
    }()

    static let reads: [SQL] = {
        let none: [Int64] = []
        return [
            "SELECT id, name, active, score, photo FROM people ORDER BY id",
            "SELECT name FROM people WHERE id IN \(list: [Int64(1), 2, 3]) ORDER BY id",
            "SELECT name FROM people WHERE id IN \(list: none) ORDER BY id",
            "SELECT name FROM people WHERE id NOT IN \(list: none) ORDER BY id",
            "SELECT id FROM people WHERE name IN \(list: ["Zoë 日本", "O'Brien"]) ORDER BY id",
            "SELECT name FROM people WHERE active = \(literal: true) ORDER BY id",
            "SELECT name FROM people WHERE active = \(false) ORDER BY id",
            "SELECT count(*) AS n FROM people WHERE score > \(1.5)",
            "SELECT name FROM people WHERE photo = \([UInt8]([0x5C, 0x78]))",
            "SELECT k, v FROM settings ORDER BY k",
            "SELECT id FROM people WHERE id IN \(list: Array(Int64(1)...2_000)) ORDER BY id",
        ]
    }()

    @Test func sameStatementsGiveTheSameRows() async throws {
        let directory = TemporaryDirectory()
        let store = try makeStore(directory)
        let onSQLite = try await store.write { db in
            for statement in Self.schema { try db.run(statement) }
            return try (Self.writes + Self.reads).map { try table(db.fetchAll($0)) }
        }
        await store.close()

        let pgSchema = try PostgresSchema()
        let pg = try pgSchema.connect()
        for statement in Self.schema { try pg.run(statement) }
        let onPostgreSQL = try (Self.writes + Self.reads).map { try table(pg.fetchAll($0)) }

        #expect(onSQLite.count == onPostgreSQL.count)
        for (i, statement) in (Self.writes + Self.reads).enumerated() {
            #expect(onSQLite[i] == onPostgreSQL[i], "\(statement)")
        }
        // The answers are the expected ones, not merely equal.
        let reads = Array(onPostgreSQL.suffix(Self.reads.count))
        #expect(reads[0] == [
            [.integer(1), .text("Ana"), .integer(1), .real(9.75), .blob([0, 1, 2, 255])],
            [.integer(2), .text("Zoë 日本"), .integer(0), .null, .null],
            [.integer(4), .text("O'Brien"), .integer(0), .real(7.25), .blob([0x5C, 0x78])],
        ])
        #expect(reads[2].isEmpty, "IN an empty list matches nothing")
        #expect(reads[3].count == 3, "NOT IN an empty list matches everything")
        #expect(reads[6] == [[.text("Zoë 日本")], [.text("O'Brien")]])
        #expect(reads[9] == [[.text("lang"), .text("es")], [.text("theme"), .text("dark")]])
        #expect(reads[10] == [[.integer(1)], [.integer(2)], [.integer(4)]])
    }
}
