import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport

/// The company module's audit entries: which settings or company details changed, old → new
/// (none of them is a secret), by an admin or at the command line.
enum CompanyAudit {
    /// The audit event names this module writes.
    static let events = ["settings.update", "company.profile", "company.feeds"]

    /// Records a settings change in `db`; nothing when no value changed.
    static func settings(_ before: CompanySettingsValue, _ after: CompanySettingsValue, by actor: AuditActor,
                         trail: (any AuditTrail)?, in db: Database) throws {
        let changes = diff(before.json, after.json, skipping: ["updatedAt"])
        guard let trail, !changes.isEmpty else { return }
        try trail.record(actor.record("settings.update", changes), in: db)
    }

    /// Records a change of the company's details in `db`; nothing when no value changed.
    static func profile(_ before: CompanyProfile, _ after: CompanyProfile, by actor: AuditActor,
                        trail: (any AuditTrail)?, in db: Database) throws {
        let changes = diff(before.json, after.json, skipping: ["updatedAt"])
        guard let trail, !changes.isEmpty else { return }
        try trail.record(actor.record("company.profile", changes), in: db)
    }

    /// "registration: closed → open; timeZone: Europe/Madrid → Europe/Lisbon", the keys whose
    /// values differ, in the object's order; long values are cut at 200 characters.
    static func diff(_ before: JSONValue, _ after: JSONValue, skipping: Set<String>) -> String {
        func text(_ v: JSONValue?) -> String {
            let t: String = switch v {
            case nil, .null?: "(none)"
            case let .string(s)?: s.isEmpty ? "(none)" : s
            case let .array(items)?: items.map { $0.serialized() }.joined(separator: ",")
            case let v?: v.serialized()
            }
            let line = t.replacingOccurrences(of: "\n", with: " ")
            return line.count > 200 ? String(line.prefix(200)) + "…" : line
        }
        return (after.objectValue ?? []).compactMap { key, value in
            guard !skipping.contains(key), before[key] != value else { return nil }
            return "\(key): \(text(before[key])) → \(text(value))"
        }.joined(separator: "; ")
    }
}
