@testable import SGEMHolidays
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// The holidays module's SQL on every backend: its schema (PostgreSQL's baseline), each kind of
/// statement, and on PostgreSQL the overlap rule across two stores standing for two instances.
@Suite("Holidays: the repository on every backend")
struct RepositoryBackendTests {
    static func migrated(_ database: TestDatabase) async throws -> Store {
        let store = try database.open()
        var migrations = MigrationList()
        HolidaysRepository.registerMigrations(&migrations)
        _ = try await store.migrate(migrations)
        return store
    }

    @Test("every migration of the module has a PostgreSQL form")
    func everyMigrationRunsOnPostgreSQL() {
        var migrations = MigrationList()
        HolidaysRepository.registerMigrations(&migrations)
        #expect(!migrations.ids.isEmpty && migrations.withoutPostgreSQLForm.isEmpty)
    }

    static func day(_ iso: String) -> Day { Day(iso: iso)! }

    static func new(_ user: Int64, _ type: LeaveType, _ start: String, _ end: String, _ perYear: [Int: Double],
                    status: HolidayStatus = .pending, halfEnd: Bool = false) -> HolidaysRepository.NewRequest {
        HolidaysRepository.NewRequest(userID: user, type: type, start: day(start), end: day(end), halfStart: false, halfEnd: halfEnd,
                                      perYear: perYear, status: status, note: "n", createdAt: Timestamp(milliseconds: 1_000))
    }

    @Test("leave types, public holidays, allowances and tokens: inserts, conflicts, updates, deletes", arguments: TestBackend.available)
    func referenceData(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try await Self.migrated(database)
        let repository = HolidaysRepository(store: store)
        let at = Timestamp(milliseconds: 5_000)
        try await store.write { db in
            let vacation = try #require(try HolidaysRepository.leaveType(key: "vacation", in: db))
            #expect(vacation.id == 1 && vacation.countsAgainstAllowance && vacation.needsApproval)
            let sick = try #require(try HolidaysRepository.insertLeaveType(key: "sick", name: "Sick", countsAgainstAllowance: false,
                                                                           needsApproval: false, at: at, in: db))
            #expect(sick.key == "sick" && !sick.countsAgainstAllowance && !sick.needsApproval)
            #expect(try HolidaysRepository.insertLeaveType(key: "sick", name: "Again", countsAgainstAllowance: true, needsApproval: true,
                                                           at: at, in: db) == nil)
            try HolidaysRepository.updateLeaveType(id: sick.id, name: nil, countsAgainstAllowance: nil, needsApproval: true, in: db)
            #expect(try HolidaysRepository.leaveType(id: sick.id, in: db)
                    == LeaveType(id: sick.id, key: "sick", name: "Sick", countsAgainstAllowance: false, needsApproval: true))
            #expect(try !HolidaysRepository.isLeaveTypeUsed(id: sick.id, in: db))
            #expect(try HolidaysRepository.deleteLeaveType(id: sick.id, in: db))
            #expect(try !HolidaysRepository.deleteLeaveType(id: sick.id, in: db))

            let first = try #require(try HolidaysRepository.insertPublicHoliday(date: Self.day("2031-01-01"), name: "New Year", at: at, in: db))
            #expect(try HolidaysRepository.insertPublicHoliday(date: Self.day("2031-01-01"), name: "Twice", at: at, in: db) == nil)
            _ = try HolidaysRepository.insertPublicHoliday(date: Self.day("2031-12-25"), name: "Christmas", at: at, in: db)
            #expect(try HolidaysRepository.publicHoliday(id: first.id, in: db)?.name == "New Year")

            #expect(try HolidaysRepository.allowance(userID: 7, year: 2031, in: db) == nil)
            try HolidaysRepository.setAllowance(userID: 7, year: 2031, days: 22.5, at: at, in: db)
            try HolidaysRepository.setAllowance(userID: 7, year: 2031, days: 24.5, at: at, in: db)
            #expect(try HolidaysRepository.allowance(userID: 7, year: 2031, in: db) == 24.5)

            try HolidaysRepository.setCalendarToken(userID: 7, hash: "h1", at: at, in: db)
            try HolidaysRepository.setCalendarToken(userID: 7, hash: "h2", at: at, in: db)
        }
        #expect(try await repository.leaveTypes().map(\.key) == ["vacation"])
        #expect(try await repository.publicHolidays(year: 2031).map(\.name) == ["New Year", "Christmas"])
        #expect(try await repository.calendarTokenOwner(hash: "h1") == nil)
        #expect(try await repository.calendarTokenOwner(hash: "h2") == 7)
        await store.close()
    }

    @Test("requests: ledger sums, overlaps, histories past 500 ids, the admin list's filters and order, calendars, who is away",
          arguments: TestBackend.available)
    func requests(_ backend: TestBackend) async throws {
        let database = try TestDatabase(backend)
        let store = try await Self.migrated(database)
        let repository = HolidaysRepository(store: store)
        let ids = try await store.write { db -> [Int64] in
            let vacation = try #require(try HolidaysRepository.leaveType(key: "vacation", in: db))
            let unpaid = try #require(try HolidaysRepository.insertLeaveType(key: "unpaid", name: "Unpaid", countsAgainstAllowance: false,
                                                                             needsApproval: true, at: .now(), in: db))
            var ids: [Int64] = []
            // Across the new year: 2 days in 2030, 2.5 in 2031.
            ids.append(try HolidaysRepository.insertRequest(Self.new(1, vacation, "2030-12-30", "2031-01-03", [2030: 2, 2031: 2.5],
                                                                     status: .approved, halfEnd: true), in: db))
            ids.append(try HolidaysRepository.insertRequest(Self.new(1, vacation, "2031-03-02", "2031-03-04", [2031: 3]), in: db))
            ids.append(try HolidaysRepository.insertRequest(Self.new(1, unpaid, "2031-05-01", "2031-05-01", [2031: 1]), in: db))
            ids.append(try HolidaysRepository.insertRequest(Self.new(2, vacation, "2031-03-03", "2031-03-10", [2031: 6]), in: db))
            for (n, id) in ids.enumerated() {
                try HolidaysRepository.appendHistory(requestID: id, HistoryEntry(from: nil, to: .pending, byUserID: 1,
                                                                                 at: Timestamp(milliseconds: Int64(n)), note: nil), in: db)
            }
            try HolidaysRepository.setStatus(id: ids[3], to: .approved, decidedBy: 9, at: Timestamp(milliseconds: 99), note: "ok", in: db)
            try HolidaysRepository.appendHistory(requestID: ids[3], HistoryEntry(from: .pending, to: .approved, byUserID: 9,
                                                                                 at: Timestamp(milliseconds: 99), note: "ok"), in: db)
            try HolidaysRepository.setStatus(id: ids[1], to: .cancelled, decidedBy: nil, at: .now(), note: nil, in: db)
            return ids
        }
        try await store.read { db in
            let ledger2031 = try HolidaysRepository.ledger(userID: 1, year: 2031, in: db)
            #expect(ledger2031.approved == 2.5 && ledger2031.pending == 0)
            #expect(try HolidaysRepository.ledger(userID: 1, year: 2030, in: db) == (approved: 2, pending: 0))
            #expect(try HolidaysRepository.overlaps(userID: 1, start: Self.day("2031-01-03"), end: Self.day("2031-01-09"), in: db))
            // The cancelled request holds no days.
            #expect(try !HolidaysRepository.overlaps(userID: 1, start: Self.day("2031-03-01"), end: Self.day("2031-03-31"), in: db))
            #expect(try HolidaysRepository.countingRequests(userID: 1, from: Self.day("2031-01-01"), to: Self.day("2031-12-31"), in: db)
                .map(\.id) == [ids[0]])
            let decided = try #require(try HolidaysRepository.request(id: ids[3], in: db))
            #expect(decided.status == .approved && decided.decidedBy == 9 && decided.decisionNote == "ok" && decided.days == 6)
            #expect(decided.history.map(\.to) == [.pending, .approved])
            let first = try #require(try HolidaysRepository.request(id: ids[0], in: db))
            #expect(first.halfEnd && !first.halfStart && first.days == 4.5 && first.decidedAt == Timestamp(milliseconds: 1_000))
            // A history asked for with 1,200 ids (three statements), most of them without one.
            let histories = try HolidaysRepository.history(of: Array(1...1_200), in: db)
            #expect(histories.count == 4 && histories[ids[3]]?.count == 2)
            #expect(try HolidaysRepository.history(of: [], in: db).isEmpty)
            #expect(try HolidaysRepository.requests(userID: 1, year: 2031, in: db).map(\.id) == [ids[2], ids[1], ids[0]])
        }
        // The admin list: pending first (soonest start), then the rest, the latest start first.
        #expect(try await repository.adminRequests(status: nil, year: nil, userID: nil, typeKey: nil, limit: 10).map(\.id)
                == [ids[2], ids[3], ids[1], ids[0]])
        #expect(try await repository.adminRequests(status: .approved, year: 2031, userID: nil, typeKey: nil, limit: 10).map(\.id)
                == [ids[3], ids[0]])
        #expect(try await repository.adminRequests(status: nil, year: 2030, userID: 1, typeKey: "vacation", limit: 10).map(\.id) == [ids[0]])
        #expect(try await repository.adminRequests(status: nil, year: nil, userID: nil, typeKey: "unpaid", limit: 10).map(\.id) == [ids[2]])
        #expect(try await repository.adminRequests(status: nil, year: nil, userID: nil, typeKey: nil, limit: 2).count == 2)
        let march = (Self.day("2031-03-01"), Self.day("2031-03-31"))
        #expect(try await repository.requests(from: march.0, to: march.1, statuses: [.approved], limit: 10).map(\.id) == [ids[3]])
        #expect(try await repository.requests(from: march.0, to: march.1, statuses: [], limit: 10).isEmpty)
        #expect(try await repository.requests(from: Self.day("2030-01-01"), to: Self.day("2031-12-31"), statuses: [.approved, .pending],
                                              limit: 10).map(\.id) == [ids[0], ids[3], ids[2]])
        // Who is away, asked about 1,000 people at once (two statements).
        let away = try await repository.awayUntil(userIDs: Array(1...1_000), on: Self.day("2031-03-05"))
        #expect(away == [2: Self.day("2031-03-10")])
        #expect(try await repository.awayUntil(userIDs: [], on: Self.day("2031-03-05")).isEmpty)
        await store.close()
    }
}

/// What only several processes on one PostgreSQL can show.
@Suite("Holidays: the overlap rule across instances",
       .enabled(if: testDatabaseURL != nil, "set SGEM_TEST_DATABASE_URL (make test does) to run against PostgreSQL"))
struct HolidaysOnPostgresTests {
    @Test("one person sends 20 overlapping requests through two stores at once: exactly one is stored")
    func overlapRuleHoldsAcrossStores() async throws {
        let database = try TestDatabase(.postgresql)
        let first = try await RepositoryBackendTests.migrated(database)
        let second = try database.open()
        struct Overlap: Error {}
        let stored = try await withThrowingTaskGroup(of: Bool.self) { group in
            for n in 0..<20 {
                let store = n % 2 == 0 ? first : second
                group.addTask {
                    do {
                        // As `HolidayBook.create` does it: the check and the insert in one write.
                        try await store.write { db in
                            let type = try #require(try HolidaysRepository.leaveType(key: "vacation", in: db))
                            let (start, end) = (RepositoryBackendTests.day("2031-06-01"), RepositoryBackendTests.day("2031-06-0\(n % 5 + 2)"))
                            guard try !HolidaysRepository.overlaps(userID: 1, start: start, end: end, in: db) else { throw Overlap() }
                            _ = try HolidaysRepository.insertRequest(RepositoryBackendTests.new(1, type, start.iso, end.iso, [2031: 1]), in: db)
                        }
                        return true
                    } catch is Overlap {
                        return false
                    }
                }
            }
            return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(stored == 1)
        #expect(try await second.read { db in try HolidaysRepository.requests(userID: 1, year: 2031, in: db) }.count == 1)
        await first.close()
        await second.close()
    }
}
