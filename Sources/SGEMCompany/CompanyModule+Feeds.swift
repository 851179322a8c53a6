import SGEMCore
import SGEMHTTP
import SGEMSupport

extension CompanyModule {
    /// How often every company feed is fetched.
    static let feedInterval = Setting("feed-interval", .seconds(60...86_400), default: "900",
                                      "seconds between fetches of the company feeds (RSS or Atom) shown on Home")
    /// How long one feed's fetch may take.
    static let feedTimeout = Setting("feed-timeout", .seconds(1...120), default: "20",
                                     "seconds one company feed fetch may take, redirects and body included")

    public var settings: [Setting] { [CompanyModule.feedInterval, CompanyModule.feedTimeout] }
}

/// The feed URLs admins set, checked: at most 10 absolute http(s) URLs without user
/// information, each at most 2,048 bytes, duplicates folded, order kept.
enum FeedURLs {
    static let maxCount = 10
    static let maxLength = 2048

    /// The audit entry of a change to the list; without an actor it came from the command line.
    static func auditRecord(_ urls: [String], actorID: Int64?, ip: String?) -> AuditRecord {
        let list = urls.isEmpty ? "no feeds" : urls.joined(separator: " ")
        return AuditRecord(event: "company.feeds", actorID: actorID, ip: ip, detail: actorID == nil ? list + " (command line)" : list)
    }

    /// `urls` checked (trimmed, duplicates folded); `invalid` naming each bad one.
    static func checked(_ urls: [String]) throws(CompanyError) -> [String] {
        var problems: [String: String] = [:]
        var kept: [String] = []
        for (index, raw) in urls.enumerated() {
            let url = raw.trimmingWhitespace()
            if let problem = problem(with: url) {
                problems["urls[\(index)]"] = problem
            } else if !kept.contains(url) {
                kept.append(url)
            }
        }
        if problems.isEmpty, kept.count > maxCount { problems["urls"] = "must list at most \(maxCount) feeds" }
        if !problems.isEmpty { throw .invalid(problems) }
        return kept
    }

    /// What is wrong with one URL, in words; nil when it is usable.
    static func problem(with url: String) -> String? {
        guard !url.isEmpty else { return "must not be empty" }
        guard url.utf8.count <= maxLength else { return "must be at most \(maxLength) characters" }
        do {
            _ = try HTTPClientURL(url)
            return nil
        } catch {
            if error.message.contains("user information") { return "must not contain a user name or password" }
            let lower = url.lowercased()
            if !(lower.hasPrefix("http://") || lower.hasPrefix("https://")) { return "must be an http:// or https:// address" }
            return "is not a valid web address"
        }
    }
}
