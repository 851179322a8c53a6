import SGEMCore
import SGEMStore
import SGEMSupport

extension AccountsRepository {
    /// Stores an invitation (its token's digest only) and returns its id.
    func insertInvite(_ db: Database, tokenHash: String, _ invite: InviteRequest, expiresAt: Timestamp, createdBy: Int64?,
                      createdAt: Timestamp) throws -> Int64 {
        let row = try db.queryOne("""
            INSERT INTO accounts_invites (token_hash, role, expires_at, max_uses, uses, note, created_by, created_at)
            VALUES (?, ?, ?, ?, 0, ?, ?, ?) RETURNING id
            """, tokenHash, invite.role.rawValue, expiresAt.milliseconds, invite.maxUses, invite.note, createdBy,
            createdAt.milliseconds)
        return row?.int64("id") ?? db.lastInsertRowID
    }

    func invite(_ db: Database, id: Int64) throws -> InviteRecord? {
        try db.queryOne("SELECT \(InviteRecord.columns) FROM accounts_invites WHERE id = ?", id).map(InviteRecord.init(row:))
    }

    /// The invitation whose token has digest `tokenHash`, if it can still make an account at `now`.
    func liveInvite(_ db: Database, tokenHash: String, now: Timestamp) throws -> InviteRecord? {
        try db.queryOne("""
            SELECT \(InviteRecord.columns) FROM accounts_invites
            WHERE token_hash = ? AND revoked_at IS NULL AND uses < max_uses AND expires_at > ?
            """, tokenHash, now.milliseconds).map(InviteRecord.init(row:))
    }

    /// Newest first, at most `limit`: only those that can still make an account at `now`, or all.
    func invites(_ db: Database, liveOnly: Bool, now: Timestamp, limit: Int) throws -> [InviteRecord] {
        // An integer flag, not a boolean: `? = 0` types the same on every backend.
        let live: Int64 = liveOnly ? 1 : 0
        return try db.query("""
            SELECT \(InviteRecord.columns) FROM accounts_invites
            WHERE ? = 0 OR (revoked_at IS NULL AND uses < max_uses AND expires_at > ?)
            ORDER BY id DESC LIMIT ?
            """, live, now.milliseconds, limit).map(InviteRecord.init(row:))
    }

    /// Takes one use of invitation `id` if it can still make an account at `now`; false when it
    /// cannot (spent, expired, revoked, unknown). One statement, so of two registrations racing
    /// for a last use exactly one gets it.
    func useInvite(_ db: Database, id: Int64, now: Timestamp) throws -> Bool {
        try db.execute("""
            UPDATE accounts_invites SET uses = uses + 1
            WHERE id = ? AND uses < max_uses AND revoked_at IS NULL AND expires_at > ?
            """, id, now.milliseconds)
        return db.changes == 1
    }

    /// Revokes invitation `id` at `now` (a revoked one keeps its first revocation time); false
    /// when there is no such invitation.
    func revokeInvite(_ db: Database, id: Int64, now: Timestamp) throws -> Bool {
        try db.execute("UPDATE accounts_invites SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?", now.milliseconds, id)
        return db.changes == 1
    }
}
