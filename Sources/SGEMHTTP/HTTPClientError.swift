/// Why an outbound request failed: a stable code, a readable message.
public struct HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Stable machine-readable reason; callers (translation providers, the feed fetcher) map these.
    public enum Code: String, Sendable {
        case invalidURL = "invalid_url"
        case invalidRequest = "invalid_request"
        case resolveFailed = "resolve_failed"
        case connectFailed = "connect_failed"
        case connectTimeout = "connect_timeout"
        case timeout = "timeout"
        case tlsFailed = "tls_failed"
        case tooLarge = "too_large"
        case badResponse = "bad_response"
        case tooManyRedirects = "too_many_redirects"
        case redirectRefused = "redirect_refused"
        /// The destination is inside the network or on this machine (`OutboundPolicy`): it was
        /// never connected to.
        case refusedDestination = "refused_destination"
        case cancelled = "cancelled"
    }

    public let code: Code
    public let message: String

    /// An error with `code` and a message saying what happened.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code.rawValue): \(message)" }
}
