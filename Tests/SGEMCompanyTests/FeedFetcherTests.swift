import SGEMSupport
import SGEMTestSupport
import Synchronization
import Testing
@testable import SGEMCompany

/// A feed server whose answer per path the test changes as it goes.
final class FeedStub: Sendable {
    typealias Answer = @Sendable (StubHTTPServer.Request) -> StubHTTPServer.Reply

    private final class Table: Sendable {
        let answers = Mutex<[String: Answer]>([:])
    }

    private let table = Table()
    let server: StubHTTPServer

    init() throws {
        let table = self.table
        server = try StubHTTPServer { request in
            table.answers.withLock { $0[request.path] }?(request) ?? .bytes(StubHTTPServer.response(404, "nothing here"), close: false)
        }
    }

    /// Answers `path` with `answer` from now on.
    func route(_ path: String, _ answer: @escaping Answer) { table.answers.withLock { $0[path] = answer } }

    /// Answers `path` with a 200 `body`, then 304 to requests carrying `etag`.
    func feed(_ path: String, _ body: String, etag: String, type: String = "application/rss+xml") {
        route(path) { request in
            if request.header("If-None-Match") == etag { return .bytes(StubHTTPServer.response(304, headers: ["ETag: \(etag)"]), close: false) }
            return .bytes(StubHTTPServer.response(200, body, headers: ["Content-Type: \(type)", "ETag: \(etag)",
                                                                     "Last-Modified: Tue, 02 Dec 2025 11:00:00 GMT"]), close: false)
        }
    }

    func requests(to path: String) -> [StubHTTPServer.Request] { server.requests.filter { $0.path == path } }
    func url(_ path: String) -> String { server.url(path) }
}

/// A server whose company feeds are `paths` of `stub`, each read once (the list's change wakes
/// the fetcher) without error.
func serverReading(_ stub: FeedStub, _ paths: [String]) async throws -> Office {
    let s = try await Office.startForFeeds()
    try await s.setFeeds(paths.map(stub.url))
    guard await eventually(60, { (try? await s.feedStatuses().allSatisfy { $0["status"] == "ok" }) == true }) else {
        throw TestFailure("the feeds were not read: \(try await s.feedStatuses())")
    }
    return s
}

/// The feed's status row for `url`.
func status(_ statuses: [JSONValue], _ url: String) -> JSONValue? { statuses.first { $0["url"]?.stringValue == url } }

@Suite("Company feed fetcher", .serialized)
struct FeedFetcherTests {
    @Test("RSS and Atom feeds are fetched when set; a 304 to the sent validators keeps the entries; newest first across feeds")
    func fetchAndRevalidate() async throws {
        let stub = try FeedStub()
        stub.feed("/rss.xml", FeedSamples.rss2, etag: "\"rss-v1\"")
        stub.feed("/atom.xml", FeedSamples.atom, etag: "W/\"atom-v1\"", type: "application/atom+xml; charset=utf-8")
        let s = try await Office.startForFeeds()
        let saved = try await s.setFeeds([stub.url("/rss.xml"), stub.url("/atom.xml")])
        #expect(saved.map { $0["status"] } == ["pending", "pending"])

        // Setting the list wakes the fetcher: wait for both to be read.
        #expect(await eventually { (try? await s.feedStatuses().allSatisfy { $0["status"] == "ok" }) == true })
        let statuses = try await s.feedStatuses()
        #expect(status(statuses, stub.url("/rss.xml"))?["title"] == "Acme & Co blog")
        #expect(status(statuses, stub.url("/rss.xml"))?["entryCount"] == 2)
        #expect(status(statuses, stub.url("/atom.xml"))?["title"] == "Acme news")
        #expect(statuses.allSatisfy { $0["error"] == .null && $0["lastSuccessAt"] != .null })

        let items = try await s.feedItems()
        #expect(items.map { $0["title"]?.stringValue } == ["Q4 results", "New office opens", "Older post", "Welcome"])
        #expect(items.map { $0["source"]?.stringValue } == ["Acme news", "Acme & Co blog", "Acme & Co blog", "Acme news"])
        #expect(items[1]["url"] == .string("http://127.0.0.1:\(stub.server.port)/news/office"), "resolved against the feed's URL")
        #expect(items[0]["publishedAt"] == "2025-12-03T08:00:00Z")
        #expect(try await s.feedItems("?limit=2").count == 2)
        #expect(stub.requests(to: "/rss.xml").first?.header("If-None-Match") == nil, "nothing to revalidate the first time")
        #expect(stub.requests(to: "/rss.xml").first?.header("Accept")?.contains("application/rss+xml") == true)

        let before = stub.requests(to: "/rss.xml").count
        await (try s.fetcher()).refresh()
        let again = try #require(stub.requests(to: "/rss.xml").dropFirst(before).first)
        #expect(again.header("If-None-Match") == "\"rss-v1\"")
        #expect(again.header("If-Modified-Since") == "Tue, 02 Dec 2025 11:00:00 GMT")
        #expect(stub.requests(to: "/atom.xml").last?.header("If-None-Match") == "W/\"atom-v1\"")
        #expect(try await s.feedItems().count == 4, "a 304 keeps the entries")
        #expect(try await s.feedStatuses().allSatisfy { $0["status"] == "ok" })
        await s.stop()
        stub.server.stop()
    }

    @Test("a malformed answer after a good one keeps the last good entries and says why; a good one clears it")
    func malformedAfterGood() async throws {
        let stub = try FeedStub()
        stub.feed("/blog", FeedSamples.rss2, etag: "\"a\"")
        let s = try await serverReading(stub, ["/blog"])

        stub.route("/blog") { _ in .bytes(StubHTTPServer.response(200, "<rss><channel><title>Broken</channel>", headers: ["ETag: \"b\""]), close: false) }
        await (try s.fetcher()).refresh()
        let broken = try #require(try await s.feedStatuses().first)
        #expect(broken["status"] == "error")
        #expect(broken["error"]?.stringValue?.hasPrefix("the feed is not well-formed XML") == true, "\(broken)")
        #expect(broken["entryCount"] == 2 && broken["title"] == "Acme & Co blog")
        #expect(try await s.feedItems().map { $0["title"]?.stringValue } == ["New office opens", "Older post"])

        stub.route("/blog") { _ in .bytes(StubHTTPServer.response(200, FeedSamples.rss(items: 30, title: "Renewed")), close: false) }
        await (try s.fetcher()).refresh()
        #expect(stub.requests(to: "/blog").last?.header("If-None-Match") == "\"a\"", "the last good answer's validators are still sent")
        let renewed = try #require(try await s.feedStatuses().first)
        #expect(renewed["status"] == "ok" && renewed["error"] == .null && renewed["title"] == "Renewed")
        #expect(renewed["entryCount"] == 20, "the newest 20 are kept")
        await s.stop()
        stub.server.stop()
    }

    @Test("the answer's Content-Type charset decides how an undeclared feed is read")
    func contentTypeCharset() async throws {
        let stub = try FeedStub()
        // ISO-8859-1 bytes and no XML declaration: only the header says what they are.
        let latin1 = "<rss><channel><title>Peña</title><item><title>Año nuevo</title><guid>1</guid></item></channel></rss>"
            .unicodeScalars.map { UInt8($0.value) }
        stub.route("/latin1") { _ in
            .bytes(StubHTTPServer.response(200, latin1, headers: ["Content-Type: application/rss+xml; charset=ISO-8859-1"]), close: false)
        }
        let s = try await serverReading(stub, ["/latin1"])
        #expect(try await s.feedStatuses().first?["title"] == "Peña")
        #expect(try await s.feedItems().map { $0["title"]?.stringValue } == ["Año nuevo"])
        await s.stop()
        stub.server.stop()
    }

    @Test("a redirect within the feed's site is followed, and relative links resolve against where the feed was found")
    func sameOriginRedirect() async throws {
        let stub = try FeedStub()
        stub.route("/old/feed") { _ in .bytes(StubHTTPServer.response(301, headers: ["Location: /new/feed.xml"]), close: false) }
        stub.feed("/new/feed.xml", FeedSamples.rss2, etag: "\"n\"")
        let s = try await serverReading(stub, ["/old/feed"])
        let items = try await s.feedItems()
        #expect(items.count == 2 && items[0]["url"] == .string(stub.url("/news/office")))
        #expect(stub.requests(to: "/new/feed.xml").count >= 1)
        await s.stop()
        stub.server.stop()
    }

    @Test("a feed that embeds script gives plain-text titles and no unsafe links")
    func scriptFeed() async throws {
        let stub = try FeedStub()
        stub.feed("/evil", FeedSamples.hostile, etag: "\"e\"")
        let s = try await serverReading(stub, ["/evil"])
        let items = try await s.feedItems()
        #expect(items.map { $0["title"]?.stringValue } == ["Hello", "Data link", "With user"])
        #expect(items.allSatisfy { $0["url"] == .null && $0["publishedAt"] == .null && $0["source"] == "Evil feed" })
        await s.stop()
        stub.server.stop()
    }

    @Test("errors in words: too large, hanging (bounded by --feed-timeout), 404, not a feed, unreachable, another origin")
    func failures() async throws {
        let stub = try FeedStub()
        let big = "<rss><channel><title>Big</title>" + String(repeating: " ", count: 3 * 1024 * 1024) + "</channel></rss>"
        stub.route("/big") { _ in .bytes(StubHTTPServer.response(200, big), close: false) }
        stub.route("/hang") { _ in .hang }
        stub.route("/moved") { _ in .bytes(StubHTTPServer.response(302, headers: ["Location: http://localhost:\(stub.server.port)/elsewhere"]), close: false) }
        stub.route("/page") { _ in .bytes(StubHTTPServer.response(200, "<html><body>Hi</body></html>", headers: ["Content-Type: text/html"]), close: false) }
        let s = try await Office.startForFeeds(feedTimeout: 1)
        // A port nobody listens on: bind one, learn its number, close it.
        let closed = try StubHTTPServer { _ in .hang }
        closed.stop()
        let urls = [stub.url("/big"), stub.url("/hang"), stub.url("/missing"), stub.url("/page"), closed.url("/feed"), stub.url("/moved")]
        try await s.setFeeds(urls)
        // The round ends only because the hanging feed timed out (its status says so below).
        let fetcher = try s.fetcher()
        let done = Mutex(false)
        Task {
            await fetcher.refresh()
            done.withLock { $0 = true }
        }
        #expect(await eventually { done.withLock { $0 } }, "a hanging feed ends with the timeout")
        let statuses = try await s.feedStatuses()
        #expect(statuses.allSatisfy { $0["status"] == "error" && $0["entryCount"] == 0 && $0["lastFetchedAt"] != .null }, "\(statuses)")
        #expect(status(statuses, urls[0])?["error"] == "the feed is larger than 2 MiB")
        #expect(status(statuses, urls[1])?["error"] == "the server took too long to answer")
        #expect(status(statuses, urls[2])?["error"] == "the server answered 404 (not found)")
        #expect(status(statuses, urls[3])?["error"]?.stringValue?.hasPrefix("the document is not an RSS or Atom feed") == true)
        #expect(status(statuses, urls[4])?["error"] == "the server could not be reached")
        #expect(status(statuses, urls[5])?["error"] == "the server redirected to another site, which is not followed")
        #expect(try await s.feedItems().isEmpty)
        await s.stop()
        stub.server.stop()
    }

    @Test("internal feed addresses, the server's own /metrics among them, are refused in the same words, open port or closed, never connected to")
    func internalRefused() async throws {
        let stub = try FeedStub()
        stub.feed("/rss.xml", FeedSamples.rss2, etag: "\"v1\"")
        let closed = try StubHTTPServer { _ in .hang }
        closed.stop()
        let s = try await Office.startForFeeds(allowing: "")
        let port = stub.server.port
        let urls = [stub.url("/rss.xml"), "http://2130706433:\(port)/rss.xml", "http://0x7f000001:\(port)/rss.xml", "http://127.1:\(port)/rss.xml",
                    "http://0:\(port)/rss.xml", "http://localhost:\(port)/rss.xml", "http://[::ffff:127.0.0.1]:\(port)/rss.xml",
                    closed.url("/rss.xml"), "http://127.0.0.1:\(s.port)/metrics"]
        try await s.setFeeds(urls)
        await (try s.fetcher()).refresh()
        let statuses = try await s.feedStatuses()
        #expect(statuses.count == urls.count)
        #expect(statuses.allSatisfy { $0["status"] == "error" && $0["error"]?.stringValue == FeedFetcher.refusedWords }, "\(statuses)")
        #expect(stub.server.accepted == 0 && stub.requests(to: "/rss.xml").isEmpty)
        #expect(try await s.feedItems().isEmpty, "nothing internal reaches the Home page")
        await s.stop()
        stub.server.stop()
    }

    @Test("shutdown does not wait for a hanging feed: the round is cancelled")
    func shutdownCancelsARound() async throws {
        let stub = try FeedStub()
        stub.route("/hang") { _ in .hang }
        let s = try await Office.startForFeeds(feedTimeout: 120)
        try await s.setFeeds([stub.url("/hang")])
        #expect(await eventually { !stub.requests(to: "/hang").isEmpty }, "the woken fetcher asked for the feed")
        let stopped = Mutex(false)
        Task {
            await s.stop()
            stopped.withLock { $0 = true }
        }
        #expect(await eventually(60) { stopped.withLock { $0 } }, "stopped long before the feed's 120 s timeout")
        stub.server.stop()
    }

    @Test("replacing the list keeps the kept feeds' entries and validators and removes the others' entries")
    func replaceKeepsAndRemoves() async throws {
        let stub = try FeedStub()
        stub.feed("/one", FeedSamples.rss2, etag: "\"one\"")
        stub.feed("/two", FeedSamples.atom, etag: "\"two\"")
        let s = try await serverReading(stub, ["/one", "/two"])
        let kept = try await s.setFeeds([stub.url("/two")])
        #expect(kept.map { $0["status"] } == ["ok"] && kept.first?["entryCount"] == 2)
        #expect(try await s.feedItems().map { $0["source"] } == ["Acme news", "Acme news"])
        let before = stub.requests(to: "/two").count
        await (try s.fetcher()).refresh()
        #expect(stub.requests(to: "/two").dropFirst(before).last?.header("If-None-Match") == "\"two\"")
        await s.stop()
        stub.server.stop()
    }
}
