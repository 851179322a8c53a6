import Synchronization
import Testing
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport
@testable import SGEMSystem

@Suite("Event journal")
struct EventJournalTests {
    static func notice(_ n: Int) -> RealtimeEvent {
        RealtimeEvent(type: "notice.created", audience: .everyone, data: ["notice": ["id": .number(Double(n))]])
    }

    @Test("the system module publishes the journal; appended events read back in order with their audience and data",
          arguments: TestBackend.available)
    func appendAndRead(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        #expect(try await journal.lastEventID() == 0)
        let events: [RealtimeEvent] = [
            EventJournalTests.notice(1),
            RealtimeEvent(type: "holiday.updated", audience: .user(42), data: ["request": ["id": 7, "status": "approved"]]),
            RealtimeEvent(type: "message.created", audience: .chat(9), data: ["body": "héllo \"x\"\n"]),
            RealtimeEvent(type: "chat.created", audience: .admins, data: [:]),
        ]
        let ids = try await f.store.write { db in try events.map { try journal.append($0, in: db) } }
        #expect(ids == ids.sorted() && Set(ids).count == 4)
        let read = try await journal.events(after: 0, limit: 10)
        // Parsing does not keep key order; the stream's meaning does not depend on it.
        #expect(read.map(\.event.type) == events.map(\.type))
        #expect(read.map(\.event.audience) == events.map(\.audience))
        #expect(read.map { sortedKeys($0.event.data) } == events.map { sortedKeys($0.data) })
        #expect(read.map(\.id) == ids)
        #expect(try await journal.events(after: ids[1], limit: 10).map(\.id) == Array(ids[2...]))
        #expect(try await journal.events(after: 0, limit: 2).map(\.id) == Array(ids[..<2]))
        #expect(try await journal.lastEventID() == ids[3])
        let before = Timestamp.now().milliseconds
        #expect(read.allSatisfy { $0.at.milliseconds <= before && $0.at.milliseconds > before - 60_000 })
        await f.close()
    }

    @Test("a typed read keeps the types and audience kinds asked for, and a chat's events only for the chats asked for; it looks as far either way",
          arguments: TestBackend.available)
    func typedReadsKeepTheChatsAskedFor(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        let events: [RealtimeEvent] = [
            RealtimeEvent(type: "message.created", audience: .chat(1), data: ["n": 1]),
            RealtimeEvent(type: "message.created", audience: .chat(2), data: ["n": 2]),
            RealtimeEvent(type: "member.removed", audience: .users([5, 6]), data: ["n": 3]),
            EventJournalTests.notice(4),
            RealtimeEvent(type: "chat.updated", audience: .chat(2), data: ["n": 5]),
        ]
        let ids = try await f.store.write { db in try events.map { try journal.append($0, in: db) } }
        let types: Set<String> = ["message.created", "member.removed", "chat.updated"]
        func read(_ chats: Set<Int64>?) async throws -> (numbers: [Double], scannedTo: Int64) {
            let window = try await journal.events(after: 0, limit: 10, types: types, audiences: [.chat, .users], chats: chats)
            return (window.events.compactMap { $0.event.data["n"]?.numberValue }, window.scannedTo)
        }
        let every = try await read(nil)
        #expect(every.numbers == [1, 2, 3, 5] && every.scannedTo == ids.last)
        let second = try await read([2, 7])
        #expect(second.numbers == [2, 3, 5] && second.scannedTo == ids.last)
        let none = try await read([])
        #expect(none.numbers == [3] && none.scannedTo == ids.last, "with no chat asked for, only the other audiences' events")
        await f.close()
    }

    @Test("an audience kind the journal does not know is refused on every backend; on PostgreSQL by a domain, no CHECK on the table",
          arguments: TestBackend.available)
    func unknownAudienceRefused(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        await #expect(throws: StoreError.self) {
            try await f.store.write { db in
                try db.run("INSERT INTO system_events (type, audience_kind, data, created_at) VALUES ('x', 'nobody', '{}', 1)")
            }
        }
        if backend == .postgresql {
            let checks = try await f.store.read { db in
                try db.fetchOne("SELECT count(*) AS n FROM pg_constraint WHERE conrelid = 'system_events'::regclass AND contype = 'c'")?.int("n")
            }
            #expect(checks == 0)
        }
        await f.close()
    }

    @Test("an event appended in a write that throws is rolled back with it", arguments: TestBackend.available)
    func rolledBackWithTheCaller(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await f.store.write { db in
                _ = try journal.append(EventJournalTests.notice(1), in: db)
                throw Refused()
            }
        }
        #expect(try await journal.events(after: 0, limit: 10).isEmpty)
        await f.close()
    }

    @Test("rewriting a subject changes the data of its events only, in the caller's transaction; ids, types and audiences stay",
          arguments: TestBackend.available)
    func rewriteChangesOneSubject(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        let events = [
            RealtimeEvent(type: "message.created", audience: .chat(1), data: ["body": "secret"], subject: "message:1"),
            RealtimeEvent(type: "message.created", audience: .chat(1), data: ["body": "other"], subject: "message:2"),
            RealtimeEvent(type: "message.updated", audience: .chatMembers(chat: 1, users: [3]), data: ["body": "secret"], subject: "message:1"),
            RealtimeEvent(type: "test.plain", audience: .everyone, data: ["body": "secret"]),
        ]
        _ = try await f.store.write { db in try events.map { try journal.append($0, in: db) } }
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await f.store.write { db in
                #expect(try journal.rewrite(subject: "message:1", to: ["deleted": true], in: db) == 2)
                throw Refused()
            }
        }
        #expect(try await journal.events(after: 0, limit: 10).map(\.event) == events, "rolled back with the caller")
        let changed = try await f.store.write { db in try journal.rewrite(subject: "message:1", to: ["deleted": true], in: db) }
        #expect(changed == 2)
        let after = try await journal.events(after: 0, limit: 10)
        #expect(after.map(\.event.data) == [["deleted": true], ["body": "other"], ["deleted": true], ["body": "secret"]])
        #expect(after.map(\.event.type) == events.map(\.type))
        #expect(after.map(\.event.audience) == events.map(\.audience))
        await f.close()
    }

    @Test("ids are never reused after retention removed every event, and lastEventID remembers them", arguments: TestBackend.available)
    func idsNeverReused(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        let first = try await f.store.write { db in try (1...3).map { try journal.append(EventJournalTests.notice($0), in: db) } }
        #expect(try await journal.removeEvents(recordedBefore: Timestamp(milliseconds: Timestamp.now().milliseconds + 60_000)) == 3)
        #expect(try await journal.horizon() == first.last)
        #expect(try await journal.lastEventID() == first.last)
        let next = try await f.store.write { db in try journal.append(EventJournalTests.notice(4), in: db) }
        #expect(next > first.last!)
        #expect(try await journal.events(after: 0, limit: 10).map(\.id) == [next])
        await f.close()
    }

    @Test("retention removes the oldest events as a prefix of the ids, and the horizon says where it stopped",
          arguments: TestBackend.available)
    func retentionAndHorizon(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        #expect(try await journal.horizon() == 0)
        let ids = try await f.store.write { db in try (1...4).map { try journal.append(EventJournalTests.notice($0), in: db) } }
        let old = Timestamp(milliseconds: 1_000_000)
        // The first two are a week old; the third too, as a writer with a late clock saw it.
        try await f.store.write { db in
            try db.execute("UPDATE system_events SET created_at = ? WHERE id IN (?, ?)", old, ids[0], ids[1])
        }
        let cutoff = Timestamp(milliseconds: 2_000_000)
        #expect(try await journal.removeEvents(recordedBefore: cutoff) == 2)
        #expect(try await journal.horizon() == ids[1])
        #expect(try await journal.events(after: 0, limit: 10).map(\.id) == Array(ids[2...]))
        #expect(try await journal.removeEvents(recordedBefore: cutoff) == 0)
        try await f.store.write { db in try db.execute("UPDATE system_events SET created_at = ? WHERE id = ?", old, ids[3]) }
        // A prefix only: the newer event before the old one goes too, so no hole hides behind the horizon.
        #expect(try await journal.removeEvents(recordedBefore: cutoff) == 2)
        #expect(try await journal.horizon() == ids[3])
        #expect(try await journal.lastEventID() == ids[3])
        await f.close()
    }

    @Test("a read is bounded whatever limit is asked", arguments: TestBackend.available, [0, -5, 5000])
    func boundedReads(_ backend: TestBackend, limit: Int) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        try await f.store.write { db in
            for n in 0..<(StoredEventJournal.maxBatch + 5) { _ = try journal.append(EventJournalTests.notice(n), in: db) }
        }
        let count = try await journal.events(after: 0, limit: limit).count
        #expect(count == (limit <= 0 ? 0 : min(limit, StoredEventJournal.maxBatch)))
        await f.close()
    }

    @Test("didCommit wakes every listener, coalesced; a cancelled listener is removed")
    func commitSignal() async throws {
        let f = try await SystemFixture()
        let journal = try #require(f.context.services.resolve((any EventJournal).self) as? StoredEventJournal)
        let first = journal.commits()
        let second = journal.commits()
        #expect(journal.listenerCount == 2)
        // Three commits before anyone reads come as one wake-up each: nothing queues up.
        journal.didCommit(); journal.didCommit(); journal.didCommit()
        var a = first.makeAsyncIterator()
        var b = second.makeAsyncIterator()
        #expect(await a.next() != nil)
        #expect(await b.next() != nil)
        let tail = Task { () -> Int in
            var wakes = 0
            for await _ in journal.commits() { wakes += 1; if wakes == 1 { break } }
            return wakes
        }
        #expect(await eventually { journal.listenerCount == 3 })
        journal.didCommit()
        #expect(await tail.value == 1)
        #expect(await eventually { journal.listenerCount == 2 }, "the finished listener is gone")
        await f.close()
    }

    @Test("wakeOnCommit yields each commit straight into the worker's own stream, coalesced, until cancelled")
    func wakeOnCommitYieldsIntoTheGivenStream() async throws {
        let f = try await SystemFixture()
        let journal = try #require(f.context.services.resolve((any EventJournal).self) as? StoredEventJournal)
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let registration = journal.wakeOnCommit(wake)
        #expect(journal.listenerCount == 1)
        // A commit of a write that appended an event wakes it; three before it looks come as one.
        _ = try await f.store.write { db in try journal.append(EventJournalTests.notice(1), in: db) }
        journal.didCommit(); journal.didCommit()
        var iterator = wakes.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        registration.cancel()
        registration.cancel()
        #expect(journal.listenerCount == 0, "cancelled once, however often asked")
        journal.didCommit()
        // Nothing was yielded after the cancel: finish the stream, and the next element is its end.
        wake.finish()
        #expect(await iterator.next() == nil)
        await f.close()
    }

    @Test("a worker that one instance runs: commits wake it while it leads, not while it follows, never after it stopped")
    func commitWakeupsOnlyWhileLeading() async throws {
        let f = try await SystemFixture()
        let journal = try #require(f.context.services.resolve((any EventJournal).self) as? StoredEventJournal)
        let (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let commits = CommitWakeupsWhileLeading(journal: journal, wake: wake)
        commits.follow(leading: false)
        #expect(!commits.isRegistered && journal.listenerCount == 0)
        commits.follow(leading: true)
        commits.follow(leading: true)
        #expect(commits.isRegistered && journal.listenerCount == 1, "one registration, however many polls")
        journal.didCommit()
        var iterator = wakes.makeAsyncIterator()
        #expect(await iterator.next() != nil)
        commits.follow(leading: false)
        #expect(!commits.isRegistered && journal.listenerCount == 0, "a follower hears no commits")
        commits.follow(leading: true)
        #expect(journal.listenerCount == 1, "taking the lead again listens again")
        commits.stop()
        commits.follow(leading: true)
        #expect(!commits.isRegistered && journal.listenerCount == 0, "a poll after the worker stopped registers nothing")
        await f.close()
    }

    @Test("the admin verbs get a journal too, on the store they open")
    func journalForCommands() async throws {
        let f = try await SystemFixture()
        var commands = CommandRegistry()
        let context = CommandModuleContext(configuration: Configuration(overrides: [:]), openStore: { f.store })
        SystemModule(version: "test").registerCommands(&commands, context: context)
        let journal = try #require(context.services.resolve((any EventJournal).self))
        let id = try await f.store.write { db in try journal.append(EventJournalTests.notice(1), in: db) }
        #expect(try await journal.events(after: 0, limit: 1).map(\.id) == [id])
        await f.close()
    }
}

/// `value` with every object's keys in sorted order, for comparisons that ignore key order.
func sortedKeys(_ value: JSONValue) -> JSONValue {
    switch value {
    case let .object(pairs): .object(pairs.map { ($0.0, sortedKeys($0.1)) }.sorted { $0.0 < $1.0 })
    case let .array(items): .array(items.map(sortedKeys))
    default: value
    }
}

@Suite("Event journal: the table's rebuilds")
struct EventAudienceMigrationTests {
    @Test("the rebuilds keep every event and its id, give older events their subject, and ids keep growing even when retention had emptied the table (SQLite's history)",
          arguments: [false, true])
    func rebuildKeepsIDs(emptied: Bool) async throws {
        let dir = TempDir()
        let store = try Store(path: dir.path + "/sgem.db", logger: Logger(label: "test"))
        var all = MigrationList()
        SystemModule(version: "test").registerMigrations(&all)
        _ = try await store.migrate(all.before("system.005_event_audiences"))
        // Rows as the first version of the table held them: a message created, translated for one
        // reader (then 'users'), edited, deleted; another only created.
        let old: [(String, String, String)] = [
            ("notice.created", "everyone", #"{"notice":{"id":7,"title":"t"}}"#),
            ("message.created", "chat", #"{"message":{"id":42,"body":"first"}}"#),
            ("message.updated", "users", #"{"message":{"id":42,"body":"first","translation":{"text":"primero"}}}"#),
            ("message.updated", "chat", #"{"message":{"id":42,"body":"second"}}"#),
            ("message.created", "chat", #"{"message":{"id":43,"body":"kept"}}"#),
            ("message.deleted", "chat", #"{"message":{"id":42,"body":null,"deleted":true}}"#),
            ("chat.created", "users", #"{"chat":{"id":3}}"#),
        ]
        let ids = try await store.write { db in
            try old.map { type, kind, data -> Int64 in
                try #require(try db.queryOne("""
                    INSERT INTO system_events (type, audience_kind, audience_id, audience_users, data, created_at)
                    VALUES (?, ?, CASE ? WHEN 'chat' THEN 1 END, CASE ? WHEN 'users' THEN '1' END, ?, 1) RETURNING id
                    """, type, kind, kind, kind, data)?.int64("id"))
            }
        }
        let journal = StoredEventJournal(store: { store })
        // Retention as the releases before system.007 did it: a plain delete, remembered only by
        // SQLite's counter, which 007 carries into system_events_removed.
        if emptied { try await store.write { db in try db.execute("DELETE FROM system_events") } }
        #expect(try await store.migrate(all) == ["system.005_event_audiences", "system.006_event_subjects", "system.007_events_removed",
                                                      "system.008_job_runs", "system.009_journal_audience_domain"])
        let kept = try await journal.events(after: 0, limit: 10)
        #expect(kept.map(\.id) == (emptied ? [] : ids))
        #expect(kept.map(\.event.subject) == (emptied ? [] : ["notice:7", "message:42", "message:42", "message:42", "message:43",
                                                               "message:42", nil]))
        let tombstone: JSONValue = ["message": .object([("id", 42), ("body", .null), ("deleted", true)])]
        #expect(kept.map { sortedKeys($0.event.data) } == (emptied ? [] : [
            ["notice": .object([("id", 7), ("title", "t")])], tombstone, tombstone, tombstone,
            ["message": .object([("id", 43), ("body", "kept")])], tombstone, ["chat": ["id": 3]],
        ].map(sortedKeys)), "a deleted message's older events take its tombstone")
        #expect(try await journal.lastEventID() == ids.last)
        let audiences: [EventAudience] = [.chatMembers(chat: 3, users: [1, 2]), .userAndAdmins(4), .hubs]
        let next = try await store.write { db in
            try audiences.map { try journal.append(RealtimeEvent(type: "t", audience: $0, data: [:]), in: db) }
        }
        #expect(next.first == ids.last! + 1)
        #expect(try await journal.events(after: ids.last!, limit: 10).map(\.event.audience) == audiences)
        await store.close()
    }

    @Test("a journal watch hands over the watched events for the instances, in order and once; a setting's change is one; another process's come by its poll",
          arguments: TestBackend.available)
    func journalWatch(_ backend: TestBackend) async throws {
        let f = try await SystemFixture(backend: backend)
        let journal = try #require(f.context.services.resolve((any EventJournal).self))
        try await f.store.write { db in try journal.record(RuntimeSettingChange.event(key: "before.start"), in: db) }
        let start = try await journal.lastEventID()
        let seen = Mutex<[String]>([])
        let watch = JournalWatch(journal: journal, types: [RuntimeSettingChange.type, "test.changed"], spacing: .milliseconds(10),
                                 poll: .milliseconds(100), logger: Logger(label: "test"))
        let task = Task { await watch.run(from: start) { recorded in seen.withLock { $0.append(recorded.event.data["key"]?.stringValue ?? "?") } } }
        defer { task.cancel() }
        try await f.store.write { db in
            try journal.record(RuntimeSettingChange.event(key: "one"), in: db)
            // Not for the instances, or not a watched type: not handed over.
            try journal.record(RealtimeEvent(type: RuntimeSettingChange.type, audience: .everyone, data: ["key": "to everyone"]), in: db)
            try journal.record(RealtimeEvent(type: "test.other", audience: .hubs, data: ["key": "other type"]), in: db)
            try journal.record(RealtimeEvent(type: "test.changed", audience: .hubs, data: ["key": "two"]), in: db)
        }
        // The runtime settings record their own change (the key, never the value).
        try await f.settings.set("translation.provider", to: "deepl")
        #expect(await eventually { seen.withLock { $0 } == ["one", "two", "translation.provider"] }, "\(seen.withLock { $0 })")
        let recorded = try await journal.events(after: start, limit: 100).map(\.event)
        #expect(!recorded.contains { $0.data.serialized().contains("deepl") }, "the value stays out of the journal")
        // Another process's journal over the same database: its commits wake nothing here.
        let other = StoredEventJournal(store: { f.store })
        try await f.store.write { db in try other.record(RuntimeSettingChange.event(key: "three"), in: db) }
        #expect(await eventually { seen.withLock { $0 } == ["one", "two", "translation.provider", "three"] }, "\(seen.withLock { $0 })")
        task.cancel()
        await f.close()
    }
}
