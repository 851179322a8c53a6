/// Why a messaging operation was refused, in domain words: what `Messenger` throws. The routes
/// answer it as the contract's error (see `MessagingError+HTTP.swift`); anything else that would
/// report it says `message`, which reads on its own.
enum MessagingError: Error, Sendable, Equatable {
    /// No such chat, or one the person is not a member of (the same to them).
    case noSuchChat
    /// No such message, or one in a chat the person is not a member of.
    case noSuchMessage
    case noSuchUser
    /// The person named is not a member of the chat.
    case notAMember
    case alreadyMember
    /// The group holds `ChatRules.maxMembers` people already.
    case chatFull
    /// A direct chat's members and settings never change.
    case directChatFixed
    /// Taking the right from the group's only admin.
    case lastAdmin
    /// Something only a group's admins may do.
    case needsGroupAdmin
    case onlyAuthorEdits
    case onlyAuthorOrAdminDeletes
    case messageDeleted
    /// A system line (who came and went) is never edited, deleted or translated.
    case systemMessageFixed
    /// The contact list holds `ChatRules.maxContacts` people already.
    case tooManyContacts
    /// A value the person gave (`field`, as the API names it) is not acceptable: `problem` says why.
    case invalid(field: String, problem: String)

    /// The stable snake_case code of the refusal.
    var code: String {
        switch self {
        case .noSuchChat, .noSuchMessage, .noSuchUser, .notAMember: "not_found"
        case .alreadyMember: "already_member"
        case .chatFull: "chat_full"
        case .directChatFixed: "direct_chat"
        case .lastAdmin: "last_admin"
        case .needsGroupAdmin, .onlyAuthorEdits, .onlyAuthorOrAdminDeletes: "forbidden"
        case .messageDeleted: "message_deleted"
        case .systemMessageFixed: "system_message"
        case .tooManyContacts: "too_many_contacts"
        case .invalid: "validation_failed"
        }
    }

    /// The refusal in words, as a person reads it.
    var message: String {
        switch self {
        case .noSuchChat: "no such chat"
        case .noSuchMessage: "no such message"
        case .noSuchUser: "no such user"
        case .notAMember: "that person is not a member"
        case .alreadyMember: "that person is already a member"
        case .chatFull: "a group holds at most \(ChatRules.maxMembers) members"
        case .directChatFixed: "a direct chat's members cannot change"
        case .lastAdmin: "a group needs at least one admin: grant the right to someone else first"
        case .needsGroupAdmin: "this needs an admin of the group"
        case .onlyAuthorEdits: "only its author can edit a message"
        case .onlyAuthorOrAdminDeletes: "only its author or a group admin can delete a message"
        case .messageDeleted: "a deleted message cannot be edited"
        case .systemMessageFixed: "a line saying who came and went cannot be edited, deleted or translated"
        case .tooManyContacts: "a contact list holds at most \(ChatRules.maxContacts) people"
        case let .invalid(field, problem): "\(field) \(problem)"
        }
    }
}

extension MessagingError: CustomStringConvertible {
    var description: String { message }
}
