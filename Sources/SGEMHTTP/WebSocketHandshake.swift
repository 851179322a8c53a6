import SGEMSupport

/// The server side of the RFC 6455 opening handshake (§4.2). No extensions, no subprotocols.
public enum WebSocketHandshake {
    /// The GUID appended to the client's key before hashing (RFC 6455 §1.3).
    static let guid = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// Validates an upgrade request and builds the `101 Switching Protocols` response,
    /// or the error to answer with (400, or 426 for an unsupported version).
    public static func response(for request: Request) -> Result<Response, APIError> {
        guard request.method == .GET else {
            return .failure(APIError(status: 405, code: "method_not_allowed", message: "a WebSocket upgrade must use GET",
                                     headers: HTTPHeaders([("Allow", "GET")])))
        }
        guard request.headers.hasToken("Upgrade", "websocket") else {
            return .failure(.badRequest("expected the header Upgrade: websocket"))
        }
        guard request.headers.hasToken("Connection", "upgrade") else {
            return .failure(.badRequest("expected the header Connection: Upgrade"))
        }
        let versions = request.headers.values("Sec-WebSocket-Version")
        guard versions.count == 1, versions[0].trimmingASCIISpaces() == "13" else {
            return .failure(APIError(status: 426, code: "upgrade_required", message: "only WebSocket version 13 is supported",
                                     headers: HTTPHeaders([("Sec-WebSocket-Version", "13")])))
        }
        let keys = request.headers.values("Sec-WebSocket-Key")
        guard keys.count == 1 else {
            return .failure(.badRequest("expected exactly one Sec-WebSocket-Key header"))
        }
        let key = keys[0].trimmingASCIISpaces()
        // 16 bytes are exactly 24 characters of padded base64.
        guard key.utf8.count == 24, let decoded = Crypto.base64Decode(key), decoded.count == 16 else {
            return .failure(.badRequest("Sec-WebSocket-Key must be the base64 encoding of 16 bytes"))
        }
        let headers = HTTPHeaders([
            ("Upgrade", "websocket"),
            ("Connection", "Upgrade"),
            ("Sec-WebSocket-Accept", acceptValue(for: key)),
        ])
        return .success(Response(status: 101, headers: headers))
    }

    /// `base64(SHA1(key + GUID))`, the value of `Sec-WebSocket-Accept`.
    public static func acceptValue(for key: String) -> String {
        Crypto.base64(Crypto.sha1(Array((key + guid).utf8)))
    }
}
