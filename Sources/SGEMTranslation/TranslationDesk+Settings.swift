import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The provider settings as an admin sees and changes them, on the API and the command line.
extension TranslationDesk {
    /// The settings as shown: never the key, only whether one is set.
    func settingsView() async throws -> TranslationSettingsView {
        let s = try await providerSettings()
        let key = try await settings.views().first { $0.key == TranslationDesk.apiKeyKey }
        let lost = key?.needsReentry ?? false
        let (seconds, attoseconds) = s.timeout.components
        return TranslationSettingsView(provider: s.provider, url: s.url, apiKeySet: key?.isSet ?? false, apiKeyNeedsReentry: lost,
                                       timeoutMs: seconds * 1000 + attoseconds / 1_000_000_000_000_000,
                                       ready: TranslationDesk.missing(s) == nil,
                                       problem: lost ? TranslationDesk.keyLost : TranslationDesk.missing(s))
    }

    /// Stores `change` (runtime setting keys; a nil value clears one) and, when it changes
    /// anything, its audit entry by `actor`, in one transaction; the next call reads it afresh.
    func update(_ change: [(String, String?)], by actor: AuditActor, audit: any AuditTrail) async throws {
        let settings = self.settings
        let entry = AuditRecord(event: "translation.settings", actorID: actor.userID, ip: actor.ip, detail: TranslationDesk.describe(change))
        try await store.write { db in
            for (key, value) in change { try settings.set(key, to: value, in: db) }
            if !change.isEmpty { try audit.record(entry, in: db) }
        }
        settingsChanged()
    }

    /// Why a stored key reads as unset: the server's secret key file is not the one it was sealed with.
    static let keyLost = "The API key was saved under another secret key (the server's key file is missing or was replaced), "
        + "so it cannot be used: an admin needs to enter it again in Settings."

    /// A change in words for the audit log: never the key itself.
    static func describe(_ change: [(String, String?)]) -> String {
        change.map { key, value in
            switch key {
            case TranslationDesk.apiKeyKey: value == nil ? "API key removed" : "API key set"
            case TranslationDesk.providerKey: "provider \(value ?? "")"
            case TranslationDesk.urlKey: "URL \(value ?? "(the provider's own)")"
            case TranslationDesk.timeoutKey: "timeout \(value ?? "") ms"
            default: key
            }
        }.joined(separator: "; ")
    }

    /// Why `url` cannot be a provider's address; nil when it can (empty: the provider's own).
    static func urlProblem(_ url: String) -> String? {
        if url.isEmpty { return nil }
        if url.utf8.count > 2048 { return "must be at most 2,048 characters" }
        if url.contains("@") { return "must not hold a user name or password; put the key in the API key field" }
        guard (try? HTTPClientURL(url)) != nil else {
            return "must be an http:// or https:// address, such as https://translate.example.com"
        }
        return nil
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first?.isWhitespace == true { s = s.dropFirst() }
        while s.last?.isWhitespace == true { s = s.dropLast() }
        return String(s)
    }
}
