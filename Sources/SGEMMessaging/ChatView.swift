import SGEMContracts
import SGEMCore
import SGEMSupport

/// The contract's chat as one reader sees it: what the chat routes answer. `name` and
/// `lastMessage` are null when there is none; `member` is there only in the public groups' list.
struct ChatView: Encodable, Sendable, Equatable {
    /// A member as the chat lists them; `away` only while they are on approved leave today.
    struct Member: Encodable, Sendable, Equatable {
        let userID: Int64
        let admin: Bool
        var away: Away? = nil

        enum CodingKeys: String, CodingKey {
            case userID = "userId", admin, away
        }
    }

    /// `{"until": "YYYY-MM-DD"}`: the last day of the member's leave.
    struct Away: Encodable, Sendable, Equatable {
        let until: String
    }

    let id: Int64
    let kind: Chat.Kind
    @ExplicitNull var name: String?
    let description: String
    let tags: [String]
    let isPublic: Bool
    let creatorID: Int64
    var members: [Member]
    @ExplicitNull var lastMessage: MessageView?
    let unreadCount: Int
    let mentionCount: Int
    let createdAt: String
    /// Only in the public groups' list: whether the reader is already in.
    let member: Bool?
    /// The reader's own push level, or the default for the chat's kind.
    let notifications: NotificationLevel

    enum CodingKeys: String, CodingKey {
        case id, kind, name, description, tags, isPublic = "public", creatorID = "creatorId", members, lastMessage
        case unreadCount, mentionCount, createdAt, member, notifications
    }

    init(_ chat: Chat, _ view: Chat.ReaderView) {
        id = chat.id
        kind = chat.kind
        name = chat.name
        description = chat.description
        tags = chat.tags
        isPublic = chat.isPublic
        creatorID = chat.creatorID
        members = chat.members.map { Member(userID: $0.userID, admin: $0.admin) }
        lastMessage = view.lastMessage.map(MessageView.init)
        unreadCount = view.unreadCount
        mentionCount = view.mentionCount
        createdAt = chat.createdAt.rfc3339()
        member = view.member
        notifications = view.notifications ?? Chat.defaultLevel(chat.kind)
    }

    /// The same chat with `away` on the members found in `away` (user id to the leave's last day).
    func markingAway(_ away: [Int64: String]) -> ChatView {
        var marked = self
        marked.members = members.map { member in
            var member = member
            if let until = away[member.userID] { member.away = Away(until: until) }
            return member
        }
        return marked
    }
}
