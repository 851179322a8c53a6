import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The push section of the API: the server's public key, and each person's devices.
struct PushRoutes: Sendable {
    static let maxBody = 8 * 1024
    static let maxEndpoint = 1024
    /// Devices one person may subscribe.
    static let maxPerUser = 20

    let store: Store
    let vapid: VAPID
    let worker: PushWorker
    let services: ServiceRegistry
    let policy: OutboundPolicy

    func register(_ routes: RouteGroup) {
        let user = routes.group("", middleware: [RequireUser(services: services)])
        let (store, vapid, policy) = (self.store, self.vapid, self.policy)
        let S = APISchema.self
        let subscriptionSchema = S.object(["id": S.integer, "endpoint": S.string, "createdAt": S.dateTime],
                                          required: ["id", "endpoint", "createdAt"])

        user.get("/push/key", doc: RouteDoc(
            summary: "The server's VAPID public key, for PushManager.subscribe",
            description: "An uncompressed P-256 point, base64url without padding.", tags: ["push"],
            responses: [ResponseDoc(status: 200, description: "The key", schema: S.object(["publicKey": S.string], required: ["publicKey"]))],
            authenticated: true)) { _, _ in
            .json(["publicKey": .string(vapid.publicKeyText)] as JSONValue)
        }

        user.post("/me/push-subscriptions", maxBody: PushRoutes.maxBody, doc: RouteDoc(
            summary: "Subscribe this device to pushes",
            description: """
                endpoint: the push service's https URL (at most 1024 characters); keys.p256dh: the device's uncompressed P-256 \
                point and keys.auth its 16-byte secret, both base64url. The same endpoint again replaces its keys (200). \
                At most 20 devices per person (409 too_many_subscriptions).
                """,
            tags: ["push"],
            requestSchema: S.object(["endpoint": ["type": "string", "maxLength": 1024],
                                     "keys": S.object(["p256dh": S.string, "auth": S.string], required: ["p256dh", "auth"])],
                                    required: ["endpoint", "keys"]),
            responses: [ResponseDoc(status: 201, description: "Subscribed", schema: subscriptionSchema),
                        ResponseDoc(status: 200, description: "Already subscribed: keys replaced", schema: subscriptionSchema),
                        S.error(409, "too_many_subscriptions"), S.error(422, "validation_failed")],
            authenticated: true)) { request, context in
            let me = try context.user()
            var body = try JSONBody(request)
            let endpoint = body.string("endpoint", required: true)
            if let endpoint, let problem = PushRoutes.endpointProblem(endpoint, policy: policy) { body.problem("endpoint", problem) }
            var p256dh: String?, auth: String?
            if body.fields["keys"]?.objectValue == nil { body.problem("keys", "must be an object with p256dh and auth") }
            if let keys = body.fields["keys"], keys.objectValue != nil {
                p256dh = keys["p256dh"]?.stringValue
                auth = keys["auth"]?.stringValue
                if let problem = PushRoutes.keyProblem(p256dh) { body.problem("keys.p256dh", problem) }
                if let problem = PushRoutes.authProblem(auth) { body.problem("keys.auth", problem) }
            }
            try body.check()
            let now = Timestamp.now()
            let (u, e, p, a) = (me.id, endpoint ?? "", p256dh ?? "", auth ?? "")
            guard let (subscription, created) = try await store.write({ db in
                try PushRepository.upsert(user: u, endpoint: e, p256dh: p, auth: a, cap: PushRoutes.maxPerUser, at: now, in: db)
            }) else {
                throw APIError.conflict("too_many_subscriptions",
                                        "this account already has \(PushRoutes.maxPerUser) devices subscribed; remove one first")
            }
            return .json(subscription.json, status: created ? 201 : 200)
        }

        user.get("/me/push-subscriptions", doc: RouteDoc(
            summary: "My subscribed devices", tags: ["push"],
            responses: [ResponseDoc(status: 200, description: "The devices", schema: S.object(["items": S.array(subscriptionSchema)],
                                                                                               required: ["items"]))],
            authenticated: true)) { _, context in
            let me = try context.user()
            let list = try await PushRepository(store: store).subscriptions(of: me.id)
            return .json(["items": .array(list.map(\.json))] as JSONValue)
        }

        user.delete("/me/push-subscriptions/{id}", doc: RouteDoc(
            summary: "Unsubscribe one of my devices", description: "404 for an id that is not one of mine.", tags: ["push"],
            responses: [ResponseDoc(status: 204, description: "Removed"), S.error(404, "not_found")],
            authenticated: true)) { request, context in
            let me = try context.user()
            guard let text = request.parameters["id"], let id = Int64(text), id > 0 else { throw APIError.notFound("no such subscription") }
            guard try await store.write({ db in try PushRepository.delete(id, of: me.id, in: db) }) else {
                throw APIError.notFound("no such subscription")
            }
            return .noContent()
        }
    }

    /// Why `endpoint` cannot be a push service's URL: https only (http only for a destination the
    /// outbound allow list names, a test push service), at most 1024 characters, no credentials.
    static func endpointProblem(_ endpoint: String, policy: OutboundPolicy) -> String? {
        guard endpoint.utf8.count <= maxEndpoint else { return "must be at most \(maxEndpoint) characters" }
        guard let url = try? HTTPClientURL(endpoint), !endpoint.contains("@"), !endpoint.contains(where: \.isWhitespace) else {
            return "must be an https URL"
        }
        if url.scheme == .https { return nil }
        if let address = IPAddress(url.host), !policy.exceptions.isEmpty,
           policy.refusal(host: url.host, address: address, port: url.port, localAddresses: []) == nil,
           OutboundPolicy.kind(of: address) != nil {
            return nil
        }
        return "must be an https URL"
    }

    static func keyProblem(_ p256dh: String?) -> String? {
        guard let p256dh, p256dh.utf8.count <= 200, let bytes = WebPushCrypto.base64URLDecode(p256dh), bytes.count == 65,
              WebPushCrypto.isValidPublicKey(bytes) else { return "must be a P-256 public key (65 bytes, uncompressed) in base64url" }
        return nil
    }

    static func authProblem(_ auth: String?) -> String? {
        guard let auth, auth.utf8.count <= 40, let bytes = WebPushCrypto.base64URLDecode(auth), bytes.count == 16 else {
            return "must be 16 bytes in base64url"
        }
        return nil
    }
}
