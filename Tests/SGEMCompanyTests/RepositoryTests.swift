import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing
@testable import SGEMCompany

/// The company module's statements on every backend the run reaches.
@Suite("Company: the repositories on every backend")
struct CompanyRepositoryTests {
    static func migrated(_ backend: TestBackend) async throws -> (TestDatabase, Store) {
        let database = try TestDatabase(backend)
        let store = try database.open()
        var migrations = MigrationList()
        CompanyModule().registerMigrations(&migrations)
        #expect(migrations.withoutPostgreSQLForm.isEmpty, "\(migrations.withoutPostgreSQLForm)")
        _ = try await store.migrate(migrations)
        return (database, store)
    }

    @Test("settings and profile: defaults at first, saved values read back, NULL as the default", arguments: TestBackend.available)
    func settingsAndProfile(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        let repository = CompanyRepository(store: store)
        #expect(try await repository.current() == CompanySettingsValue())
        #expect(try await repository.profile() == CompanyProfile())
        let saved = try await repository.update { value in
            var value = value
            value.defaultAllowanceDays = 25
            value.workingDays = [1, 2, 3, 4]
            value.registration = "domain"
            value.registrationDomain = "example.com"
            value.timeZone = "Europe/Madrid"
            value.maxSimultaneousAbsences = 3
            value.carryOverMaxDays = 5
            value.carryOverExpires = "03-31"
            value.pushContact = "mailto:it@example.com"
            return value
        }
        #expect(saved.updatedAt != nil)
        #expect(try await repository.current() == saved)
        let cleared = try await repository.update { value in
            var value = value
            value.maxSimultaneousAbsences = nil
            value.registrationDomain = nil
            return value
        }
        #expect(try await repository.current() == cleared)
        #expect(cleared.maxSimultaneousAbsences == nil && cleared.defaultAllowanceDays == 25)
        let profile = try await repository.updateProfile { _ in
            CompanyProfile(name: "Ñandú S.L.", phone: "+34 600", email: nil, website: "https://example.com", address: "Calle 1\nMadrid")
        }
        #expect(try await repository.profile() == profile)
        #expect(try await repository.companyName() == "Ñandú S.L.")
        await store.close()
    }

    @Test("feeds: a replaced list keeps its kept feeds' state; entries newest first, undated last in feed order",
          arguments: TestBackend.available)
    func feeds(_ backend: TestBackend) async throws {
        let (database, store) = try await Self.migrated(backend)
        _ = database
        let repository = FeedRepository(store: store)
        let a = "https://a.example/feed", b = "https://b.example/feed", c = "https://c.example/rss"
        #expect(try await repository.replace(with: [a, b]).map(\.url) == [a, b])
        let targets = try await repository.targets()
        #expect(targets.map(\.url) == [a, b])
        let t = Timestamp(milliseconds: 1_700_000_000_000)
        func at(_ s: Int64) -> Timestamp { Timestamp(milliseconds: t.milliseconds + s * 1_000) }
        try await repository.recordSuccess(targets[0], feed: ParsedFeed(title: "A news", entries: [
            FeedEntry(key: "1", title: "A old", url: "https://a.example/1", publishedAt: at(1)),
            FeedEntry(key: "2", title: "A undated", url: nil, publishedAt: nil),
            FeedEntry(key: "2", title: "A duplicate key", url: nil, publishedAt: nil),
            FeedEntry(key: "3", title: "A new", url: nil, publishedAt: at(5)),
        ]), etag: "\"e1\"", lastModified: nil, at: at(10))
        try await repository.recordSuccess(targets[1], feed: ParsedFeed(title: nil, entries: [
            FeedEntry(key: "x", title: "B mid", url: nil, publishedAt: at(3)),
            FeedEntry(key: "y", title: "B undated", url: nil, publishedAt: nil),
        ]), etag: nil, lastModified: "Mon, 01 Jan 2024 00:00:00 GMT", at: at(10))
        let items = try await repository.latest(limit: 10)
        #expect(items.map(\.title) == ["A new", "B mid", "A old", "A undated", "B undated"])
        #expect(items.map(\.source) == ["A news", "b.example", "A news", "A news", "b.example"])
        #expect(try await repository.latest(limit: 2).count == 2)
        try await repository.recordNotModified(targets[0], etag: nil, lastModified: "Tue, 02 Jan 2024 00:00:00 GMT", at: at(20))
        try await repository.recordFailure(targets[1], reason: "HTTP 500", at: at(20))
        let kept = try await repository.targets()
        #expect(kept[0].etag == "\"e1\"" && kept[0].lastModified == "Tue, 02 Jan 2024 00:00:00 GMT")
        let statuses = try await repository.replace(with: [c, a])
        #expect(statuses.map(\.url) == [c, a])
        #expect(statuses[0].status == "pending" && statuses[0].entryCount == 0)
        #expect(statuses[1].status == "ok" && statuses[1].entryCount == 3 && statuses[1].title == "A news"
                && statuses[1].lastSuccessAt == at(20))
        #expect(try await repository.latest(limit: 10).map(\.title) == ["A new", "A old", "A undated"], "b's entries went with it")
        // A fetch of a URL removed meanwhile changes nothing.
        try await repository.recordSuccess(targets[1], feed: ParsedFeed(title: "B", entries: [
            FeedEntry(key: "z", title: "B late", url: nil, publishedAt: at(30)),
        ]), etag: nil, lastModified: nil, at: at(30))
        #expect(try await repository.latest(limit: 10).map(\.title) == ["A new", "A old", "A undated"])
        await store.close()
    }
}
