@testable import SGEMStore
import Testing

/// The store's `?` placeholders as PostgreSQL's `$N`, leaving quoted text and comments alone.
@Suite struct PlaceholderTests {
    @Test(arguments: [
        ("SELECT * FROM t WHERE a = ? AND b IN (?, ?)", "SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)"),
        ("UPDATE t SET a = ?2 WHERE id = ?1 OR other = ?1", "UPDATE t SET a = $2 WHERE id = $1 OR other = $1"),
        ("SELECT '?', 'it''s ?', \"odd?name\" FROM t WHERE x = ?", "SELECT '?', 'it''s ?', \"odd?name\" FROM t WHERE x = $1"),
        ("SELECT 1 -- why?\nWHERE a = ? /* and ? here */ AND b = ?", "SELECT 1 -- why?\nWHERE a = $1 /* and ? here */ AND b = $2"),
        ("SELECT $$ a ? b $$, $tag$?$tag$, ?", "SELECT $$ a ? b $$, $tag$?$tag$, $1"),
        ("SELECT $1::bigint", "SELECT $1::bigint"),
        ("INSERT INTO t (a) VALUES (?) RETURNING id", "INSERT INTO t (a) VALUES ($1) RETURNING id"),
        ("SELECT 'unterminated ?", "SELECT 'unterminated ?"),
    ])
    func rendered(_ sql: String, _ expected: String) {
        #expect(Placeholders.postgres(sql) == expected)
    }

    @Test(arguments: ["BEGIN", "  commit", "ROLLBACK TO x", "savepoint a", "RELEASE sgem_job", "END", "START TRANSACTION", "abort", "PREPARE TRANSACTION 'x'"])
    func transactionControlIsRecognised(_ sql: String) {
        #expect(PostgresStoreConnection.isTransactionControl(sql))
    }

    @Test(arguments: ["SELECT 1", "INSERT INTO begins VALUES (1)", "UPDATE t SET committed = 1", "WITH x AS (SELECT 1) SELECT * FROM x"])
    func ordinaryStatementsAreNot(_ sql: String) {
        #expect(!PostgresStoreConnection.isTransactionControl(sql))
    }
}
