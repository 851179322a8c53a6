import FoundationEssentials
import SGEMSupport

/// One HTTP response: status, headers, body. `Content-Length` is added when it is written.
public struct Response: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    /// A response with raw bytes.
    public init(status: Int = 200, headers: HTTPHeaders = .init(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// `value` encoded as JSON, keys sorted; an encoding failure becomes a 500 error body.
    public static func json<T: Encodable>(_ value: T, status: Int = 200) -> Response {
        do {
            let encoder = JSONEncoder()
            // JSONEncoder's own key order changes from one run to the next; sorted, the same value
            // always gives the same bytes. Slashes stay unescaped, as `JSONValue` writes them.
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            let data = try encoder.encode(value)
            return Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(data))
        } catch {
            return .error(APIError(status: 500, code: "internal", message: "internal error; the response could not be encoded"))
        }
    }

    /// A `JSONValue` serialised in its own key order.
    public static func json(_ value: JSONValue, status: Int = 200) -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: value.serializedBytes())
    }

    /// A text body.
    public static func text(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: Array(text.utf8))
    }

    /// 204 with no body.
    public static func noContent() -> Response { Response(status: 204) }

    /// The contract error shape `{"error":{"code","message","details"?}}` plus the error's headers.
    public static func error(_ error: any HTTPResponseError, requestID: String? = nil) -> Response {
        var inner: [(String, JSONValue)] = [("code", .string(error.code)), ("message", .string(error.message))]
        if let details = error.details { inner.append(("details", details)) }
        if let requestID { inner.append(("requestId", .string(requestID))) }
        var headers = error.headers
        headers.set("Content-Type", "application/json")
        return Response(status: error.status, headers: headers, body: JSONValue.object([("error", .object(inner))]).serializedBytes())
    }
}
