import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The push section of the API: the server's public key, and each person's devices.
struct PushController: Sendable {
    let devices: PushDevices
    let vapid: VAPID
    let policy: OutboundPolicy

    /// On `signedIn`, a group of signed-in users.
    func register(_ signedIn: RouteGroup) {
        signedIn.get("/push/key", doc: Self.keyDoc, key)
        signedIn.post("/me/push-subscriptions", maxBody: PushAPI.maxBody, doc: Self.subscribeDoc, subscribe)
        signedIn.get("/me/push-subscriptions", doc: Self.listDoc, list)
        signedIn.delete("/me/push-subscriptions/{id}", doc: Self.unsubscribeDoc, unsubscribe)
    }

    static let keyDoc = RouteDoc(
        summary: "The server's VAPID public key, for PushManager.subscribe",
        description: "An uncompressed P-256 point, base64url without padding.", tags: ["push"],
        responses: [ResponseDoc(status: 200, description: "The key", schema: PushAPI.keySchema)],
        authenticated: true)

    func key(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(PushKeyView(publicKey: vapid.publicKeyText))
    }

    static let subscribeDoc = RouteDoc(
        summary: "Subscribe this device to pushes",
        description: """
            endpoint: the push service's https URL (at most 1024 characters); keys.p256dh: the device's uncompressed P-256 \
            point and keys.auth its 16-byte secret, both base64url. The same endpoint again replaces its keys (200). \
            At most 20 devices per person (409 too_many_subscriptions).
            """,
        tags: ["push"],
        requestSchema: APISchema.object(["endpoint": ["type": "string", "maxLength": 1024],
                                         "keys": APISchema.object(["p256dh": APISchema.string, "auth": APISchema.string],
                                                                  required: ["p256dh", "auth"])],
                                        required: ["endpoint", "keys"]),
        responses: [ResponseDoc(status: 201, description: "Subscribed", schema: PushAPI.subscriptionSchema),
                    ResponseDoc(status: 200, description: "Already subscribed: keys replaced", schema: PushAPI.subscriptionSchema),
                    APISchema.error(409, "too_many_subscriptions"), APISchema.error(422, "validation_failed")],
        authenticated: true)

    func subscribe(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        let body = try SubscriptionBody(request, policy: policy)
        let (subscription, created) = try await devices.subscribe(body.device, for: me.id)
        return .json(SubscriptionView(subscription), status: created ? 201 : 200)
    }

    static let listDoc = RouteDoc(
        summary: "My subscribed devices", tags: ["push"],
        responses: [ResponseDoc(status: 200, description: "The devices", schema: PushAPI.listSchema)],
        authenticated: true)

    func list(_ request: Request, _ context: RequestContext) async throws -> Response {
        .json(SubscriptionListView(items: try await devices.devices(of: try context.user().id).map(SubscriptionView.init)))
    }

    static let unsubscribeDoc = RouteDoc(
        summary: "Unsubscribe one of my devices", description: "404 for an id that is not one of mine.", tags: ["push"],
        responses: [ResponseDoc(status: 204, description: "Removed"), APISchema.error(404, "not_found")],
        authenticated: true)

    func unsubscribe(_ request: Request, _ context: RequestContext) async throws -> Response {
        let me = try context.user()
        guard let id = Int64(request.parameters["id"] ?? ""), id > 0 else { throw PushError.subscriptionNotFound }
        try await devices.remove(id, of: me.id)
        return .noContent()
    }
}
