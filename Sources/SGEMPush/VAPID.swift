import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport
import Synchronization

/// The server's VAPID identity (RFC 8292): one P-256 key pair made on first start, its private
/// half sealed in the store; and the ES256 tokens it signs, one per push service origin, reused
/// until an hour before they expire.
final class VAPID: Sendable {
    let keys: P256KeyPair
    /// The public key as `GET /push/key` and the `k=` parameter give it.
    let publicKeyText: String
    private let tokens = Mutex<[String: (token: String, expires: Int64)]>([:])

    /// Tokens live 12 hours (RFC 8292 allows at most 24) and are renewed an hour before the end.
    static let lifetime: Int64 = 12 * 3600
    static let renewBefore: Int64 = 3600
    /// The name the private key is sealed under.
    static let secretName = "push.vapid_private_key"

    init(keys: P256KeyPair) {
        self.keys = keys
        publicKeyText = Crypto.base64URL(keys.publicKey)
    }

    /// The key pair in the store, or a new one stored now (sealed); another instance that made
    /// one first wins.
    static func load(store: Store, secrets: Secrets) async throws -> VAPID {
        if let found = try await PushRepository(store: store).keys(), let keys = try open(found, secrets: secrets) {
            return VAPID(keys: keys)
        }
        let made = try P256KeyPair.generate()
        let sealed = try secrets.seal(Crypto.base64URL(made.privateKey), as: secretName)
        let pub = Crypto.base64URL(made.publicKey)
        let stored = try await store.write { db -> (publicKey: String, sealedPrivateKey: String)? in
            // A key that no longer opens (the secret key file changed) is replaced: subscriptions
            // made with it stop working, and the console subscribes again with the new one.
            if let old = try PushRepository.keys(in: db), (try? open(old, secrets: secrets)) != nil { return old }
            try PushRepository.deleteKeys(in: db)
            try PushRepository.insertKeys(publicKey: pub, sealedPrivateKey: sealed, at: .now(), in: db)
            return try PushRepository.keys(in: db)
        }
        guard let stored, let keys = try open(stored, secrets: secrets) else { throw WebPushCryptoError("the VAPID key could not be stored") }
        return VAPID(keys: keys)
    }

    private static func open(_ stored: (publicKey: String, sealedPrivateKey: String), secrets: Secrets) throws -> P256KeyPair? {
        guard let text = try secrets.open(stored.sealedPrivateKey, as: secretName), let priv = WebPushCrypto.base64URLDecode(text),
              let pub = WebPushCrypto.base64URLDecode(stored.publicKey), priv.count == 32, pub.count == 65 else { return nil }
        return P256KeyPair(privateKey: priv, publicKey: pub)
    }

    /// The origin a token is for: scheme and host, the port only when it is not the default.
    static func audience(of url: HTTPClientURL) -> String { "\(url.scheme.rawValue)://\(url.hostHeader)" }

    /// The `Authorization` header for a push to `url`, signed for `contact` (`mailto:` or `https:`).
    func authorization(for url: HTTPClientURL, contact: String, now: Int64 = Timestamp.now().seconds) throws -> String {
        let audience = VAPID.audience(of: url)
        let key = audience + "\u{0}" + contact
        if let cached = tokens.withLock({ $0[key] }), cached.expires - VAPID.renewBefore > now {
            return "vapid t=\(cached.token), k=\(publicKeyText)"
        }
        let expires = now + VAPID.lifetime
        let token = try VAPID.token(audience: audience, subject: contact, expires: expires, keys: keys)
        tokens.withLock { map in
            if map.count > 1_000 { map.removeAll() }
            map[key] = (token, expires)
        }
        return "vapid t=\(token), k=\(publicKeyText)"
    }

    /// An ES256 JWT with `aud`, `exp` and `sub`.
    static func token(audience: String, subject: String, expires: Int64, keys: P256KeyPair) throws -> String {
        let header = Crypto.base64URL(Array(#"{"typ":"JWT","alg":"ES256"}"#.utf8))
        let claims: JSONValue = .object([("aud", .string(audience)), ("exp", .number(Double(expires))), ("sub", .string(subject))])
        let body = Crypto.base64URL(Array(claims.serialized().utf8))
        let signingInput = header + "." + body
        let signature = try keys.sign(Array(signingInput.utf8))
        return signingInput + "." + Crypto.base64URL(signature)
    }
}
