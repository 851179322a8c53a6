import SGEMContracts
import SGEMCore
@testable import SGEMNotices
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// The notices module's SQL on every backend: its schema (PostgreSQL's baseline), the board as
/// each reader sees it, read marks, edits and deletions.
@Suite("Notices: the repository on every backend")
struct RepositoryBackendTests {
    static func draft(_ kind: Notice.Kind, to recipient: Int64? = nil, by author: Int64?, pinned: Bool = false, _ title: String,
                      facts: HolidayNoticeFacts? = nil) -> Notice.Draft {
        Notice.Draft(kind: kind, recipientID: recipient, title: title, body: "b", pinned: pinned, authorID: author,
                     createdAt: Timestamp(milliseconds: 1_000), audienceBase: author == nil ? nil : 3, facts: facts)
    }

    @Test("who sees which notice, unread counts by kind, read marks once, pages, edits and deletions with their reads",
          arguments: TestBackend.available)
    func board(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try database.open()
        var migrations = MigrationList()
        NoticesRepository.registerMigrations(&migrations)
        #expect(migrations.withoutPostgreSQLForm.isEmpty)
        _ = try await store.migrate(migrations)
        let repository = NoticesRepository(store: store)
        let facts = HolidayNoticeFacts(action: .approved, start: "2031-03-03", end: "2031-03-04", halfStart: false, halfEnd: true,
                                       workingDays: 1.5, typeKey: "vacation", typeName: "Vacation", decider: "Boss")
        // 1: the admin's pinned news; 2: news from the command line (no author); 3: a holiday
        // notice for user 2; 4: one for user 3.
        let ids = try await store.write { db in
            try [Self.draft(.company, by: 1, pinned: true, "pinned"), Self.draft(.company, by: nil, "cli"),
                 Self.draft(.holiday, to: 2, by: 1, "for two", facts: facts), Self.draft(.holiday, to: 3, by: 1, "for three")]
                .map { try NoticesRepository.insert($0, in: db).id }
        }
        #expect(ids == [1, 2, 3, 4])
        try await store.read { db in
            #expect(try NoticesRepository.pinned(viewer: 2, in: db).map(\.id) == [1])
            #expect(try NoticesRepository.pinned(viewer: 2, kind: .holiday, in: db).isEmpty)
            #expect(try NoticesRepository.unpinned(viewer: 2, before: nil, limit: 10, in: db).map(\.id) == [3, 2])
            #expect(try NoticesRepository.unpinned(viewer: 2, before: 3, limit: 10, in: db).map(\.id) == [2])
            #expect(try NoticesRepository.unpinned(viewer: 2, before: nil, limit: 10, kind: .holiday, in: db).map(\.id) == [3])
            // The author has read their own news; nobody else has.
            #expect(try NoticesRepository.unreadByKind(viewer: 1, in: db) == [.company: 1, .holiday: 0])
            #expect(try NoticesRepository.unreadByKind(viewer: 2, in: db) == [.company: 2, .holiday: 1])
            #expect(try NoticesRepository.notice(1, viewer: 1, in: db)?.read == true)
            #expect(try NoticesRepository.notice(4, viewer: 2, in: db) == nil)
            let holiday = try #require(try NoticesRepository.notice(3, viewer: 2, in: db))
            #expect(holiday.facts == facts && holiday.recipientID == 2 && !holiday.read && holiday.audienceBase == 3)
        }
        let at = Timestamp(milliseconds: 2_000)
        #expect(try await repository.markRead(1, viewer: 2, at: at))
        #expect(try await repository.markRead(1, viewer: 2, at: at))
        #expect(try await !repository.markRead(4, viewer: 2, at: at))
        #expect(try await !repository.markRead(99, viewer: 2, at: at))
        // The author's own read does not count among the readers.
        #expect(try await repository.markRead(1, viewer: 1, at: at))
        let read = try #require(try await repository.notice(1, viewer: 2))
        #expect(read.read && read.readCount == 1)
        #expect(try await store.write { db in try NoticesRepository.markAllRead(viewer: 2, kind: .holiday, at: at, in: db) } == 1)
        #expect(try await store.write { db in try NoticesRepository.markAllRead(viewer: 2, at: at, in: db) } == 1)
        #expect(try await store.read { db in try NoticesRepository.unreadCount(viewer: 2, in: db) } == 0)

        try await store.write { db in
            #expect(try NoticesRepository.update(1, title: "edited", body: nil, pinned: false, editedAt: at, in: db))
            #expect(try !NoticesRepository.update(3, title: "not a company notice", body: nil, pinned: nil, editedAt: nil, in: db))
            let edited = try #require(try NoticesRepository.companyNotice(1, viewer: 0, in: db))
            #expect(edited.title == "edited" && edited.body == "b" && !edited.pinned && edited.editedAt == at && !edited.read)
            #expect(try NoticesRepository.companyNotice(3, viewer: 0, in: db) == nil)
        }
        #expect(try await repository.companyNotices(limit: 10).map(\.id) == [2, 1])
        #expect(try await store.write { db in try NoticesRepository.deleteCompanyNotice(1, in: db) })
        #expect(try await store.write { db in try NoticesRepository.deleteCompanyNotice(3, in: db) } == false)
        // Its reads went with it.
        #expect(try await store.read { db in try db.fetchOne("SELECT COUNT(*) AS n FROM notices_reads WHERE notice_id = 1")?.int("n") } == 0)
        await store.close()
    }
}
