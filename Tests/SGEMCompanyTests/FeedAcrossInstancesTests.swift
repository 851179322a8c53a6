import SGEMApp
import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing
@testable import SGEMCompany

@Suite("Company feeds across instances",
       .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct FeedAcrossInstancesTests {
    @Test("two servers on one PostgreSQL database: a scheduled round is fetched once between them; a change of the list is fetched at once where it was made")
    func fetchedOnceBetweenTwoServers() async throws {
        let stub = try FeedStub()
        stub.feed("/rss.xml", FeedSamples.rss2, etag: "\"rss-v1\"")
        let dir = TempDir()
        defer { dir.cleanup() }
        let settings = ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "error",
                        "outbound-allow": "127.0.0.1", "feed-timeout": "3", "database-url": try dir.postgresURL()]
        let first = try await RunningServer.start(configuration: Configuration(overrides: settings))
        let a = try Self.fetcher(first)
        // Its round at start: due (the first ever), with no feeds to fetch yet.
        #expect(await eventually { a.scheduledRounds.load(ordering: .acquiring) == 1 })
        #expect(a.skippedRounds.load(ordering: .relaxed) == 0)
        _ = try await a.repository.replace(with: [stub.url("/rss.xml")])
        a.wake()
        #expect(await eventually { stub.requests(to: "/rss.xml").count == 1 })

        let second = try await RunningServer.start(configuration: Configuration(overrides: settings))
        let b = try Self.fetcher(second)
        // Its round at start finds the first server's round of a moment ago: not due.
        #expect(await eventually { b.scheduledRounds.load(ordering: .acquiring) == 1 })
        #expect(b.skippedRounds.load(ordering: .relaxed) == 1)
        #expect(stub.requests(to: "/rss.xml").count == 1, "fetched once between two servers")

        // The list changed through the second server: it fetches at once, whoever fetched last.
        b.wake()
        #expect(await eventually { stub.requests(to: "/rss.xml").count == 2 })
        #expect(stub.requests(to: "/rss.xml").last?.header("If-None-Match") == "\"rss-v1\"", "with the validators the first server stored")
        await second.stop()
        await first.stop()
    }

    static func fetcher(_ server: RunningServer) throws -> FeedFetcher {
        guard let fetcher = server.context.services.resolve(FeedFetcher.self) else { throw TestFailure("no feed fetcher") }
        return fetcher
    }
}
