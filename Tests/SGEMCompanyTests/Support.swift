import SGEMSupport
import SGEMTestSupport
@testable import SGEMCompany

// The company feed tests' company: `boss` and the employee `ana`, logged in, with short feed
// timeouts; and the feed calls they make.

extension Office {
    /// `feedTimeout` bounds each feed fetch, so a hanging feed ends the test quickly.
    /// A server whose outbound policy allows `allowing` (the stubs' address unless told).
    static func startForFeeds(feedTimeout: Int = 3, allowing: String = "127.0.0.1") async throws -> Office {
        try await start(["ana"], overrides: ["feed-timeout": String(feedTimeout), "log-level": "error", "outbound-allow": allowing])
    }

    /// The company module's fetcher, to run a round and wait for it.
    func fetcher() throws -> FeedFetcher {
        guard let fetcher = services.resolve(FeedFetcher.self) else { throw TestFailure("no feed fetcher") }
        return fetcher
    }

    /// `PUT /admin/company/feeds` as the admin; the answer's items.
    @discardableResult
    func setFeeds(_ urls: [String]) async throws -> [JSONValue] {
        try await expect(200, "PUT", "/admin/company/feeds", as: "boss", ["urls": .array(urls.map(JSONValue.string))])["items"]?.arrayValue ?? []
    }

    /// `GET /admin/company/feeds`'s items.
    func feedStatuses() async throws -> [JSONValue] {
        try await call("GET", "/admin/company/feeds", as: "boss").json()["items"]?.arrayValue ?? []
    }

    /// `GET /company/feed` as the employee.
    func feedItems(_ query: String = "") async throws -> [JSONValue] {
        try await expect(200, "GET", "/company/feed\(query)", as: "ana")["items"]?.arrayValue ?? []
    }
}
