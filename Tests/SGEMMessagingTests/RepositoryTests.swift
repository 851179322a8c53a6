import SGEMCore
@testable import SGEMMessaging
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// The repository on each backend: search answers the same on SQLite (FTS5) and PostgreSQL (a
/// generated tsvector), whatever people type, and follows edits and deletions at once.
@Suite("Messaging repository on every backend")
struct MessagingRepositoryTests {
    /// A migrated store with ana (1) and bob (2) in "Mine" and cleo (3) alone in "Other".
    struct Fixture {
        let database: TestDatabase
        let store: Store
        let mine: Int64
        let other: Int64

        init(_ backend: TestBackend) async throws {
            database = try TestDatabase(backend)
            store = try database.open()
            var migrations = MigrationList()
            MessagingRepository.registerMigrations(&migrations)
            _ = try await store.migrate(migrations)
            (mine, other) = try await store.write { db in
                let t = Timestamp(milliseconds: 1_000)
                let mine = try #require(try MessagingRepository.insertChat(kind: .group, name: "Mine", description: "", tags: [],
                                                                          isPublic: false, creator: 1, pairKey: nil, at: t, in: db))
                let other = try #require(try MessagingRepository.insertChat(kind: .group, name: "Other", description: "", tags: [],
                                                                           isPublic: false, creator: 3, pairKey: nil, at: t, in: db))
                try MessagingRepository.addMember(1, to: mine, admin: true, at: t, in: db)
                try MessagingRepository.addMember(2, to: mine, admin: false, at: t, in: db)
                try MessagingRepository.addMember(3, to: other, admin: true, at: t, in: db)
                return (mine, other)
            }
        }

        func send(_ body: String, to chat: Int64, as sender: Int64, mentions: [Int64] = []) async throws -> Message {
            try await store.write { db in
                try #require(try MessagingRepository.insertMessage(chatID: chat, senderID: sender, body: body, clientID: nil,
                                                                   mentions: mentions, at: Timestamp(milliseconds: 2_000), in: db))
            }
        }

        func search(_ text: String, as user: Int64 = 1, chat: Int64? = nil, before: Int64? = nil) async throws -> [MessagingRepository.Hit] {
            try await MessagingRepository(store: store).search(text: text, userID: user, chatID: chat, before: before, limit: 20)
        }
    }

    @Test("every messaging migration has a PostgreSQL form")
    func everyMigrationRunsOnPostgreSQL() {
        var migrations = MigrationList()
        MessagingRepository.registerMigrations(&migrations)
        #expect(migrations.ids.count == 6 && migrations.withoutPostgreSQLForm.isEmpty)
    }

    @Test("a first page from the newest matches and older ones beyond thousands of newer messages, then the next by before: the same on both backends",
          arguments: TestBackend.available)
    func searchReachesPastTheNewestMessages(_ backend: TestBackend) async throws {
        let f = try await Fixture(backend)
        var old: [Int64] = []
        for i in 0..<20 { old.append(try await f.send("hallazgo antiguo \(i)", to: f.mine, as: 1).id) }
        // More messages without the word than PostgreSQL's first look at the newest ones walks.
        let filler = Int(MessagingRepository.recentWindow) + 100
        try await f.store.write { db in
            try db.run("""
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(filler))
                INSERT INTO messaging_messages (chat_id, sender_id, body, mentions, created_at) SELECT \(f.mine), 2, 'relleno', '[]', 3000 FROM n
                """)
        }
        var recent: [Int64] = []
        for i in 0..<5 { recent.append(try await f.send("hallazgo reciente \(i)", to: f.mine, as: 2).id) }
        let first = try await f.search("hallazgo")
        #expect(first.map(\.message.id) == Array(recent.reversed()) + Array(old.reversed().prefix(15)), "\(backend)")
        let next = try await f.search("hallazgo", before: first.last?.message.id)
        #expect(next.map(\.message.id) == Array(old.reversed().suffix(5)), "\(backend)")
        // Enough among the newest: the first page is theirs alone.
        for i in 0..<20 { recent.append(try await f.send("hallazgo reciente \(i + 5)", to: f.mine, as: 2).id) }
        #expect(try await f.search("hallazgo").map(\.message.id) == Array(recent.reversed().prefix(20)), "\(backend)")
        #expect(try await f.search("hallazgo", as: 3).isEmpty, "\(backend): not cleo's chat")
    }

    @Test("a message's rules hold on every backend; on PostgreSQL as domains, with no CHECK on the table an INSERT plans again",
          arguments: TestBackend.available)
    func messageRulesHold(_ backend: TestBackend) async throws {
        let f = try await Fixture(backend)
        let sent = try await f.send("hola", to: f.mine, as: 1)
        for change: SQL in ["UPDATE messaging_messages SET deleted = 2 WHERE id = \(sent.id)",
                            "UPDATE messaging_messages SET kind = 'poll' WHERE id = \(sent.id)"] {
            await #expect(throws: StoreError.self, "\(backend): \(change)") { try await f.store.write { try $0.run(change) } }
        }
        let read = try await f.store.read { db in try MessagingRepository.message(sent.id, in: db) }
        #expect(read?.deleted == false && read?.kind == .text)
        if backend == .postgresql {
            let checks = try await f.store.read { db in
                try db.fetchOne("SELECT count(*) AS n FROM pg_constraint WHERE conrelid = 'messaging_messages'::regclass AND contype = 'c'")?.int("n")
            }
            #expect(checks == 0)
        }
    }

    @Test("words are found whatever their case, accents and punctuation; the last one as a start only when no message holds it whole",
          arguments: TestBackend.available)
    func searchAnswers(_ backend: TestBackend) async throws {
        let f = try await Fixture(backend)
        let old = try await f.send("Reunión en la CAFETERÍA mañana", to: f.mine, as: 1)
        let new = try await f.send("otra reunion", to: f.mine, as: 2)
        _ = try await f.send("reunion secreta", to: f.other, as: 3)
        let odd = try await f.send("¿Qué tal? «Hola» foo_bar a@b.com x—y ΑΒΓ Ωμέγα 2024-12-05 v1.5", to: f.mine, as: 2)
        let cases: [(String, [Int64])] = [
            ("REUNION", [new.id, old.id]), ("cafeteria man", [old.id]), ("reuni", [new.id, old.id]), ("reuni ", []),
            ("que", [odd.id]), ("hola", [odd.id]), ("foo_bar", [odd.id]), ("bar", [odd.id]), ("b", [odd.id]), ("com", [odd.id]),
            ("y", [odd.id]), ("αβγ", [odd.id]), ("ΑΒΓ", [odd.id]), ("ωμέγα", [odd.id]), ("2024", [odd.id]), ("05", [odd.id]),
            ("5", [odd.id]), ("secreta", []), ("bar foo", [odd.id]), ("foo_ba", [odd.id]), ("ba_foo", []),
        ]
        // The one known difference: FTS5 removes the accents of Latin letters only, PostgreSQL's
        // unaccent those of Greek ones too, so an unaccented Greek word finds more there.
        #expect(try await f.search("ωμεγα").map(\.message.id) == (backend == .sqlite ? [] : [odd.id]), "\(backend)")
        for (query, expected) in cases {
            #expect(try await f.search(query).map(\.message.id) == expected, "\(backend): \(query)")
        }
        // Operators and quotes of either backend's syntax typed by a person are plain text.
        for query in ["\"", "AND", "a* OR NEAR(", "^{}", "-", "***", "'", "\\", "a:*", "!&|<->", "(", "'a' & 'b'", "_", "__ _"] {
            #expect(try await f.search(query).allSatisfy { [old.id, new.id, odd.id].contains($0.message.id) }, "\(backend): \(query)")
        }
        #expect(try await f.search("reunion", before: new.id).map(\.message.id) == [old.id])
        #expect(try await f.search("reunion", as: 3).map(\.message.id) == [3], "only the reader's chats")
        #expect(try await f.search("reunion", as: 3, chat: f.mine).isEmpty)
        let snippet = try #require(try await f.search("reunion cafeteria").first?.snippet)
        #expect(snippet == "«Reunión» en la «CAFETERÍA» mañana", "\(backend)")
        await f.store.close()
    }

    @Test("a long message's snippet is the match with at most 16 words around it, the rest cut with …", arguments: TestBackend.available)
    func snippetOfLongMessage(_ backend: TestBackend) async throws {
        let f = try await Fixture(backend)
        let words = (1...30).map { "w\($0)" }
        _ = try await f.send((words[..<15] + ["needle"] + words[15...]).joined(separator: " "), to: f.mine, as: 1)
        let snippet = try #require(try await f.search("needle").first?.snippet)
        // FTS5 starts the window at the text's start when the match falls in its first 16 words;
        // ts_headline centres it. Both cut the rest with "…".
        #expect(snippet.hasSuffix("…") && snippet.contains("«needle»"), "\(backend): \(snippet)")
        #expect(snippet.split(separator: " ").count <= 17, "\(backend): \(snippet)")
        await f.store.close()
    }

    @Test("edits, deletions and a deleted chat are reflected at once; the index stays consistent", arguments: TestBackend.available)
    func indexFollowsChanges(_ backend: TestBackend) async throws {
        let f = try await Fixture(backend)
        let edited = try await f.send("walrus to edit", to: f.mine, as: 1)
        let removed = try await f.send("walrus to delete", to: f.mine, as: 1)
        let line = try await f.store.write { db in
            try MessagingRepository.insertSystemMessage(chatID: f.mine, line: SystemLine(event: .memberAdded, actorID: 1, userIDs: [2]),
                                                        at: Timestamp(milliseconds: 3_000), in: db)
        }
        try await f.store.write { db in
            try MessagingRepository.editMessage(edited, body: "a seal now", mentions: [], at: Timestamp(milliseconds: 4_000), in: db)
            try MessagingRepository.deleteMessage(removed, in: db)
        }
        #expect(try await f.search("walrus").isEmpty)
        #expect(try await f.search("seal").map(\.message.id) == [edited.id])
        let stored = try await f.store.read { db in try MessagingRepository.message(line.id, in: db) }
        #expect(stored == line, "a line reads back as written")
        _ = try await f.send("walrus in the other chat", to: f.other, as: 3)
        try await f.store.write { db in
            try MessagingRepository.checkSearchIndex(in: db)
            try MessagingRepository.deleteChat(f.other, in: db)
            try MessagingRepository.checkSearchIndex(in: db)
        }
        #expect(try await f.search("walrus", as: 3).isEmpty)
        await f.store.close()
    }

    @Test("read markers never go backwards nor past the newest message; unread and mentions follow them", arguments: TestBackend.available)
    func readMarkers(_ backend: TestBackend) async throws {
        let f = try await Fixture(backend)
        let first = try await f.send("hello @bob", to: f.mine, as: 1, mentions: [2, 99])
        let second = try await f.send("again", to: f.mine, as: 1)
        func view() async throws -> Chat.ReaderView {
            try await f.store.read { db in try MessagingRepository.view(of: f.mine, reader: 2, in: db) }
        }
        var seen = try await view()
        #expect(seen.unreadCount == 2 && seen.mentionCount == 1 && seen.lastMessage?.id == second.id)
        func mark(_ id: Int64) async throws -> Int64? {
            try await f.store.write { db in
                try MessagingRepository.markRead(chatID: f.mine, userID: 2, upTo: id, in: db)
                return try db.fetchOne("SELECT last_read_id FROM messaging_members WHERE chat_id = \(f.mine) AND user_id = 2")?.int64(at: 0)
            }
        }
        #expect(try await mark(first.id) == first.id)
        seen = try await view()
        #expect(seen.unreadCount == 1 && seen.mentionCount == 0)
        #expect(try await mark(0) == first.id, "never backwards")
        #expect(try await mark(second.id + 100) == second.id, "never past the newest")
        let listed = try await MessagingRepository(store: f.store).chats(of: 2)
        #expect(listed.map(\.0.id) == [f.mine] && listed.first?.1.unreadCount == 0)
        #expect(listed.first?.0.members.map(\.userID) == [1, 2] && listed.first?.0.members.first?.admin == true)
        let audience = try await MessagingRepository(store: f.store).pushAudience(f.mine)
        #expect(audience?.levels == [1: .mentions, 2: .mentions] && audience?.isGroup == true)
        await f.store.close()
    }
}
