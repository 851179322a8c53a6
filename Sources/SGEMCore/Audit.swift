import SGEMStore

/// One entry of the audit log: who changed what, from where, in words.
public struct AuditRecord: Sendable, Equatable {
    /// A dotted event name (`translation.settings`, `company.feeds`), shown in words by the console.
    public let event: String
    /// The admin who did it; nil for the command line.
    public let actorID: Int64?
    public let ip: String?
    /// What changed, never a secret (a key shows as "set" or "removed").
    public let detail: String?
    /// The person the change concerns (the employee whose request or allowance it was), if any.
    public let targetID: Int64?

    public init(event: String, actorID: Int64?, ip: String?, detail: String?, targetID: Int64? = nil) {
        self.event = event
        self.actorID = actorID
        self.ip = ip
        self.detail = detail
        self.targetID = targetID
    }
}

/// Who made an audited change: an admin over the API, or the operator at the command line
/// (no user id; the entry's detail says "(command line)").
public struct AuditActor: Sendable, Equatable {
    public let userID: Int64?
    public let ip: String?

    public init(userID: Int64?, ip: String?) {
        self.userID = userID
        self.ip = ip
    }

    public static let commandLine = AuditActor(userID: nil, ip: nil)

    /// The entry for `event` by this actor.
    public func record(_ event: String, _ detail: String, target: Int64? = nil) -> AuditRecord {
        AuditRecord(event: event, actorID: userID, ip: ip, detail: userID == nil ? detail + " (command line)" : detail, targetID: target)
    }
}

/// The kinds of audit events, by the first word of their names, as the audit screen's filter
/// offers them: `?event=holiday` keeps `holiday.approved`, `holiday.public_added` and the rest.
public enum AuditEventNames {
    /// Whether `name` is `filter` itself or one of its kind (`filter` is then its first word).
    public static func matches(_ name: String, filter: String) -> Bool {
        name == filter || (!filter.contains(".") && name.hasPrefix(filter + "."))
    }
}

/// The audit log other modules write to; implemented by the accounts module, which keeps the log
/// and its screen. Writes in the caller's transaction, so a change and its entry commit together.
public protocol AuditTrail: Sendable {
    func record(_ record: AuditRecord, in db: Database) throws
}
