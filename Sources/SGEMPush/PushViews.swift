// What the push API answers, as `Encodable` values written in the contract's key order
// (`Response.json`). Their OpenAPI schemas are in `PushAPI.swift`, and `ViewSchemaTests` checks
// that the two agree.

/// `{publicKey}`: the server's VAPID public key.
struct PushKeyView: Encodable, Sendable {
    let publicKey: String
}

/// One subscribed device, without its keys.
struct SubscriptionView: Encodable, Sendable {
    let id: Int64
    let endpoint: String
    let createdAt: String

    init(_ subscription: PushSubscription) {
        (id, endpoint, createdAt) = (subscription.id, subscription.endpoint, subscription.createdAt.rfc3339())
    }
}

/// `{items: [...]}`: a person's devices.
struct SubscriptionListView: Encodable, Sendable {
    let items: [SubscriptionView]
}
