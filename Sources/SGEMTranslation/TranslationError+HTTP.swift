import SGEMHTTP

/// The route edge's reading of `TranslationError`: each case's status, stable code and headers.
extension TranslationError: HTTPResponseError {
    var status: Int {
        switch self {
        case .messageNotFound, .noticeNotFound, .chatNotFound: 404
        case .systemMessage, .messageDeleted: 409
        case .rateLimited: 429
        }
    }

    var code: String {
        switch self {
        case .messageNotFound, .noticeNotFound, .chatNotFound: "not_found"
        case .systemMessage: "system_message"
        case .messageDeleted: "message_deleted"
        case .rateLimited: "rate_limited"
        }
    }

    var headers: HTTPHeaders {
        guard case let .rateLimited(seconds) = self else { return HTTPHeaders() }
        return HTTPHeaders([("Retry-After", String(seconds))])
    }
}
