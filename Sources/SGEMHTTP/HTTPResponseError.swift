import SGEMSupport

/// An error that may reach clients: it knows its status, stable code and message.
public protocol HTTPResponseError: Error, Sendable {
    var status: Int { get }
    var code: String { get }
    var message: String { get }
    /// Extra structured facts (e.g. `{"fields": {...}}` for 422); nil by default.
    var details: JSONValue? { get }
    /// Headers to send with the error (e.g. `Allow`, `Retry-After`); empty by default.
    var headers: HTTPHeaders { get }
}

extension HTTPResponseError {
    public var details: JSONValue? { nil }
    public var headers: HTTPHeaders { HTTPHeaders() }
}

/// The general-purpose client-facing error with a status, a snake_case code and a message.
public struct APIError: HTTPResponseError, CustomStringConvertible {
    public let status: Int
    public let code: String
    public let message: String
    public let details: JSONValue?
    public let headers: HTTPHeaders

    /// An error with any status and code; prefer the named constructors below.
    public init(status: Int, code: String, message: String, details: JSONValue? = nil, headers: HTTPHeaders = .init()) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.headers = headers
    }

    public var description: String { "\(status) \(code): \(message)" }

    /// 400 `bad_request`.
    public static func badRequest(_ message: String) -> APIError { APIError(status: 400, code: "bad_request", message: message) }
    /// 400 `invalid_json`.
    public static func invalidJSON(_ message: String) -> APIError { APIError(status: 400, code: "invalid_json", message: message) }
    /// 401 `unauthenticated`.
    public static func unauthenticated(_ message: String = "authentication required") -> APIError {
        APIError(status: 401, code: "unauthenticated", message: message)
    }
    /// 403 `forbidden`.
    public static func forbidden(_ message: String = "you are not allowed to do this") -> APIError {
        APIError(status: 403, code: "forbidden", message: message)
    }
    /// 404 `not_found`.
    public static func notFound(_ message: String = "not found") -> APIError { APIError(status: 404, code: "not_found", message: message) }
    /// 409 with a specific code.
    public static func conflict(_ code: String, _ message: String) -> APIError { APIError(status: 409, code: code, message: message) }
    /// 422 `validation_failed` with `details.fields`.
    public static func validationFailed(_ fields: [String: String]) -> APIError {
        let sorted = fields.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }
        return APIError(status: 422, code: "validation_failed", message: "some fields are invalid", details: .object([("fields", .object(sorted))]))
    }
    /// 429 `rate_limited` with `Retry-After`.
    public static func rateLimited(retryAfter seconds: Int) -> APIError {
        APIError(status: 429, code: "rate_limited", message: "too many requests; retry in \(seconds) s", headers: HTTPHeaders([("Retry-After", String(seconds))]))
    }
    /// 503 `unavailable`.
    public static func unavailable(_ message: String) -> APIError { APIError(status: 503, code: "unavailable", message: message) }
    /// 413 `payload_too_large`.
    public static func payloadTooLarge(limit: Int) -> APIError {
        APIError(status: 413, code: "payload_too_large", message: "the request body exceeds \(limit) bytes")
    }
}
