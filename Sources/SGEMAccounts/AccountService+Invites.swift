import SGEMCore
import SGEMStore
import SGEMSupport

/// Invitations, for the API and `admin invite`: each change is one write transaction with its
/// audit entry.
extension AccountService {
    /// Most invitations one listing returns, newest first.
    static let maxInvitesListed = 200

    /// Makes an invitation and returns it with its token, which is stored only as a digest and so
    /// can be shown this once.
    func createInvite(_ request: InviteRequest, actor: Actor) async throws -> (invite: InviteRecord, token: String) {
        let now = clock()
        let (token, hash) = InviteRules.makeToken()
        let expiresAt = Timestamp(milliseconds: now.milliseconds + Int64(request.days) * 86_400_000)
        let invite = try await store.write { db in
            let id = try AccountsRepository.insertInvite(tokenHash: hash, request, expiresAt: expiresAt, createdBy: actor.userID, createdAt: now, in: db)
            try AccountService.audit(db, "invite.created", actor: actor, targetID: nil, login: nil,
                                     detail: "invite \(id): \(request.role.rawValue), \(request.maxUses) use\(request.maxUses == 1 ? "" : "s"), "
                                        + "\(request.days) day\(request.days == 1 ? "" : "s")" + (request.note.map { ", note: \($0)" } ?? ""))
            guard let invite = try AccountsRepository.invite(id: id, in: db) else { throw AccountsError.noSuchInvitation }
            return invite
        }
        return (invite, token)
    }

    /// Newest first: those that can still make an account, or every one (`all`).
    func invites(all: Bool) async throws -> [InviteRecord] {
        let now = clock()
        return try await store.read { db in
            try AccountsRepository.invites(liveOnly: !all, now: now, limit: AccountService.maxInvitesListed, in: db)
        }
    }

    /// Revokes invitation `id` at once; `noSuchInvitation` when there is none. Revoking twice keeps the first time.
    func revokeInvite(id: Int64, actor: Actor) async throws {
        let now = clock()
        try await store.write { db in
            guard try AccountsRepository.revokeInvite(id: id, now: now, in: db) else { throw AccountsError.noSuchInvitation }
            try AccountService.audit(db, "invite.revoked", actor: actor, targetID: nil, login: nil, detail: "invite \(id)")
        }
    }

    /// The invitation `token` opens, if it can still make an account; nil for every other token.
    func liveInvite(token: String) async throws -> InviteRecord? {
        guard !token.isEmpty, token.utf8.count <= InviteRules.maxTokenLength else { return nil }
        let now = clock()
        let hash = InviteRules.hash(token)
        return try await store.read { db in try AccountsRepository.liveInvite(tokenHash: hash, now: now, in: db) }
    }
}
