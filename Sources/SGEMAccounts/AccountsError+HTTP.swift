import SGEMHTTP
import SGEMSupport

extension AccountsError {
    /// The API's answer: status, stable code, the same message.
    var apiError: APIError {
        switch self {
        case .userNotFound, .noSuchInvitation: return .notFound(message)
        case .usernameTaken, .usernameOrEmailTaken: return .conflict("username_taken", message)
        case .emailTaken: return .conflict("email_taken", message)
        case .lastAdmin: return .conflict("last_admin", message)
        case .setupClosed: return APIError(status: 403, code: "setup_closed", message: message)
        case .inviteNotFound: return APIError(status: 404, code: "invite_not_found", message: message)
        case .unknownCursor: return .validationFailed(["after": "must be the id of a user"])
        case .invalidCredentials: return APIError(status: 401, code: "invalid_credentials", message: message)
        case .accountInactive: return APIError(status: 403, code: "account_inactive", message: message)
        case .registrationClosed: return APIError(status: 403, code: "registration_closed", message: message)
        case .wrongCurrentPassword: return .validationFailed(["currentPassword": "is not your current password"])
        case let .throttled(seconds): return .rateLimited(retryAfter: seconds)
        case let .hasherBusy(seconds):
            return APIError(status: 503, code: "busy", message: message, headers: HTTPHeaders([("Retry-After", String(seconds))]))
        case .sessionExpired: return APIError(status: 401, code: "session_expired", message: message)
        case .badAuthorization: return .unauthenticated(message)
        case .csrfFailed: return APIError(status: 403, code: "csrf_failed", message: message)
        }
    }
}

/// The route edge of the accounts module: its domain errors leave as the API's errors.
struct AccountsErrorMapping: Middleware {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as AccountsError {
            throw error.apiError
        }
    }
}
