import SGEMCore
import SGEMSupport

/// Who is away today; implemented by the holidays module, consulted by accounts (the directory,
/// a person's page) and messaging (chat members) to show "away until …". Those modules resolve
/// it from the registry per request and leave `away` out when no module published it.
public protocol AbsenceDirectory: Sendable {
    /// For each of `userIDs` on approved leave today (a calendar date in the company's time
    /// zone), the last day of that leave as `YYYY-MM-DD`; users not away are absent from the map.
    /// One lookup for the whole batch, so a page of the directory costs one query.
    func awayUntil(userIDs: [Int64]) async throws -> [Int64: String]
}

/// Adds the contract's `away: {"until": "YYYY-MM-DD"}` to user-shaped JSON objects, for the
/// modules that show people (the directory, a person's page, chat members).
public enum Away {
    /// The OpenAPI schema of the `away` field.
    public static let schema: JSONValue = [
        "type": "object", "description": "present only while the person is on approved leave today",
        "properties": ["until": ["type": "string", "format": "date"]], "required": ["until"],
    ]

    /// Who among `ids` is away today, in one lookup. Empty when no module publishes an
    /// `AbsenceDirectory`, or when the lookup fails: absence decorates a page and never fails it.
    public static func lookup(_ ids: [Int64], services: ServiceRegistry, logger: Logger? = nil) async -> [Int64: String] {
        guard !ids.isEmpty, let absences = services.resolve((any AbsenceDirectory).self) else { return [:] }
        do {
            return try await absences.awayUntil(userIDs: ids)
        } catch {
            logger?.error("absence lookup failed", ["error": String(describing: error)])
            return [:]
        }
    }

    /// `object` with `away` appended when the id under `idKey` is in `away`.
    public static func mark(_ object: JSONValue, idKey: String = "id", from away: [Int64: String]) -> JSONValue {
        guard !away.isEmpty, var fields = object.objectValue, let id = object[idKey]?.numberValue,
              let until = away[Int64(id)] else { return object }
        fields.removeAll { $0.0 == "away" }
        fields.append(("away", ["until": .string(until)]))
        return .object(fields)
    }

}
