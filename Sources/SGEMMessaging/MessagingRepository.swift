import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the messaging module's SQL: chats, members, messages, mentions, read markers, contacts
/// and the full-text index. Every function takes the connection of the caller's `store.read` /
/// `store.write`, so a change, its search rows and its realtime event share one transaction.
///
/// Portability seam: the search index is SQLite FTS5 (an external-content table over the
/// messages, kept in step by hand in the same transaction). A PostgreSQL backend would use a
/// `tsvector` column (`to_tsvector('simple', unaccent(body))`) with a GIN index, `websearch_to_tsquery`
/// and `ts_headline(..., 'StartSel=«, StopSel=»')` for the snippet; the functions below keep that
/// behind the same calls.
struct MessagingRepository: Sendable {
    static func registerMigrations(_ migrations: inout MigrationList) {
        // AUTOINCREMENT: a deleted chat's or message's id never comes back, so a cached id or an
        // event in the journal cannot point at a different one.
        migrations.add("messaging.001_chats", sql: """
            CREATE TABLE messaging_chats (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL CHECK (kind IN ('direct', 'group')),
                name TEXT,
                description TEXT NOT NULL DEFAULT '',
                tags TEXT NOT NULL DEFAULT '[]',
                public INTEGER NOT NULL DEFAULT 0 CHECK (public IN (0, 1)),
                creator_id INTEGER NOT NULL,
                pair_key TEXT UNIQUE,
                created_at INTEGER NOT NULL,
                last_activity_at INTEGER NOT NULL,
                CHECK ((kind = 'direct') = (pair_key IS NOT NULL))
            );
            CREATE INDEX messaging_chats_public ON messaging_chats (public, id);
            CREATE TABLE messaging_members (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                chat_id INTEGER NOT NULL REFERENCES messaging_chats (id) ON DELETE CASCADE,
                user_id INTEGER NOT NULL,
                admin INTEGER NOT NULL DEFAULT 0 CHECK (admin IN (0, 1)),
                joined_at INTEGER NOT NULL,
                last_read_id INTEGER NOT NULL DEFAULT 0,
                UNIQUE (chat_id, user_id)
            );
            CREATE INDEX messaging_members_user ON messaging_members (user_id, chat_id);
            CREATE TABLE messaging_messages (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                chat_id INTEGER NOT NULL REFERENCES messaging_chats (id) ON DELETE CASCADE,
                sender_id INTEGER NOT NULL,
                body TEXT,
                client_id TEXT,
                mentions TEXT NOT NULL DEFAULT '[]',
                created_at INTEGER NOT NULL,
                edited_at INTEGER,
                deleted INTEGER NOT NULL DEFAULT 0 CHECK (deleted IN (0, 1))
            );
            CREATE INDEX messaging_messages_chat ON messaging_messages (chat_id, id);
            CREATE UNIQUE INDEX messaging_messages_client ON messaging_messages (chat_id, sender_id, client_id)
                WHERE client_id IS NOT NULL;
            CREATE TABLE messaging_mentions (
                user_id INTEGER NOT NULL,
                chat_id INTEGER NOT NULL,
                message_id INTEGER NOT NULL REFERENCES messaging_messages (id) ON DELETE CASCADE,
                PRIMARY KEY (user_id, chat_id, message_id)
            ) WITHOUT ROWID;
            CREATE INDEX messaging_mentions_message ON messaging_mentions (message_id);
            CREATE TABLE messaging_contacts (
                owner_id INTEGER NOT NULL,
                contact_id INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (owner_id, contact_id)
            ) WITHOUT ROWID;
            CREATE VIRTUAL TABLE messaging_search USING fts5(
                body, content = 'messaging_messages', content_rowid = 'id',
                tokenize = 'unicode61 remove_diacritics 2'
            );
            """)
        // System lines (who came and went): `kind` 'system', no body, `system` the JSON of what
        // happened. They have no search row and no mentions, and are never counted as unread.
        migrations.add("messaging.002_system_messages", sql: """
            ALTER TABLE messaging_messages ADD COLUMN kind TEXT NOT NULL DEFAULT 'text' CHECK (kind IN ('text', 'system'));
            ALTER TABLE messaging_messages ADD COLUMN system TEXT;
            """)
        // NULL: the default for the chat's kind (all for direct chats, mentions for groups).
        migrations.add("messaging.003_notification_levels", sql: """
            ALTER TABLE messaging_members ADD COLUMN notifications TEXT CHECK (notifications IN ('all', 'mentions', 'none'));
            """)
    }

    // MARK: Chats and members

    /// The ids of the chats `userID` is a member of.
    static func chatIDs(of userID: Int64, in db: Database) throws -> Set<Int64> {
        Set(try db.query("SELECT chat_id FROM messaging_members WHERE user_id = ?", userID).compactMap { $0.int64("chat_id") })
    }

    private static let chatColumns = "c.id, c.kind, c.name, c.description, c.tags, c.public, c.creator_id, c.created_at"

    /// The chat with `id` and its members, longest-standing first; nil when there is none.
    static func chat(_ id: Int64, in db: Database) throws -> Chat? {
        guard let row = try db.queryOne("SELECT \(chatColumns) FROM messaging_chats c WHERE c.id = ?", id) else { return nil }
        return chat(row, members: try members(of: [id], in: db)[id] ?? [])
    }

    /// The chat with `id` when `userID` is one of its members; nil otherwise (none, or not theirs).
    static func chat(_ id: Int64, member userID: Int64, in db: Database) throws -> Chat? {
        guard try isMember(userID, of: id, in: db) else { return nil }
        return try chat(id, in: db)
    }

    static func isMember(_ userID: Int64, of chatID: Int64, in db: Database) throws -> Bool {
        try db.queryOne("SELECT 1 AS ok FROM messaging_members WHERE chat_id = ? AND user_id = ?", chatID, userID) != nil
    }

    /// The direct chat of a pair (`pairKey` is "lower:higher" user id); nil when there is none yet.
    static func directChatID(pairKey: String, in db: Database) throws -> Int64? {
        try db.queryOne("SELECT id FROM messaging_chats WHERE pair_key = ?", pairKey)?.int64("id")
    }

    /// Inserts a chat without members; returns its id, or nil when a direct chat of the pair exists.
    static func insertChat(kind: Chat.Kind, name: String?, description: String, tags: [String], isPublic: Bool,
                           creator: Int64, pairKey: String?, at time: Timestamp, in db: Database) throws -> Int64? {
        try db.queryOne("""
            INSERT INTO messaging_chats (kind, name, description, tags, public, creator_id, pair_key, created_at, last_activity_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (pair_key) DO NOTHING
            RETURNING id
            """, kind.rawValue, name, description, tagsText(tags), isPublic, creator, pairKey, time, time)?.int64("id")
    }

    /// Adds a member whose read marker starts at the chat's newest message (they are not shown
    /// the history as unread); false when they already were one.
    @discardableResult
    static func addMember(_ userID: Int64, to chatID: Int64, admin: Bool, at time: Timestamp, in db: Database) throws -> Bool {
        try db.execute("""
            INSERT INTO messaging_members (chat_id, user_id, admin, joined_at, last_read_id)
            VALUES (?1, ?2, ?3, ?4, COALESCE((SELECT MAX(id) FROM messaging_messages WHERE chat_id = ?1), 0))
            ON CONFLICT (chat_id, user_id) DO NOTHING
            """, chatID, userID, admin, time)
        return db.changes > 0
    }

    /// False when `userID` was not a member.
    static func removeMember(_ userID: Int64, from chatID: Int64, in db: Database) throws -> Bool {
        try db.execute("DELETE FROM messaging_members WHERE chat_id = ? AND user_id = ?", chatID, userID)
        guard db.changes > 0 else { return false }
        try db.execute("DELETE FROM messaging_mentions WHERE chat_id = ? AND user_id = ?", chatID, userID)
        return true
    }

    static func setAdmin(_ userID: Int64, of chatID: Int64, _ admin: Bool, in db: Database) throws {
        try db.execute("UPDATE messaging_members SET admin = ? WHERE chat_id = ? AND user_id = ?", admin, chatID, userID)
    }

    static func memberCount(of chatID: Int64, in db: Database) throws -> Int {
        try db.queryOne("SELECT COUNT(*) AS n FROM messaging_members WHERE chat_id = ?", chatID)?.int("n") ?? 0
    }

    /// The member who joined first, the one promoted when the last admin leaves.
    static func longestStandingMember(of chatID: Int64, in db: Database) throws -> Int64? {
        try db.queryOne("SELECT user_id FROM messaging_members WHERE chat_id = ? ORDER BY id LIMIT 1", chatID)?.int64("user_id")
    }

    /// Changes a group's settings (nil keeps one).
    static func updateChat(_ id: Int64, name: String?, description: String?, tags: [String]?, isPublic: Bool?, in db: Database) throws {
        try db.execute("""
            UPDATE messaging_chats SET name = COALESCE(?, name), description = COALESCE(?, description),
                tags = COALESCE(?, tags), public = COALESCE(?, public)
            WHERE id = ? AND kind = 'group'
            """, name, description, tags.map(tagsText), isPublic, id)
    }

    /// Deletes a chat with its members, messages, mentions and search rows.
    static func deleteChat(_ id: Int64, in db: Database) throws {
        try db.execute("""
            INSERT INTO messaging_search (messaging_search, rowid, body)
            SELECT 'delete', id, body FROM messaging_messages WHERE chat_id = ?
            """, id)
        try db.execute("DELETE FROM messaging_mentions WHERE chat_id = ?", id)
        try db.execute("DELETE FROM messaging_messages WHERE chat_id = ?", id)
        try db.execute("DELETE FROM messaging_members WHERE chat_id = ?", id)
        try db.execute("DELETE FROM messaging_chats WHERE id = ?", id)
    }

    /// `userID`'s chats with what they see of each, most recent activity first.
    static func chats(of userID: Int64, in db: Database) throws -> [(Chat, Chat.ReaderView)] {
        let rows = try db.query("""
            SELECT \(chatColumns), m.last_read_id, m.notifications FROM messaging_members m JOIN messaging_chats c ON c.id = m.chat_id
            WHERE m.user_id = ? ORDER BY c.last_activity_at DESC, c.id DESC
            """, userID)
        let members = try members(of: rows.compactMap { $0.int64("id") }, in: db)
        return try rows.compactMap { row -> (Chat, Chat.ReaderView)? in
            guard let id = row.int64("id"), let chat = chat(row, members: members[id] ?? []) else { return nil }
            return (chat, try view(of: id, reader: userID, lastRead: row.int64("last_read_id") ?? 0, level: row.string("notifications"), in: db))
        }
    }

    /// What `userID` sees of a chat they are a member of: its last message, unread and mentions.
    static func view(of chatID: Int64, reader userID: Int64, in db: Database) throws -> Chat.ReaderView {
        let row = try db.queryOne("SELECT last_read_id, notifications FROM messaging_members WHERE chat_id = ? AND user_id = ?",
                                  chatID, userID)
        return try view(of: chatID, reader: userID, lastRead: row?.int64("last_read_id") ?? 0, level: row?.string("notifications"), in: db)
    }

    private static func view(of chatID: Int64, reader userID: Int64, lastRead: Int64, level: String?,
                              in db: Database) throws -> Chat.ReaderView {
        let last = try db.queryOne("SELECT \(messageColumns) FROM messaging_messages WHERE chat_id = ? ORDER BY id DESC LIMIT 1",
                                   chatID).flatMap(message)
        let unread = try db.queryOne("""
            SELECT COUNT(*) AS n FROM messaging_messages WHERE chat_id = ? AND id > ? AND sender_id <> ? AND deleted = 0 AND kind = 'text'
            """, chatID, lastRead, userID)?.int("n") ?? 0
        let mentions = try db.queryOne("""
            SELECT COUNT(*) AS n FROM messaging_mentions WHERE user_id = ? AND chat_id = ? AND message_id > ?
            """, userID, chatID, lastRead)?.int("n") ?? 0
        return Chat.ReaderView(lastMessage: last, unreadCount: unread, mentionCount: mentions,
                               notifications: level.flatMap(NotificationLevel.init(rawValue:)))
    }

    /// Public groups, newest first, with ids below `before`; and whether `viewer` is in each.
    static func publicGroups(viewer: Int64, before: Int64?, limit: Int, in db: Database) throws -> [(Chat, Chat.ReaderView)] {
        let rows = try db.query("""
            SELECT \(chatColumns) FROM messaging_chats c WHERE c.public = 1 AND c.kind = 'group' AND c.id < ?
            ORDER BY c.id DESC LIMIT ?
            """, before ?? Int64.max, limit)
        let members = try members(of: rows.compactMap { $0.int64("id") }, in: db)
        return rows.compactMap { row in
            guard let id = row.int64("id"), let chat = chat(row, members: members[id] ?? []) else { return nil }
            return (chat, Chat.ReaderView(member: chat.isMember(viewer)))
        }
    }

    /// Stores a member's notification level for the chat.
    static func setNotifications(chatID: Int64, userID: Int64, level: String, in db: Database) throws {
        try db.execute("UPDATE messaging_members SET notifications = ? WHERE chat_id = ? AND user_id = ?", level, chatID, userID)
    }

    /// The chat's members at their levels (stored, or the kind's default); nil when no such chat.
    static func pushAudience(_ chatID: Int64, in db: Database) throws -> ChatPushAudience? {
        guard let row = try db.queryOne("SELECT kind, name FROM messaging_chats WHERE id = ?", chatID),
              let kind = row.string("kind").flatMap(Chat.Kind.init(rawValue:)) else { return nil }
        var levels: [Int64: NotificationLevel] = [:]
        for member in try db.query("SELECT user_id, notifications FROM messaging_members WHERE chat_id = ?", chatID) {
            guard let user = member.int64("user_id") else { continue }
            levels[user] = member.string("notifications").flatMap(NotificationLevel.init(rawValue:)) ?? Chat.defaultLevel(kind)
        }
        return ChatPushAudience(chatID: chatID, isGroup: kind == .group, name: row.string("name"), levels: levels)
    }

    /// Marks messages up to `messageID` read (never backwards, never past the newest message).
    static func markRead(chatID: Int64, userID: Int64, upTo messageID: Int64, in db: Database) throws {
        try db.execute("""
            UPDATE messaging_members SET last_read_id = MAX(last_read_id,
                MIN(?3, COALESCE((SELECT MAX(id) FROM messaging_messages WHERE chat_id = ?1), 0)))
            WHERE chat_id = ?1 AND user_id = ?2
            """, chatID, userID, messageID)
    }

    private static func members(of chatIDs: [Int64], in db: Database) throws -> [Int64: [Chat.Member]] {
        guard !chatIDs.isEmpty else { return [:] }
        var out: [Int64: [Chat.Member]] = [:]
        // Chunks keep the statement under SQLite's bound-parameter limit.
        for start in stride(from: 0, to: chatIDs.count, by: 500) {
            let chunk = Array(chatIDs[start..<min(start + 500, chatIDs.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try db.query("SELECT chat_id, user_id, admin FROM messaging_members WHERE chat_id IN (\(marks)) ORDER BY id",
                                    bindings: chunk) {
                guard let chat = row.int64("chat_id"), let user = row.int64("user_id") else { continue }
                out[chat, default: []].append(Chat.Member(userID: user, admin: row.bool("admin") ?? false))
            }
        }
        return out
    }

    private static func chat(_ row: Row, members: [Chat.Member]) -> Chat? {
        guard let id = row.int64("id"), let kind = row.string("kind").flatMap(Chat.Kind.init(rawValue:)),
              let creator = row.int64("creator_id"), let createdAt = row.timestamp("created_at") else { return nil }
        return Chat(id: id, kind: kind, name: row.string("name"), description: row.string("description") ?? "",
                    tags: parseIDsOrTags(row.string("tags")).compactMap(\.stringValue), isPublic: row.bool("public") ?? false,
                    creatorID: creator, createdAt: createdAt, members: members)
    }

    // MARK: Messages

    private static let messageColumns = "id, chat_id, sender_id, body, mentions, client_id, created_at, edited_at, deleted, kind, system"

    /// Inserts a message with its mention rows and search row, marks it read for its sender and
    /// moves the chat up the lists. Nil, storing nothing, when the sender is not a member or
    /// already sent `clientID` in the chat: the common case is one statement, the checks included.
    static func insertMessage(chatID: Int64, senderID: Int64, body: String, clientID: String?, mentions: [Int64],
                              at time: Timestamp, in db: Database) throws -> Message? {
        guard let id = try db.queryOne("""
            INSERT INTO messaging_messages (chat_id, sender_id, body, client_id, mentions, created_at)
            SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = ?1 AND user_id = ?2)
            ON CONFLICT DO NOTHING
            RETURNING id
            """, chatID, senderID, body, clientID, idsText(mentions), time)?.int64("id") else { return nil }
        try db.execute("INSERT INTO messaging_search (rowid, body) VALUES (?, ?)", id, body)
        try insertMentions(mentions, messageID: id, chatID: chatID, senderID: senderID, in: db)
        try db.execute("UPDATE messaging_chats SET last_activity_at = ? WHERE id = ?", time, chatID)
        try db.execute("UPDATE messaging_members SET last_read_id = ? WHERE chat_id = ? AND user_id = ?", id, chatID, senderID)
        return Message(id: id, chatID: chatID, senderID: senderID, body: body, mentions: mentions, clientID: clientID,
                       createdAt: time, editedAt: nil, deleted: false)
    }

    /// Writes a system line (no body, no mentions, an empty search row) and moves the chat up the
    /// lists; read markers stay where they are, since a system line is never unread.
    static func insertSystemMessage(chatID: Int64, line: SystemLine, at time: Timestamp, in db: Database) throws -> Message {
        let text = line.json.serialized()
        guard let id = try db.queryOne("""
            INSERT INTO messaging_messages (chat_id, sender_id, body, mentions, created_at, kind, system)
            VALUES (?, ?, NULL, '[]', ?, 'system', ?)
            RETURNING id
            """, chatID, line.actorID, time, text)?.int64("id") else {
            throw StoreError(code: .system, message: "inserting a system line returned no id")
        }
        // An external-content index holds a row for every message; a system line's is empty.
        try db.execute("INSERT INTO messaging_search (rowid, body) VALUES (?, NULL)", id)
        try db.execute("UPDATE messaging_chats SET last_activity_at = ? WHERE id = ?", time, chatID)
        return Message(id: id, chatID: chatID, senderID: line.actorID, body: nil, mentions: [], clientID: nil,
                       createdAt: time, editedAt: nil, deleted: false, kind: .system, system: line)
    }

    /// The sender's earlier message with the same `clientID` in the chat, if any.
    static func message(chatID: Int64, senderID: Int64, clientID: String, in db: Database) throws -> Message? {
        try db.queryOne("SELECT \(messageColumns) FROM messaging_messages WHERE chat_id = ? AND sender_id = ? AND client_id = ?",
                        chatID, senderID, clientID).flatMap(message)
    }

    static func message(_ id: Int64, in db: Database) throws -> Message? {
        try db.queryOne("SELECT \(messageColumns) FROM messaging_messages WHERE id = ?", id).flatMap(message)
    }

    /// Messages of a chat `reader` is a member of, in ascending id order: after `after` (the
    /// oldest first) when given, else the newest `limit` below `before` (or the newest of all).
    /// Nil when `reader` is not a member; membership is in the same statement, so a page costs
    /// one query (a second one only to tell an empty page from a chat that is not theirs).
    static func messages(chatID: Int64, reader: Int64, after: Int64?, before: Int64?, limit: Int, in db: Database) throws -> [Message]? {
        let member = "EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = ?1 AND user_id = ?2)"
        let page: [Message]
        if let after {
            page = try db.query("""
                SELECT \(messageColumns) FROM messaging_messages WHERE chat_id = ?1 AND \(member) AND id > ?3 AND id < ?4
                ORDER BY id LIMIT ?5
                """, chatID, reader, after, before ?? Int64.max, limit).compactMap(message)
        } else {
            page = try db.query("""
                SELECT \(messageColumns) FROM messaging_messages WHERE chat_id = ?1 AND \(member) AND id > ?3 AND id < ?4
                ORDER BY id DESC LIMIT ?5
                """, chatID, reader, Int64(0), before ?? Int64.max, limit).compactMap(message).reversed()
        }
        if page.isEmpty, try !isMember(reader, of: chatID, in: db) { return nil }
        return page
    }

    /// Replaces a message's body and mentions, and its search row.
    static func editMessage(_ old: Message, body: String, mentions: [Int64], at time: Timestamp, in db: Database) throws {
        if let oldBody = old.body {
            try db.execute("INSERT INTO messaging_search (messaging_search, rowid, body) VALUES ('delete', ?, ?)", old.id, oldBody)
        }
        try db.execute("UPDATE messaging_messages SET body = ?, mentions = ?, edited_at = ? WHERE id = ?",
                       body, idsText(mentions), time, old.id)
        try db.execute("INSERT INTO messaging_search (rowid, body) VALUES (?, ?)", old.id, body)
        try db.execute("DELETE FROM messaging_mentions WHERE message_id = ?", old.id)
        try insertMentions(mentions, messageID: old.id, chatID: old.chatID, senderID: old.senderID, in: db)
    }

    /// Deletes a message softly: the row stays with `deleted = 1`; its body and mentions go, and
    /// its search row is emptied.
    static func deleteMessage(_ old: Message, in db: Database) throws {
        if let oldBody = old.body {
            try db.execute("INSERT INTO messaging_search (messaging_search, rowid, body) VALUES ('delete', ?, ?)", old.id, oldBody)
        }
        try db.execute("UPDATE messaging_messages SET body = NULL, mentions = '[]', deleted = 1 WHERE id = ?", old.id)
        // An external-content index holds a row for every message; the deleted one's is empty.
        try db.execute("INSERT INTO messaging_search (rowid, body) VALUES (?, NULL)", old.id)
        try db.execute("DELETE FROM messaging_mentions WHERE message_id = ?", old.id)
    }

    /// Only the members among `userIDs` (the sender aside) are counted as mentioned.
    private static func insertMentions(_ userIDs: [Int64], messageID: Int64, chatID: Int64, senderID: Int64, in db: Database) throws {
        for user in userIDs where user != senderID {
            try db.execute("""
                INSERT INTO messaging_mentions (user_id, chat_id, message_id)
                SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = ?2 AND user_id = ?1)
                ON CONFLICT DO NOTHING
                """, user, chatID, messageID)
        }
    }

    /// A message from a row whose first columns are `messageColumns`, in that order (by
    /// position: a page decodes 50 rows, and a lookup by name compares column names each time).
    private static func message(_ row: Row) -> Message? {
        guard case let .integer(id) = row[0], case let .integer(chat) = row[1], case let .integer(sender) = row[2],
              case let .integer(created) = row[6] else { return nil }
        var deleted = false
        if case let .integer(flag) = row[8] { deleted = flag != 0 }
        var body: String?
        if !deleted, case let .text(text) = row[3] { body = text }
        var mentions: [Int64] = []
        if case let .text(text) = row[4] { mentions = parseIDs(text) }
        var clientID: String?
        if case let .text(text) = row[5] { clientID = text }
        var editedAt: Timestamp?
        if case let .integer(ms) = row[7] { editedAt = Timestamp(milliseconds: ms) }
        var kind = Message.Kind.text
        var system: SystemLine?
        if case let .text(k) = row[9], k == "system" {
            kind = .system
            if case let .text(text) = row[10] { system = SystemLine.parse(text) }
        }
        return Message(id: id, chatID: chat, senderID: sender, body: body, mentions: mentions, clientID: clientID,
                       createdAt: Timestamp(milliseconds: created), editedAt: editedAt, deleted: deleted, kind: kind, system: system)
    }

    // MARK: Search

    /// One search hit: the message and its snippet, the match between « and ».
    struct Hit: Sendable {
        let message: Message
        let snippet: String
    }

    /// Messages matching `query` (an FTS5 expression built by `ftsQuery`) in `userID`'s chats
    /// (one of them when `chatID` is given), newest first, ids below `before`.
    static func search(_ query: String, userID: Int64, chatID: Int64?, before: Int64?, limit: Int, in db: Database) throws -> [Hit] {
        let rows = try db.query("""
            SELECT m.id, m.chat_id, m.sender_id, m.body, m.mentions, m.client_id, m.created_at, m.edited_at, m.deleted,
                   m.kind, m.system, snippet(messaging_search, 0, '«', '»', '…', 16) AS snippet
            FROM messaging_search JOIN messaging_messages m ON m.id = messaging_search.rowid
            WHERE messaging_search MATCH ?1 AND messaging_search.rowid < ?2
              AND m.deleted = 0 AND m.kind = 'text'
              AND m.chat_id IN (SELECT chat_id FROM messaging_members WHERE user_id = ?3)
              AND (?4 IS NULL OR m.chat_id = ?4)
            ORDER BY messaging_search.rowid DESC LIMIT ?5
            """, query, before ?? Int64.max, userID, chatID, limit)
        return rows.compactMap { row in
            guard let message = message(row) else { return nil }
            return Hit(message: message, snippet: row.string("snippet") ?? "")
        }
    }

    /// The FTS5 expressions for what a person typed: every word must appear, each quoted so
    /// FTS5 operators typed by people are plain words. `words` matches whole words; `prefixed`,
    /// when the text ends inside a word (it may be half-typed), lets that last word be the start
    /// of one. Nil when the text holds no word.
    static func ftsQuery(_ text: String) -> (words: String, prefixed: String?)? {
        var words: [String] = []
        var current = ""
        for ch in text {
            if ch.isLetter || ch.isNumber || ch == "_" { current.append(ch) } else if !current.isEmpty {
                words.append(current); current = ""
            }
        }
        if !current.isEmpty { words.append(current) }
        guard !words.isEmpty else { return nil }
        let quoted = words.prefix(16).map { "\"\($0)\"" }.joined(separator: " ")
        let endsInWord = text.last.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false
        return (quoted, endsInWord ? quoted + "*" : nil)
    }

    /// Search for what a person typed: whole words when some message of the reader's holds them
    /// all, else with the last word as a word's start. FTS5 reads a prefix's matches in full
    /// before ordering them (tens of milliseconds for a common one over a million messages) but
    /// walks a whole word's lazily, newest first, stopping at `limit`; the choice does not depend
    /// on `before`, so every page of one search uses the same one.
    static func search(text: String, userID: Int64, chatID: Int64?, before: Int64?, limit: Int, in db: Database) throws -> [Hit] {
        guard let query = ftsQuery(text) else { return [] }
        if let prefixed = query.prefixed,
           try search(query.words, userID: userID, chatID: chatID, before: nil, limit: 1, in: db).isEmpty {
            return try search(prefixed, userID: userID, chatID: chatID, before: before, limit: limit, in: db)
        }
        return try search(query.words, userID: userID, chatID: chatID, before: before, limit: limit, in: db)
    }

    // MARK: Contacts

    static func contacts(of ownerID: Int64, in db: Database) throws -> [(Int64, Timestamp)] {
        try db.query("SELECT contact_id, created_at FROM messaging_contacts WHERE owner_id = ? ORDER BY created_at, contact_id",
                     ownerID).compactMap { row in
            guard let id = row.int64("contact_id"), let at = row.timestamp("created_at") else { return nil }
            return (id, at)
        }
    }

    static func contactCount(of ownerID: Int64, in db: Database) throws -> Int {
        try db.queryOne("SELECT COUNT(*) AS n FROM messaging_contacts WHERE owner_id = ?", ownerID)?.int("n") ?? 0
    }

    static func addContact(_ contactID: Int64, to ownerID: Int64, at time: Timestamp, in db: Database) throws {
        try db.execute("""
            INSERT INTO messaging_contacts (owner_id, contact_id, created_at) VALUES (?, ?, ?)
            ON CONFLICT (owner_id, contact_id) DO NOTHING
            """, ownerID, contactID, time)
    }

    static func removeContact(_ contactID: Int64, from ownerID: Int64, in db: Database) throws {
        try db.execute("DELETE FROM messaging_contacts WHERE owner_id = ? AND contact_id = ?", ownerID, contactID)
    }

    // MARK: Encoding of list columns

    private static func tagsText(_ tags: [String]) -> String { JSONValue.array(tags.map(JSONValue.string)).serialized() }
    private static func idsText(_ ids: [Int64]) -> String { JSONValue.array(ids.map { .number(Double($0)) }).serialized() }
    /// A list of ids as `idsText` wrote it; most messages mention nobody, so "[]" is not parsed.
    private static func parseIDs(_ text: String?) -> [Int64] {
        guard let text, text != "[]" else { return [] }
        return text.utf8.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") })
            .compactMap { Int64(String(decoding: $0, as: UTF8.self).trimmingWhitespace()) }
    }

    private static func parseIDsOrTags(_ text: String?) -> [JSONValue] {
        guard let text, let value = try? JSONValue.parse(Array(text.utf8)) else { return [] }
        return value.arrayValue ?? []
    }
}
