/// Session-level advisory locks: held until released or until the session ends, whichever comes
/// first — a process that dies, or whose connection the server ends, lets go of them.
extension PostgresConnection {
    /// Takes the session-level advisory lock `key` if it is free (`pg_try_advisory_lock`); false
    /// when another session holds it. Taking it again in the same session succeeds and stacks.
    public func tryAdvisoryLock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_try_advisory_lock($1::bigint) AS taken", [.integer(key)]).first?.bool("taken") == true
    }

    /// Releases one hold of the session-level advisory lock `key`; false when this session held none.
    @discardableResult
    public func advisoryUnlock(_ key: Int64) throws -> Bool {
        try query("SELECT pg_advisory_unlock($1::bigint) AS released", [.integer(key)]).first?.bool("released") == true
    }

    /// True when this session holds the advisory lock `key` (`pg_locks` shows a bigint key as its
    /// high half in `classid` and its low half in `objid`, with `objsubid` 1).
    public func holdsAdvisoryLock(_ key: Int64) throws -> Bool {
        let bits = UInt64(bitPattern: key)
        return try query("""
            SELECT count(*) AS held FROM pg_locks
            WHERE locktype = 'advisory' AND pid = pg_backend_pid() AND granted
              AND classid = $1::bigint::oid AND objid = $2::bigint::oid AND objsubid = 1
            """, [.integer(Int64(bits >> 32)), .integer(Int64(bits & 0xFFFF_FFFF))]).first?.int64("held") ?? 0 > 0
    }
}
