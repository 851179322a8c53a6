import COpenSSL
import SGEMSupport

/// A failure of Web Push's cryptography: a key that is not a P-256 point, or OpenSSL refusing.
struct WebPushCryptoError: Error, Sendable, Equatable, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// A P-256 key pair as raw bytes: the 32-byte private scalar and the 65-byte uncompressed point.
struct P256KeyPair: Sendable, Equatable {
    let privateKey: [UInt8]
    let publicKey: [UInt8]

    init(privateKey: [UInt8], publicKey: [UInt8]) {
        self.privateKey = privateKey
        self.publicKey = publicKey
    }

    /// A fresh key pair.
    static func generate() throws(WebPushCryptoError) -> P256KeyPair {
        var priv = [UInt8](repeating: 0, count: 32), pub = [UInt8](repeating: 0, count: 65)
        guard sgem_p256_generate(&priv, &pub) == 1 else { throw WebPushCryptoError("cannot make a P-256 key: \(WebPushCrypto.detail())") }
        return P256KeyPair(privateKey: priv, publicKey: pub)
    }

    /// The shared secret (x coordinate) with `peer`'s uncompressed point.
    func sharedSecret(with peer: [UInt8]) throws(WebPushCryptoError) -> [UInt8] {
        guard peer.count == 65, publicKey.count == 65, privateKey.count == 32 else { throw WebPushCryptoError("keys of the wrong length") }
        var secret = [UInt8](repeating: 0, count: 32)
        guard sgem_p256_ecdh(privateKey, publicKey, peer, &secret) == 1 else {
            throw WebPushCryptoError("ECDH failed: \(WebPushCrypto.detail())")
        }
        return secret
    }

    /// The ES256 signature of `message` as JWS carries it (r‖s, 64 bytes).
    func sign(_ message: [UInt8]) throws(WebPushCryptoError) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        guard sgem_p256_sign(privateKey, publicKey, message, message.count, &signature) == 1 else {
            throw WebPushCryptoError("signing failed: \(WebPushCrypto.detail())")
        }
        return signature
    }
}

/// RFC 8291's message encryption (`aes128gcm`, RFC 8188, one record) and its primitives.
enum WebPushCrypto {
    /// The record size written in the header; one record carries the whole payload.
    static let recordSize: UInt32 = 4096
    /// The largest plaintext one record holds: 4096 − 16 (tag) − 1 (delimiter).
    static let maxPlaintext = 4079

    /// Whether `point` is an uncompressed point on P-256 (a subscription's `p256dh`).
    static func isValidPublicKey(_ point: [UInt8]) -> Bool {
        point.count == 65 && sgem_p256_check_public(point) == 1
    }

    static func hkdf(salt: [UInt8], ikm: [UInt8], info: [UInt8], count: Int) throws(WebPushCryptoError) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: count)
        guard sgem_hkdf_sha256(salt, salt.count, ikm, ikm.count, info, info.count, &out, count) == 1 else {
            throw WebPushCryptoError("HKDF failed")
        }
        return out
    }

    /// The content encryption key and nonce for `salt`, from the ECDH secret and the auth secret
    /// (RFC 8291 §3.3–3.4, RFC 8188 §2.2–2.3).
    static func keys(shared: [UInt8], auth: [UInt8], receiver: [UInt8], sender: [UInt8],
                     salt: [UInt8]) throws(WebPushCryptoError) -> (key: [UInt8], nonce: [UInt8]) {
        let keyInfo = Array("WebPush: info".utf8) + [0] + receiver + sender
        let ikm = try hkdf(salt: auth, ikm: shared, info: keyInfo, count: 32)
        let cek = try hkdf(salt: salt, ikm: ikm, info: Array("Content-Encoding: aes128gcm".utf8) + [0], count: 16)
        let nonce = try hkdf(salt: salt, ikm: ikm, info: Array("Content-Encoding: nonce".utf8) + [0], count: 12)
        return (cek, nonce)
    }

    /// `plaintext` encrypted for the subscription (`p256dh`, `auth`): the whole request body,
    /// header (salt, record size, the sender's public key) then the one record. `salt` and
    /// `sender` are fresh unless given (the RFC's example fixes them).
    static func encrypt(_ plaintext: [UInt8], p256dh: [UInt8], auth: [UInt8], salt: [UInt8]? = nil,
                        sender: P256KeyPair? = nil) throws(WebPushCryptoError) -> [UInt8] {
        guard plaintext.count <= maxPlaintext else { throw WebPushCryptoError("payload too large") }
        guard auth.count == 16 else { throw WebPushCryptoError("the auth secret must be 16 bytes") }
        guard p256dh.count == 65 else { throw WebPushCryptoError("the receiver's key must be 65 bytes") }
        let salt = salt ?? Crypto.randomBytes(16)
        let senderPublic: [UInt8], shared: [UInt8]
        if let sender {
            senderPublic = sender.publicKey
            shared = try sender.sharedSecret(with: p256dh)
        } else {
            var pub = [UInt8](repeating: 0, count: 65), secret = [UInt8](repeating: 0, count: 32)
            guard sgem_p256_ephemeral_ecdh(p256dh, &pub, &secret) == 1 else { throw WebPushCryptoError("ECDH failed: \(detail())") }
            (senderPublic, shared) = (pub, secret)
        }
        let (key, nonce) = try keys(shared: shared, auth: auth, receiver: p256dh, sender: senderPublic, salt: salt)
        let record = plaintext + [0x02]
        var sealed = [UInt8](repeating: 0, count: record.count + 16)
        guard sgem_aes128gcm_seal(key, nonce, record, record.count, &sealed) == 1 else {
            throw WebPushCryptoError("AES-GCM failed: \(detail())")
        }
        var body = salt
        body.reserveCapacity(86 + sealed.count)
        body += [UInt8(recordSize >> 24), UInt8(recordSize >> 16 & 0xFF), UInt8(recordSize >> 8 & 0xFF), UInt8(recordSize & 0xFF)]
        body.append(UInt8(senderPublic.count))
        body += senderPublic
        body += sealed
        return body
    }

    /// The reverse, as a browser does it with its key pair and auth secret (tests, the benchmark).
    static func decrypt(_ body: [UInt8], receiver: P256KeyPair, auth: [UInt8]) throws(WebPushCryptoError) -> [UInt8] {
        guard body.count > 21 else { throw WebPushCryptoError("too short") }
        let salt = Array(body[0..<16])
        let idLength = Int(body[20])
        guard idLength == 65, body.count >= 21 + idLength + 17 else { throw WebPushCryptoError("bad header") }
        let sender = Array(body[21..<(21 + idLength)])
        let record = Array(body[(21 + idLength)...])
        let shared = try receiver.sharedSecret(with: sender)
        let (key, nonce) = try keys(shared: shared, auth: auth, receiver: receiver.publicKey, sender: sender, salt: salt)
        var opened = [UInt8](repeating: 0, count: record.count - 16)
        guard sgem_aes128gcm_open(key, nonce, record, record.count, &opened) == 1 else { throw WebPushCryptoError("does not open") }
        // Padding: zeros after the content, then the last record's delimiter 0x02.
        guard let end = opened.lastIndex(where: { $0 != 0 }), opened[end] == 0x02 else { throw WebPushCryptoError("no delimiter") }
        return Array(opened[..<end])
    }

    /// Whether `signature` (r‖s) is `publicKey`'s ES256 signature of `message`.
    static func verify(_ signature: [UInt8], of message: [UInt8], publicKey: [UInt8]) -> Bool {
        signature.count == 64 && publicKey.count == 65 && sgem_p256_verify(publicKey, message, message.count, signature) == 1
    }

    static func detail() -> String { Crypto.openSSLErrors().first ?? "no detail" }

    /// base64url without padding, as Web Push writes keys.
    static func base64URLDecode(_ text: String) -> [UInt8]? {
        guard !text.isEmpty, text.utf8.allSatisfy({ c in
            (0x41...0x5A).contains(c) || (0x61...0x7A).contains(c) || (0x30...0x39).contains(c) || c == 0x2D || c == 0x5F || c == 0x3D
        }) else { return nil }
        var standard = String(text.map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }.filter { $0 != "=" })
        while standard.utf8.count % 4 != 0 { standard += "=" }
        return Crypto.base64Decode(standard)
    }
}
