import SGEMHTTP

extension APIError {
    /// The contract's answer to a messaging refusal: 404 `not_found` for what the person may not
    /// see, 403 `forbidden`, 422 `validation_failed` naming the field, 409 with the refusal's code.
    init(_ error: MessagingError) {
        switch error {
        case .noSuchChat, .noSuchMessage, .noSuchUser, .notAMember: self = .notFound(error.message)
        case .needsGroupAdmin, .onlyAuthorEdits, .onlyAuthorOrAdminDeletes: self = .forbidden(error.message)
        case let .invalid(field, problem): self = .validationFailed([field: problem])
        case .alreadyMember, .chatFull, .directChatFixed, .lastAdmin, .messageDeleted, .systemMessageFixed, .tooManyContacts:
            self = .conflict(error.code, error.message)
        }
    }
}

/// The route edge of the messaging API: a `MessagingError` from a handler leaves as its `APIError`.
struct MessagingErrorMapping: Middleware {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as MessagingError {
            throw APIError(error)
        }
    }
}
