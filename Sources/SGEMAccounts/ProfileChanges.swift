/// The profile fields one edit changes, already checked (`AccountRules`, `ProfileField`); fields
/// left out keep their value. The repository turns them into columns.
struct ProfileChanges: Sendable {
    var displayName: String?
    /// Profile fields and their new values; nil clears one.
    var fields: [(field: ProfileField, value: String?)] = []
    /// A language of the person's own choosing.
    var language: String?
    var notificationsEnabled: Bool?
    /// Only admins change someone's email address.
    var email: String?

    var isEmpty: Bool { displayName == nil && fields.isEmpty && language == nil && notificationsEnabled == nil && email == nil }

    /// Whether the directory's search words (name, position, username, email) must be rewritten.
    var changesSearchWords: Bool { displayName != nil || email != nil || fields.contains { $0.field.json == "position" } }

    /// The changed fields as the audit log names them (the stored fields, in words), sorted.
    var auditedFields: [String] {
        var names: Set<String> = []
        if displayName != nil { names.formUnion(["display name", "name key"]) }
        for change in fields { names.insert(change.field.json) }
        if language != nil { names.formUnion(["language", "language chosen"]) }
        if notificationsEnabled != nil { names.insert("notifications enabled") }
        if email != nil { names.insert("email") }
        return names.sorted()
    }
}

/// Which users the directory lists, by the API's word for each.
enum UserStatusFilter: String, Sendable, CaseIterable {
    case active, inactive, all
}
