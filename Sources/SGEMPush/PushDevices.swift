import SGEMCore
import SGEMStore
import SGEMSupport

/// The devices people subscribe to pushes, in domain words: what the controller calls.
struct PushDevices: Sendable {
    /// Devices one person may subscribe.
    static let maxPerUser = 20

    let store: Store

    /// What a browser's `PushManager.subscribe` gave, checked.
    struct Device: Sendable, Equatable {
        let endpoint: String
        let p256dh: String
        let auth: String
    }

    /// Subscribes `device` for `user`; the same endpoint again replaces its keys (and owner),
    /// `created` false. `tooManySubscriptions` when that would be one device over the limit.
    func subscribe(_ device: Device, for user: Int64) async throws -> (PushSubscription, created: Bool) {
        let now = Timestamp.now()
        guard let subscribed = try await store.write({ db in
            try PushRepository.upsert(user: user, endpoint: device.endpoint, p256dh: device.p256dh, auth: device.auth,
                                      cap: PushDevices.maxPerUser, at: now, in: db)
        }) else { throw PushError.tooManySubscriptions(limit: PushDevices.maxPerUser) }
        return subscribed
    }

    /// `user`'s devices, oldest first.
    func devices(of user: Int64) async throws -> [PushSubscription] {
        try await PushRepository(store: store).subscriptions(of: user)
    }

    /// Unsubscribes one of `user`'s devices with what was waiting for it; `subscriptionNotFound`
    /// for an id that is not one of theirs.
    func remove(_ id: Int64, of user: Int64) async throws {
        guard try await store.write({ db in try PushRepository.delete(id, of: user, in: db) }) else {
            throw PushError.subscriptionNotFound
        }
    }
}
