import SGEMCore
import SGEMStore
import SGEMSupport

extension AccountsRepository {
    /// Stores an invitation (its token's digest only) and returns its id.
    static func insertInvite(tokenHash: String, _ invite: InviteRequest, expiresAt: Timestamp, createdBy: Int64?,
                             createdAt: Timestamp, in db: Database) throws -> Int64 {
        try insertedID(db.fetchOne("""
            INSERT INTO accounts_invites (token_hash, role, expires_at, max_uses, uses, note, created_by, created_at)
            VALUES (\(tokenHash), \(invite.role.rawValue), \(expiresAt.milliseconds), \(invite.maxUses), 0, \(invite.note),
                    \(createdBy), \(createdAt.milliseconds))
            RETURNING id
            """))
    }

    static func invite(id: Int64, in db: Database) throws -> InviteRecord? {
        try db.fetchOne(InviteRecord.self, "SELECT \(InviteRecord.columns) FROM accounts_invites WHERE id = \(id)")
    }

    /// The invitation whose token has digest `tokenHash`, if it can still make an account at `now`.
    static func liveInvite(tokenHash: String, now: Timestamp, in db: Database) throws -> InviteRecord? {
        try db.fetchOne(InviteRecord.self, """
            SELECT \(InviteRecord.columns) FROM accounts_invites
            WHERE token_hash = \(tokenHash) AND revoked_at IS NULL AND uses < max_uses AND expires_at > \(now.milliseconds)
            """)
    }

    /// Newest first, at most `limit`: only those that can still make an account at `now`, or all.
    static func invites(liveOnly: Bool, now: Timestamp, limit: Int, in db: Database) throws -> [InviteRecord] {
        let live: SQL = liveOnly ? "WHERE revoked_at IS NULL AND uses < max_uses AND expires_at > \(now.milliseconds)" : ""
        return try db.fetchAll(InviteRecord.self, """
            SELECT \(InviteRecord.columns) FROM accounts_invites \(live) ORDER BY id DESC LIMIT \(limit)
            """)
    }

    /// Takes one use of invitation `id` if it can still make an account at `now`; false when it
    /// cannot (spent, expired, revoked, unknown). One statement, so of two registrations racing
    /// for a last use exactly one gets it.
    static func useInvite(id: Int64, now: Timestamp, in db: Database) throws -> Bool {
        try db.run("""
            UPDATE accounts_invites SET uses = uses + 1
            WHERE id = \(id) AND uses < max_uses AND revoked_at IS NULL AND expires_at > \(now.milliseconds)
            """)
        return try db.changes == 1
    }

    /// Revokes invitation `id` at `now` (a revoked one keeps its first revocation time); false
    /// when there is no such invitation.
    static func revokeInvite(id: Int64, now: Timestamp, in db: Database) throws -> Bool {
        try db.run("UPDATE accounts_invites SET revoked_at = COALESCE(revoked_at, \(now.milliseconds)) WHERE id = \(id)")
        return try db.changes == 1
    }
}
