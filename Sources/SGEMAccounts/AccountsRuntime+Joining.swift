import SGEMContracts
import SGEMCore

extension AccountsRuntime {
    /// The invitation `token` opens, or `inviteNotFound` for every token that opens none. A wrong
    /// token counts against the client `address` like a wrong password.
    func checkedInvite(_ token: String, from address: String) async throws -> InviteRecord {
        let attempt = try await throttle.reserveInviteLookup(address: address)
        let invite: InviteRecord?
        do {
            invite = try await service.liveInvite(token: token)
        } catch {
            try? await throttle.release(attempt)
            throw error
        }
        guard let invite else {
            try await throttle.fail(attempt)
            throw AccountsError.inviteNotFound
        }
        try? await throttle.release(attempt)
        return invite
    }

    /// The company's name, nil until an admin gives one or without the company module.
    func companyName() async throws -> String? {
        try await registry.resolve((any CompanyNameProvider).self)?.companyName()
    }
}
