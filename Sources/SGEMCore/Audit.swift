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

    public init(event: String, actorID: Int64?, ip: String?, detail: String?) {
        self.event = event
        self.actorID = actorID
        self.ip = ip
        self.detail = detail
    }
}

/// The audit log other modules write to; implemented by the accounts module, which keeps the log
/// and its screen. Writes in the caller's transaction, so a change and its entry commit together.
public protocol AuditTrail: Sendable {
    func record(_ record: AuditRecord, in db: Database) throws
}
