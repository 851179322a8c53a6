import SGEMCore
import SGEMSupport

/// A person on someone's contact list, as `GET /contacts` lists them: who they are now in the
/// directory, and when they were added (RFC 3339).
struct ContactView: Encodable, Sendable, Equatable {
    let userID: Int64
    let username: String
    let displayName: String
    let active: Bool
    let addedAt: String

    enum CodingKeys: String, CodingKey {
        case userID = "userId", username, displayName, active, addedAt
    }

    init(_ user: DirectoryUser, addedAt: Timestamp) {
        userID = user.id
        username = user.username
        displayName = user.displayName
        active = user.active
        self.addedAt = addedAt.rfc3339()
    }
}
