import Testing
import SGEMSupport

/// AES-256-GCM sealing: what opens, and everything that must not.
@Suite struct SecretBoxTests {
    let box = try! SecretBox(key: Array(0..<32))

    @Test(arguments: ["k-123:fx", "", "ключ — 鍵 🔑", String(repeating: "x", count: 512)])
    func aSealedValueOpensUnderTheSameKeyAndName(_ secret: String) throws {
        let sealed = try box.seal(secret, as: "translation.api_key")
        #expect(sealed.hasPrefix("sealed:v1:"))
        #expect(SecretBox.isSealed(sealed))
        #expect(secret.isEmpty || !sealed.contains(secret))
        #expect(try box.open(sealed, as: "translation.api_key") == secret)
    }

    @Test func everySealingTakesAFreshNonce() throws {
        let first = try box.seal("same key", as: "n")
        let second = try box.seal("same key", as: "n")
        #expect(first != second)
        // nonce (12) + ciphertext (8) + tag (16)
        #expect(Crypto.base64Decode(first.dropFirst("sealed:v1:".count))?.count == 36)
    }

    @Test func anotherKeyOrAnotherNameIsRefused() throws {
        let sealed = try box.seal("k-123:fx", as: "translation.api_key")
        let other = try SecretBox(key: Array(repeating: 7, count: 32))
        #expect(throws: SecretBoxError.refused) { try other.open(sealed, as: "translation.api_key") }
        #expect(throws: SecretBoxError.refused) { try box.open(sealed, as: "push.vapid_private_key") }
    }

    /// Flipping one bit anywhere — nonce, ciphertext or tag — makes the value refuse to open.
    @Test(arguments: [0, 11, 12, 19, 20, 35])
    func aTamperedValueIsRefused(_ byte: Int) throws {
        let sealed = try box.seal("k-123:fx", as: "n")
        var bytes = try #require(Crypto.base64Decode(sealed.dropFirst("sealed:v1:".count)))
        bytes[byte] ^= 0x01
        #expect(throws: SecretBoxError.refused) { try box.open("sealed:v1:" + Crypto.base64(bytes), as: "n") }
    }

    @Test(arguments: ["k-123:fx", "sealed:v1:", "sealed:v1:!!!!", "sealed:v1:" + Crypto.base64([UInt8](repeating: 1, count: 27)),
                      "sealed:v2:" + Crypto.base64([UInt8](repeating: 1, count: 40))])
    func whatIsNotASealedValueIsMalformed(_ text: String) {
        #expect(throws: SecretBoxError.malformed) { try box.open(text, as: "n") }
    }

    @Test func aKeyMustBeThirtyTwoBytes() {
        #expect(throws: SecretBoxError.self) { try SecretBox(key: Array(repeating: 1, count: 16)) }
        #expect(throws: Never.self) { try SecretBox(key: Array(repeating: 1, count: 32)) }
    }
}
