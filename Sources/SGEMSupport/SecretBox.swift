import COpenSSL

/// Seals short secrets (a provider's API key, a VAPID private key) for storage with AES-256-GCM
/// under one 32-byte key. The sealed text is `sealed:v1:<base64(nonce | ciphertext | tag)>` with
/// a fresh 12-byte nonce per value; the name a value is sealed as (a setting's key) is bound as
/// additional data, so a sealed value copied under another name fails to open.
public struct SecretBox: Sendable {
    /// Bytes of key AES-256 takes.
    public static let keyByteCount = 32
    static let nonceByteCount = 12
    static let tagByteCount = 16
    static let prefix = "sealed:v1:"

    private let key: [UInt8]

    /// A box over `key`, which must be `keyByteCount` bytes.
    public init(key: [UInt8]) throws(SecretBoxError) {
        guard key.count == SecretBox.keyByteCount else { throw .badKey("a secret key is \(SecretBox.keyByteCount) bytes, not \(key.count)") }
        self.key = key
    }

    /// A box over a fresh random key that lives in memory only (tests, and contexts built by hand).
    public static func ephemeral() -> SecretBox {
        // Cannot throw: the length is right by construction.
        try! SecretBox(key: Crypto.randomBytes(keyByteCount))
    }

    /// Whether `text` looks like something `seal` made (any version), as opposed to a clear value.
    public static func isSealed(_ text: String) -> Bool { text.hasPrefix("sealed:") }

    /// `plaintext` sealed as `name`.
    public func seal(_ plaintext: String, as name: String) throws(SecretBoxError) -> String {
        let nonce = Crypto.randomBytes(SecretBox.nonceByteCount)
        let (ciphertext, tag) = try GCMCipher(encrypting: true, key: key, nonce: nonce).encrypt(Array(plaintext.utf8), aad: Array(name.utf8))
        return SecretBox.prefix + Crypto.base64(nonce + ciphertext + tag)
    }

    /// The clear text of a value sealed as `name`. Throws `.malformed` for text that is not a
    /// sealed value of a known version and `.refused` when it does not open under this key and
    /// name (another key, another name, or altered).
    public func open(_ sealed: String, as name: String) throws(SecretBoxError) -> String {
        guard sealed.hasPrefix(SecretBox.prefix),
              let bytes = Crypto.base64Decode(sealed.dropFirst(SecretBox.prefix.count)),
              bytes.count >= SecretBox.nonceByteCount + SecretBox.tagByteCount else {
            throw .malformed
        }
        let nonce = Array(bytes.prefix(SecretBox.nonceByteCount))
        let tag = Array(bytes.suffix(SecretBox.tagByteCount))
        let ciphertext = Array(bytes[SecretBox.nonceByteCount..<(bytes.count - SecretBox.tagByteCount)])
        let plaintext = try GCMCipher(encrypting: false, key: key, nonce: nonce).decrypt(ciphertext, tag: tag, aad: Array(name.utf8))
        guard let text = String(validating: plaintext, as: UTF8.self) else { throw .malformed }
        return text
    }
}

/// Why a value could not be sealed or opened.
public enum SecretBoxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not a sealed value this version reads.
    case malformed
    /// Does not open under this key and name: sealed under another key or name, or altered.
    case refused
    /// The key is unusable.
    case badKey(String)
    /// OpenSSL failed (allocation and the like).
    case openSSL(String)

    public var description: String {
        switch self {
        case .malformed: "not a sealed value"
        case .refused: "the sealed value does not open with this key"
        case .badKey(let why): why
        case .openSSL(let why): "OpenSSL: \(why)"
        }
    }
}

/// One AES-256-GCM operation over an EVP context that is freed with it. Every OpenSSL call is
/// checked where it is made.
private final class GCMCipher {
    private let context: OpaquePointer
    private let encrypting: Bool

    init(encrypting: Bool, key: [UInt8], nonce: [UInt8]) throws(SecretBoxError) {
        guard let context = EVP_CIPHER_CTX_new() else { throw GCMCipher.failure("EVP_CIPHER_CTX_new") }
        self.context = context
        self.encrypting = encrypting
        let initialise = encrypting ? EVP_EncryptInit_ex : EVP_DecryptInit_ex
        try check(initialise(context, EVP_aes_256_gcm(), nil, nil, nil), "cipher init")
        try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_IVLEN, Int32(nonce.count), nil), "set nonce length")
        try check(initialise(context, nil, nil, key, nonce), "key init")
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    func encrypt(_ plaintext: [UInt8], aad: [UInt8]) throws(SecretBoxError) -> (ciphertext: [UInt8], tag: [UInt8]) {
        let ciphertext = try update(aad: aad, plaintext)
        var length: Int32 = 0
        var tail = [UInt8](repeating: 0, count: 16)
        try check(EVP_EncryptFinal_ex(context, &tail, &length), "encrypt final")
        var tag = [UInt8](repeating: 0, count: SecretBox.tagByteCount)
        try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_GET_TAG, Int32(tag.count), &tag), "get tag")
        return (ciphertext + tail.prefix(Int(length)), tag)
    }

    func decrypt(_ ciphertext: [UInt8], tag: [UInt8], aad: [UInt8]) throws(SecretBoxError) -> [UInt8] {
        let plaintext = try update(aad: aad, ciphertext)
        var expected = tag
        try check(EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_AEAD_SET_TAG, Int32(expected.count), &expected), "set tag")
        var length: Int32 = 0
        var tail = [UInt8](repeating: 0, count: 16)
        // A tag that does not match is the only way this fails once the context is set up.
        guard EVP_DecryptFinal_ex(context, &tail, &length) == 1 else {
            _ = Crypto.openSSLErrors()
            throw .refused
        }
        return plaintext + tail.prefix(Int(length))
    }

    /// Feeds the additional data, then `input`; returns what came out.
    private func update(aad: [UInt8], _ input: [UInt8]) throws(SecretBoxError) -> [UInt8] {
        let step = encrypting ? EVP_EncryptUpdate : EVP_DecryptUpdate
        var length: Int32 = 0
        if !aad.isEmpty { try check(step(context, nil, &length, aad, Int32(aad.count)), "additional data") }
        guard !input.isEmpty else { return [] }
        var output = [UInt8](repeating: 0, count: input.count)
        try check(step(context, &output, &length, input, Int32(input.count)), "update")
        return Array(output.prefix(Int(length)))
    }

    private func check(_ result: Int32, _ step: String) throws(SecretBoxError) {
        guard result == 1 else { throw GCMCipher.failure(step) }
    }

    private static func failure(_ step: String) -> SecretBoxError {
        .openSSL("\(step) failed: \(Crypto.openSSLErrors().first ?? "no detail")")
    }
}
