/// Prepared statements of one connection, keyed by SQL, bounded, least recently used evicted.
struct StatementCache {
    private struct Entry {
        let statement: Statement
        var lastUse: UInt64
    }

    let capacity: Int
    private var entries: [String: Entry] = [:]
    private var clock: UInt64 = 0

    init(capacity: Int) { self.capacity = max(0, capacity) }

    var count: Int { entries.count }

    /// The cached statement for `sql`, preparing (and maybe evicting) on a miss.
    mutating func statement(for sql: String, prepare: (String) throws -> Statement) rethrows -> Statement {
        clock &+= 1
        if var entry = entries[sql] {
            entry.lastUse = clock
            entries[sql] = entry
            return entry.statement
        }
        let statement = try prepare(sql)
        guard capacity > 0 else { return statement }
        if entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            // A linear scan only on a miss of a full cache: cheap at the sizes used here.
            entries.removeValue(forKey: oldest)
        }
        entries[sql] = Entry(statement: statement, lastUse: clock)
        return statement
    }

    /// Drops every statement (they finalize as they are released).
    mutating func removeAll() { entries.removeAll() }
}
