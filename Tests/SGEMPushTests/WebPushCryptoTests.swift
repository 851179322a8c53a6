@testable import SGEMPush
import SGEMHTTP
import SGEMSupport
import Testing

/// RFC 8291's worked example (Appendix A) and RFC 8292's ES256 tokens.
@Suite struct WebPushCryptoTests {
    static func b(_ text: String) -> [UInt8] { WebPushCrypto.base64URLDecode(text)! }

    static let plaintext = Array("When I grow up, I want to be a watermelon".utf8)
    static let receiver = P256KeyPair(privateKey: b("q1dXpw3UpT5VOmu_cf_v6ih07Aems3njxI-JWgLcM94"),
                                      publicKey: b("BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4"))
    static let sender = P256KeyPair(privateKey: b("yfWPiYE-n46HLnH0KqZOF1fJJU3MYrct3AELtAQ-oRw"),
                                    publicKey: b("BP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A8"))
    static let auth = b("BTBZMqHH6r4Tts7J_aSIgg")
    static let salt = b("DGv6ra1nlYgDCS1FRnbzlw")
    static let body = "DGv6ra1nlYgDCS1FRnbzlwAAEABBBP4z9KsN6nGRTbVYI_c7VJSPQTBtkgcy27mlmlMoZIIgDll6e3vCYLocInmYWAmS6TlzAC8wEqKK6PBru3jl7A_"
        + "yl95bQpu6cVPTpK4Mqgkf1CXztLVBSt2Ks3oZwbuwXPXLWyouBWLVWGNWQexSgSxsj_Qulcy4a-fN"

    @Test func encryptsTheRFCExampleByteForByte() throws {
        let out = try WebPushCrypto.encrypt(Self.plaintext, p256dh: Self.receiver.publicKey, auth: Self.auth, salt: Self.salt,
                                            sender: Self.sender)
        #expect(Crypto.base64URL(out) == Self.body)
    }

    @Test func decryptsTheRFCExample() throws {
        let opened = try WebPushCrypto.decrypt(Self.b(Self.body), receiver: Self.receiver, auth: Self.auth)
        #expect(opened == Self.plaintext)
    }

    @Test func aFreshEncryptionOpensAndATamperedOneDoesNot() throws {
        let device = try P256KeyPair.generate()
        let auth = Crypto.randomBytes(16)
        var body = try WebPushCrypto.encrypt(Array("hola".utf8), p256dh: device.publicKey, auth: auth)
        #expect(try WebPushCrypto.decrypt(body, receiver: device, auth: auth) == Array("hola".utf8))
        #expect(body.count == 86 + 4 + 1 + 16)
        body[body.count - 20] ^= 1
        #expect(throws: WebPushCryptoError.self) { try WebPushCrypto.decrypt(body, receiver: device, auth: auth) }
    }

    @Test func checksPublicKeys() throws {
        #expect(WebPushCrypto.isValidPublicKey(Self.receiver.publicKey))
        var off = Self.receiver.publicKey
        off[40] ^= 1
        #expect(!WebPushCrypto.isValidPublicKey(off))
        #expect(!WebPushCrypto.isValidPublicKey(Array(Self.receiver.publicKey.prefix(33))))
    }

    @Test func signsAVAPIDTokenThatVerifies() throws {
        let keys = try P256KeyPair.generate()
        let token = try VAPID.token(audience: "https://push.example.net", subject: "mailto:ops@example.com", expires: 1_800_000_000,
                                    keys: keys)
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let claims = try JSONValue.parse(Self.b(parts[1]))
        #expect(claims["aud"]?.stringValue == "https://push.example.net")
        #expect(claims["sub"]?.stringValue == "mailto:ops@example.com")
        #expect(claims["exp"]?.numberValue == 1_800_000_000)
        let signature = Self.b(parts[2])
        #expect(signature.count == 64)
        #expect(WebPushCrypto.verify(signature, of: Array((parts[0] + "." + parts[1]).utf8), publicKey: keys.publicKey))
        #expect(!WebPushCrypto.verify(signature, of: Array((parts[0] + "." + parts[1] + "x").utf8), publicKey: keys.publicKey))
    }

    @Test func reusesATokenPerOriginUntilAnHourBeforeItExpires() throws {
        let vapid = VAPID(keys: try P256KeyPair.generate())
        let url = try SGEMHTTP.HTTPClientURL("https://push.example.net/send/abc")
        let other = try SGEMHTTP.HTTPClientURL("https://push.example.net/send/def")
        let first = try vapid.authorization(for: url, contact: "mailto:a@b.c", now: 1_000_000)
        #expect(try vapid.authorization(for: other, contact: "mailto:a@b.c", now: 1_000_000 + 3600) == first)
        #expect(try vapid.authorization(for: url, contact: "mailto:a@b.c", now: 1_000_000 + VAPID.lifetime - 3599) != first)
        #expect(first.hasPrefix("vapid t=") && first.hasSuffix(", k=\(vapid.publicKeyText)"))
        #expect(VAPID.audience(of: try SGEMHTTP.HTTPClientURL("https://fcm.googleapis.com:443/x")) == "https://fcm.googleapis.com")
    }
}
