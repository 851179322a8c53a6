import SGEMHTTP
import SGEMSupport

/// `POST /me/push-subscriptions`: `{endpoint, keys: {p256dh, auth}}`, as `PushManager.subscribe`
/// gives it, read once with the contract's checks (422 `validation_failed` naming every bad field).
struct SubscriptionBody {
    static let maxEndpoint = 1024

    let device: PushDevices.Device

    /// `policy` says which plain-http endpoints are allowed (a test push service on loopback).
    init(_ request: Request, policy: OutboundPolicy) throws {
        var body = try JSONBody(request)
        let endpoint = body.string("endpoint", required: true)
        if let endpoint, let problem = SubscriptionBody.endpointProblem(endpoint, policy: policy) { body.problem("endpoint", problem) }
        var p256dh: String?, auth: String?
        if body.fields["keys"]?.objectValue == nil { body.problem("keys", "must be an object with p256dh and auth") }
        if let keys = body.fields["keys"], keys.objectValue != nil {
            p256dh = keys["p256dh"]?.stringValue
            auth = keys["auth"]?.stringValue
            if let problem = SubscriptionBody.keyProblem(p256dh) { body.problem("keys.p256dh", problem) }
            if let problem = SubscriptionBody.authProblem(auth) { body.problem("keys.auth", problem) }
        }
        try body.check()
        device = PushDevices.Device(endpoint: endpoint ?? "", p256dh: p256dh ?? "", auth: auth ?? "")
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

    /// Why `p256dh` is not the device's public key: 65 bytes, an uncompressed P-256 point, base64url.
    static func keyProblem(_ p256dh: String?) -> String? {
        guard let p256dh, p256dh.utf8.count <= 200, let bytes = WebPushCrypto.base64URLDecode(p256dh), bytes.count == 65,
              WebPushCrypto.isValidPublicKey(bytes) else { return "must be a P-256 public key (65 bytes, uncompressed) in base64url" }
        return nil
    }

    /// Why `auth` is not the device's 16-byte secret in base64url.
    static func authProblem(_ auth: String?) -> String? {
        guard let auth, auth.utf8.count <= 40, let bytes = WebPushCrypto.base64URLDecode(auth), bytes.count == 16 else {
            return "must be 16 bytes in base64url"
        }
        return nil
    }
}
