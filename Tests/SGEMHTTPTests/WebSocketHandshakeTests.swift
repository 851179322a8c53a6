import SGEMHTTP
import SGEMSupport
import Testing

@Suite struct WebSocketHandshakeTests {
    static func upgradeRequest(_ overrides: [(String, String?)] = [], method: HTTPMethod = .GET) -> Request {
        var fields: [(String, String)] = [
            ("Host", "example.com"),
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ=="),
            ("Sec-WebSocket-Version", "13"),
        ]
        for (name, value) in overrides {
            fields.removeAll { $0.0.lowercased() == name.lowercased() }
            if let value { fields.append((name, value)) }
        }
        return Request(method: method, target: "/ws", headers: HTTPHeaders(fields))
    }

    @Test func acceptsTheRFCSampleWithTheRFCAcceptValue() throws {
        let response = try WebSocketHandshake.response(for: Self.upgradeRequest()).get()
        #expect(response.status == 101)
        // The value printed in RFC 6455 §1.3 (checked independently with Python's hashlib).
        #expect(response.headers["Sec-WebSocket-Accept"] == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        #expect(response.headers["Upgrade"] == "websocket")
        #expect(response.headers["Connection"] == "Upgrade")
        #expect(!response.headers.contains("Sec-WebSocket-Extensions"))
        #expect(!response.headers.contains("Sec-WebSocket-Protocol"))
        #expect(response.body.isEmpty)
    }

    @Test func acceptValueIsSHA1OfKeyAndGUID() {
        let key = Crypto.base64(Crypto.randomBytes(16))
        let expected = Crypto.base64(Crypto.sha1(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8)))
        #expect(WebSocketHandshake.acceptValue(for: key) == expected)
        #expect(WebSocketHandshake.acceptValue(for: key) != WebSocketHandshake.acceptValue(for: Crypto.base64(Crypto.randomBytes(16))))
    }

    @Test(arguments: [
        [("Upgrade", "WebSocket"), ("Connection", "keep-alive, Upgrade")],
        [("Upgrade", "websocket"), ("Connection", "UPGRADE")],
        [("Sec-WebSocket-Extensions", "permessage-deflate"), ("Sec-WebSocket-Protocol", "chat")],
    ] as [[(String, String?)]])
    func acceptsTokenListsAndIgnoresUnsupportedNegotiation(overrides: [(String, String?)]) throws {
        let response = try WebSocketHandshake.response(for: Self.upgradeRequest(overrides)).get()
        #expect(response.status == 101)
        #expect(!response.headers.contains("Sec-WebSocket-Extensions"))
        #expect(!response.headers.contains("Sec-WebSocket-Protocol"))
    }

    struct Rejection: CustomTestStringConvertible, Sendable {
        let name: String
        let overrides: [(String, String?)]
        var method: HTTPMethod = .GET
        let status: Int
        var testDescription: String { name }
    }

    static let rejections: [Rejection] = [
        Rejection(name: "missing key", overrides: [("Sec-WebSocket-Key", nil)], status: 400),
        Rejection(name: "key of 15 bytes", overrides: [("Sec-WebSocket-Key", Crypto.base64(Crypto.randomBytes(15)))], status: 400),
        Rejection(name: "key not base64", overrides: [("Sec-WebSocket-Key", "not base64 at all!!!!!!!")], status: 400),
        Rejection(name: "missing Upgrade", overrides: [("Upgrade", nil)], status: 400),
        Rejection(name: "Upgrade to another protocol", overrides: [("Upgrade", "h2c")], status: 400),
        Rejection(name: "Connection without upgrade", overrides: [("Connection", "keep-alive")], status: 400),
        Rejection(name: "version 8", overrides: [("Sec-WebSocket-Version", "8")], status: 426),
        Rejection(name: "missing version", overrides: [("Sec-WebSocket-Version", nil)], status: 426),
        Rejection(name: "POST", overrides: [], method: .POST, status: 405),
    ]

    @Test(arguments: rejections)
    func rejectsBadUpgrades(rejection: Rejection) {
        switch WebSocketHandshake.response(for: Self.upgradeRequest(rejection.overrides, method: rejection.method)) {
        case .success(let response):
            Issue.record("accepted with status \(response.status)")
        case .failure(let error):
            #expect(error.status == rejection.status)
            if rejection.status == 426 {
                #expect(error.headers["Sec-WebSocket-Version"] == "13")
            }
        }
    }
}
