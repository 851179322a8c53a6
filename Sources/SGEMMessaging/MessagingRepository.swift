import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the messaging module's SQL: chats, members, messages, mentions, read markers, contacts
/// and the full-text index, on SQLite and PostgreSQL. The static functions take the connection of
/// the caller's `store.read` / `store.write`, so a change, its search rows and its realtime event
/// share one transaction; the instance functions are the reads that stand alone.
///
/// What differs between the backends is switched on `db.dialect` here and nowhere else: search,
/// and markRead's two-argument MAX/MIN (GREATEST/LEAST). SQLite keeps an FTS5 external-content
/// table in step by hand in the same transaction; PostgreSQL derives a generated `tsvector`
/// column from the body (see the migrations), so edits and deletions are reflected by the same
/// statement that makes them.
struct MessagingRepository: Sendable {
    let store: Store

    // MARK: Reads on their own

    /// `userID`'s chats with what they see of each, most recent activity first.
    func chats(of userID: Int64) async throws -> [(Chat, Chat.ReaderView)] {
        try await store.read { db in try Self.chats(of: userID, in: db) }
    }

    /// The chat with `id` and what `userID` sees of it, when they are a member; nil otherwise.
    func chat(_ id: Int64, viewer userID: Int64) async throws -> (Chat, Chat.ReaderView)? {
        try await store.read { db -> (Chat, Chat.ReaderView)? in
            guard let chat = try Self.chat(id, member: userID, in: db) else { return nil }
            return (chat, try Self.view(of: id, reader: userID, in: db))
        }
    }

    /// Public groups, newest first, with ids below `before`; and whether `viewer` is in each.
    func publicGroups(viewer: Int64, before: Int64?, limit: Int) async throws -> [(Chat, Chat.ReaderView)] {
        try await store.read { db in try Self.publicGroups(viewer: viewer, before: before, limit: limit, in: db) }
    }

    /// A page of a chat's messages for `reader`; nil when they are not a member.
    func messages(chatID: Int64, reader: Int64, after: Int64?, before: Int64?, limit: Int) async throws -> [Message]? {
        // One statement (a second only to tell an empty page from a chat that is not theirs): no snapshot needed.
        try await store.readAtOnce { db in try Self.messages(chatID: chatID, reader: reader, after: after, before: before, limit: limit, in: db) }
    }

    /// The chat a message is in; nil when there is no such message.
    func chatID(ofMessage id: Int64) async throws -> Int64? {
        try await store.read { db in try Self.message(id, in: db)?.chatID }
    }

    /// Search for what a person typed, in `userID`'s chats.
    func search(text: String, userID: Int64, chatID: Int64?, before: Int64?, limit: Int) async throws -> [Hit] {
        try await store.read { db in try Self.search(text: text, userID: userID, chatID: chatID, before: before, limit: limit, in: db) }
    }

    func contacts(of ownerID: Int64) async throws -> [(Int64, Timestamp)] {
        try await store.read { db in try Self.contacts(of: ownerID, in: db) }
    }

    func pushAudience(_ chatID: Int64) async throws -> ChatPushAudience? {
        try await store.read { db in try Self.pushAudience(chatID, in: db) }
    }

    func chatIDs(of userID: Int64) async throws -> Set<Int64> {
        try await store.read { db in try Self.chatIDs(of: userID, in: db) }
    }

    func message(_ id: Int64) async throws -> Message? {
        try await store.read { db in try Self.message(id, in: db) }
    }

    /// The message when `reader` is a member of its chat; nil otherwise.
    func message(_ id: Int64, readableBy reader: Int64) async throws -> Message? {
        try await store.read { db -> Message? in
            guard let message = try Self.message(id, in: db), try Self.isMember(reader, of: message.chatID, in: db) else { return nil }
            return message
        }
    }

    func isMember(_ userID: Int64, of chatID: Int64) async throws -> Bool {
        try await store.read { db in try Self.isMember(userID, of: chatID, in: db) }
    }

    /// The chat's member ids, longest-standing first (none when there is no such chat).
    func memberIDs(of chatID: Int64) async throws -> [Int64] {
        try await store.read { db in try Self.chat(chatID, in: db)?.memberIDs ?? [] }
    }

    // MARK: Rows

    /// A chat's own columns (`chatColumns`), members aside.
    private struct ChatRow: RowDecodable {
        let id: Int64
        let kind: Chat.Kind
        let name: String?
        let description: String
        let tags: String?
        let isPublic: Bool
        let creatorID: Int64
        let createdAt: Timestamp

        init(row: Row) throws {
            id = try row.required("id", Row.int64)
            guard let kind = Chat.Kind(rawValue: try row.required("kind", Row.string)) else {
                throw StoreError(code: .decoding, message: "column kind holds an unknown chat kind")
            }
            self.kind = kind
            name = row.string("name")
            description = row.string("description") ?? ""
            tags = row.string("tags")
            isPublic = row.bool("public") ?? false
            creatorID = try row.required("creator_id", Row.int64)
            createdAt = try row.required("created_at", Row.timestamp)
        }

        func chat(members: [Chat.Member]) -> Chat {
            Chat(id: id, kind: kind, name: name, description: description,
                 tags: parseIDsOrTags(tags).compactMap(\.stringValue), isPublic: isPublic,
                 creatorID: creatorID, createdAt: createdAt, members: members)
        }
    }

    /// A chat in a member's list: its columns and the member's read marker and level.
    private struct ListedChatRow: RowDecodable {
        let chat: ChatRow
        let reader: ReaderRow

        init(row: Row) throws {
            chat = try ChatRow(row: row)
            reader = try ReaderRow(row: row)
        }
    }

    /// A member's read marker and notification level.
    private struct ReaderRow: RowDecodable {
        let lastReadID: Int64
        let notifications: String?

        init(lastReadID: Int64, notifications: String?) {
            self.lastReadID = lastReadID
            self.notifications = notifications
        }

        init(row: Row) throws {
            lastReadID = row.int64("last_read_id") ?? 0
            notifications = row.string("notifications")
        }
    }

    private struct MemberRow: RowDecodable {
        let chatID: Int64
        let member: Chat.Member
        let notifications: String?

        init(row: Row) throws {
            chatID = try row.required("chat_id", Row.int64)
            member = Chat.Member(userID: try row.required("user_id", Row.int64), admin: row.bool("admin") ?? false)
            notifications = row.string("notifications")
        }
    }

    private struct ContactRow: RowDecodable {
        let contactID: Int64
        let createdAt: Timestamp

        init(row: Row) throws {
            contactID = try row.required("contact_id", Row.int64)
            createdAt = try row.required("created_at", Row.timestamp)
        }
    }

    /// A count, `COUNT(*) AS n`.
    private static func count(_ sql: SQL, in db: Database) throws -> Int {
        Int(try int64(sql, in: db) ?? 0)
    }

    /// The first column of the first row as an integer: an id, from `RETURNING` too.
    private static func int64(_ sql: SQL, in db: Database) throws -> Int64? {
        try db.fetchOne(sql)?.int64(at: 0)
    }

    // MARK: Chats and members

    /// The ids of the chats `userID` is a member of.
    static func chatIDs(of userID: Int64, in db: Database) throws -> Set<Int64> {
        Set(try db.fetchAll("SELECT chat_id FROM messaging_members WHERE user_id = \(userID)").compactMap { $0.int64("chat_id") })
    }

    private static let chatColumns: SQL = "c.id, c.kind, c.name, c.description, c.tags, c.public, c.creator_id, c.created_at"

    /// The chat with `id` and its members, longest-standing first; nil when there is none.
    static func chat(_ id: Int64, in db: Database) throws -> Chat? {
        guard let row = try db.fetchOne(ChatRow.self, "SELECT \(chatColumns) FROM messaging_chats c WHERE c.id = \(id)") else { return nil }
        return row.chat(members: try members(of: [id], in: db)[id] ?? [])
    }

    /// The chat with `id` when `userID` is one of its members; nil otherwise (none, or not theirs).
    static func chat(_ id: Int64, member userID: Int64, in db: Database) throws -> Chat? {
        guard try isMember(userID, of: id, in: db) else { return nil }
        return try chat(id, in: db)
    }

    static func isMember(_ userID: Int64, of chatID: Int64, in db: Database) throws -> Bool {
        try db.fetchOne("SELECT 1 AS ok FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(userID)") != nil
    }

    /// The direct chat of a pair (`pairKey` is "lower:higher" user id); nil when there is none yet.
    static func directChatID(pairKey: String, in db: Database) throws -> Int64? {
        try int64("SELECT id FROM messaging_chats WHERE pair_key = \(pairKey)", in: db)
    }

    /// Inserts a chat without members; returns its id, or nil when a direct chat of the pair exists.
    static func insertChat(kind: Chat.Kind, name: String?, description: String, tags: [String], isPublic: Bool,
                           creator: Int64, pairKey: String?, at time: Timestamp, in db: Database) throws -> Int64? {
        try int64("""
            INSERT INTO messaging_chats (kind, name, description, tags, public, creator_id, pair_key, created_at, last_activity_at)
            VALUES (\(kind.rawValue), \(name), \(description), \(tagsText(tags)), \(isPublic), \(creator), \(pairKey), \(time), \(time))
            ON CONFLICT (pair_key) DO NOTHING
            RETURNING id
            """, in: db)
    }

    /// Adds a member whose read marker starts at the chat's newest message (they are not shown
    /// the history as unread); false when they already were one.
    @discardableResult
    static func addMember(_ userID: Int64, to chatID: Int64, admin: Bool, at time: Timestamp, in db: Database) throws -> Bool {
        try db.run("""
            INSERT INTO messaging_members (chat_id, user_id, admin, joined_at, last_read_id)
            VALUES (\(chatID), \(userID), \(admin), \(time),
                    COALESCE((SELECT MAX(id) FROM messaging_messages WHERE chat_id = \(chatID)), 0))
            ON CONFLICT (chat_id, user_id) DO NOTHING
            """)
        return try db.changes > 0
    }

    /// False when `userID` was not a member.
    static func removeMember(_ userID: Int64, from chatID: Int64, in db: Database) throws -> Bool {
        try db.run("DELETE FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(userID)")
        guard try db.changes > 0 else { return false }
        try db.run("DELETE FROM messaging_mentions WHERE chat_id = \(chatID) AND user_id = \(userID)")
        return true
    }

    static func setAdmin(_ userID: Int64, of chatID: Int64, _ admin: Bool, in db: Database) throws {
        try db.run("UPDATE messaging_members SET admin = \(admin) WHERE chat_id = \(chatID) AND user_id = \(userID)")
    }

    static func memberCount(of chatID: Int64, in db: Database) throws -> Int {
        try count("SELECT COUNT(*) AS n FROM messaging_members WHERE chat_id = \(chatID)", in: db)
    }

    /// The member who joined first, the one promoted when the last admin leaves.
    static func longestStandingMember(of chatID: Int64, in db: Database) throws -> Int64? {
        try int64("SELECT user_id FROM messaging_members WHERE chat_id = \(chatID) ORDER BY id LIMIT 1", in: db)
    }

    /// Changes a group's settings (nil keeps one).
    static func updateChat(_ id: Int64, name: String?, description: String?, tags: [String]?, isPublic: Bool?, in db: Database) throws {
        try db.run("""
            UPDATE messaging_chats SET name = COALESCE(\(name), name), description = COALESCE(\(description), description),
                tags = COALESCE(\(tags.map(tagsText)), tags), public = COALESCE(\(isPublic), public)
            WHERE id = \(id) AND kind = 'group'
            """)
    }

    /// Deletes a chat with its members, messages, mentions and search rows.
    static func deleteChat(_ id: Int64, in db: Database) throws {
        if db.dialect == .sqlite {
            try db.run("""
                INSERT INTO messaging_search (messaging_search, rowid, body)
                SELECT 'delete', id, body FROM messaging_messages WHERE chat_id = \(id)
                """)
        }
        try db.run("DELETE FROM messaging_mentions WHERE chat_id = \(id)")
        try db.run("DELETE FROM messaging_messages WHERE chat_id = \(id)")
        try db.run("DELETE FROM messaging_members WHERE chat_id = \(id)")
        try db.run("DELETE FROM messaging_chats WHERE id = \(id)")
    }

    /// `userID`'s chats with what they see of each, most recent activity first.
    static func chats(of userID: Int64, in db: Database) throws -> [(Chat, Chat.ReaderView)] {
        let rows = try db.fetchAll(ListedChatRow.self, """
            SELECT \(chatColumns), m.last_read_id, m.notifications FROM messaging_members m JOIN messaging_chats c ON c.id = m.chat_id
            WHERE m.user_id = \(userID) ORDER BY c.last_activity_at DESC, c.id DESC
            """)
        let members = try members(of: rows.map(\.chat.id), in: db)
        return try rows.map { row in
            (row.chat.chat(members: members[row.chat.id] ?? []), try view(of: row.chat.id, reader: userID, row.reader, in: db))
        }
    }

    /// What `userID` sees of a chat they are a member of: its last message, unread and mentions.
    static func view(of chatID: Int64, reader userID: Int64, in db: Database) throws -> Chat.ReaderView {
        let reader = try db.fetchOne(ReaderRow.self, """
            SELECT last_read_id, notifications FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(userID)
            """)
        return try view(of: chatID, reader: userID, reader ?? ReaderRow(lastReadID: 0, notifications: nil), in: db)
    }

    private static func view(of chatID: Int64, reader userID: Int64, _ reader: ReaderRow, in db: Database) throws -> Chat.ReaderView {
        let last = try db.fetchOne(Message.self, "SELECT \(messageColumns) FROM messaging_messages WHERE chat_id = \(chatID) ORDER BY id DESC LIMIT 1")
        let unread = try count("""
            SELECT COUNT(*) AS n FROM messaging_messages
            WHERE chat_id = \(chatID) AND id > \(reader.lastReadID) AND sender_id <> \(userID) AND deleted = 0 AND kind = 'text'
            """, in: db)
        let mentions = try count("""
            SELECT COUNT(*) AS n FROM messaging_mentions WHERE user_id = \(userID) AND chat_id = \(chatID) AND message_id > \(reader.lastReadID)
            """, in: db)
        return Chat.ReaderView(lastMessage: last, unreadCount: unread, mentionCount: mentions,
                               notifications: reader.notifications.flatMap(NotificationLevel.init(rawValue:)))
    }

    /// Public groups, newest first, with ids below `before`; and whether `viewer` is in each.
    static func publicGroups(viewer: Int64, before: Int64?, limit: Int, in db: Database) throws -> [(Chat, Chat.ReaderView)] {
        let rows = try db.fetchAll(ChatRow.self, """
            SELECT \(chatColumns) FROM messaging_chats c WHERE c.public = 1 AND c.kind = 'group' AND c.id < \(before ?? Int64.max)
            ORDER BY c.id DESC LIMIT \(limit)
            """)
        let members = try members(of: rows.map(\.id), in: db)
        return rows.map { row in
            let chat = row.chat(members: members[row.id] ?? [])
            return (chat, Chat.ReaderView(member: chat.isMember(viewer)))
        }
    }

    /// Stores a member's notification level for the chat.
    static func setNotifications(chatID: Int64, userID: Int64, level: String, in db: Database) throws {
        try db.run("UPDATE messaging_members SET notifications = \(level) WHERE chat_id = \(chatID) AND user_id = \(userID)")
    }

    /// The chat's members at their levels (stored, or the kind's default); nil when no such chat.
    static func pushAudience(_ chatID: Int64, in db: Database) throws -> ChatPushAudience? {
        guard let row = try db.fetchOne("SELECT kind, name FROM messaging_chats WHERE id = \(chatID)"),
              let kind = row.string("kind").flatMap(Chat.Kind.init(rawValue:)) else { return nil }
        var levels: [Int64: NotificationLevel] = [:]
        for member in try db.fetchAll(MemberRow.self, """
            SELECT chat_id, user_id, admin, notifications FROM messaging_members WHERE chat_id = \(chatID)
            """) {
            levels[member.member.userID] = member.notifications.flatMap(NotificationLevel.init(rawValue:)) ?? Chat.defaultLevel(kind)
        }
        return ChatPushAudience(chatID: chatID, isGroup: kind == .group, name: row.string("name"), levels: levels)
    }

    /// Marks messages up to `messageID` read (never backwards, never past the newest message).
    static func markRead(chatID: Int64, userID: Int64, upTo messageID: Int64, in db: Database) throws {
        // The scalar two-argument MAX/MIN of SQLite are GREATEST/LEAST on PostgreSQL.
        let (greatest, least): (SQL, SQL) = db.dialect == .postgresql ? ("GREATEST", "LEAST") : ("MAX", "MIN")
        try db.run("""
            UPDATE messaging_members SET last_read_id = \(greatest)(last_read_id,
                \(least)(\(messageID), COALESCE((SELECT MAX(id) FROM messaging_messages WHERE chat_id = \(chatID)), 0)))
            WHERE chat_id = \(chatID) AND user_id = \(userID)
            """)
    }

    /// The members of each of `chatIDs`, longest-standing first.
    private static func members(of chatIDs: [Int64], in db: Database) throws -> [Int64: [Chat.Member]] {
        var out: [Int64: [Chat.Member]] = [:]
        // Chunks keep statements small whatever the number of chats.
        for start in stride(from: 0, to: chatIDs.count, by: 500) {
            let chunk = Array(chatIDs[start..<min(start + 500, chatIDs.count)])
            for row in try db.fetchAll(MemberRow.self, """
                SELECT chat_id, user_id, admin, notifications FROM messaging_members WHERE chat_id IN \(list: chunk) ORDER BY id
                """) {
                out[row.chatID, default: []].append(row.member)
            }
        }
        return out
    }

    // MARK: Messages

    private static let messageColumns: SQL = "id, chat_id, sender_id, body, mentions, client_id, created_at, edited_at, deleted, kind, system"

    /// Inserts a message with its mention rows and search row, marks it read for its sender and
    /// moves the chat up the lists. Nil, storing nothing, when the sender is not a member or
    /// already sent `clientID` in the chat: the common case is one statement, the checks included.
    static func insertMessage(chatID: Int64, senderID: Int64, body: String, clientID: String?, mentions: [Int64],
                              at time: Timestamp, in db: Database) throws -> Message? {
        // The casts type the selected bindings for PostgreSQL (it cannot infer them in a SELECT list).
        guard let id = try int64("""
            INSERT INTO messaging_messages (chat_id, sender_id, body, client_id, mentions, created_at)
            SELECT CAST(\(chatID) AS BIGINT), CAST(\(senderID) AS BIGINT), CAST(\(body) AS TEXT), CAST(\(clientID) AS TEXT),
                   CAST(\(idsText(mentions)) AS TEXT), CAST(\(time) AS BIGINT)
            WHERE EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(senderID))
            ON CONFLICT DO NOTHING
            RETURNING id
            """, in: db) else { return nil }
        if db.dialect == .sqlite {
            try db.run("INSERT INTO messaging_search (rowid, body) VALUES (\(id), \(body))")
        }
        try insertMentions(mentions, messageID: id, chatID: chatID, senderID: senderID, in: db)
        try touch(chatID: chatID, messageID: id, in: db)
        try markSent(chatID: chatID, senderID: senderID, messageID: id, in: db)
        return Message(id: id, chatID: chatID, senderID: senderID, body: body, mentions: mentions, clientID: clientID,
                       createdAt: time, editedAt: nil, deleted: false)
    }

    /// A message sent ahead (`insertMessageAhead`): what it is once stored, and whether it was.
    struct SentAhead: Sendable {
        let message: Message
        /// 1 once the batch has run if the message was stored; 0 if the sender was not a member
        /// or it repeated an earlier `clientID` (then nothing that refers to it was stored either).
        let stored: RowCount
    }

    /// `insertMessage` without waiting for any answer, where the store can reserve the row's id
    /// (PostgreSQL): every statement is sent ahead in the batch's pipeline, and what refers to the
    /// message (its mentions, the chat's activity, the sender's marker; the caller's event) is
    /// stored only if the message is. Nil where ids cannot be reserved: use `insertMessage`.
    static func insertMessageAhead(chatID: Int64, senderID: Int64, body: String, clientID: String?, mentions: [Int64],
                                   at time: Timestamp, in db: Database) throws -> SentAhead? {
        guard let id = try db.reserveID(in: "messaging_messages") else { return nil }
        let stored = try db.runCounting("""
            INSERT INTO messaging_messages (id, chat_id, sender_id, body, client_id, mentions, created_at)
            SELECT CAST(\(id) AS BIGINT), CAST(\(chatID) AS BIGINT), CAST(\(senderID) AS BIGINT), CAST(\(body) AS TEXT),
                   CAST(\(clientID) AS TEXT), CAST(\(idsText(mentions)) AS TEXT), CAST(\(time) AS BIGINT)
            WHERE EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(senderID))
            ON CONFLICT DO NOTHING
            """)
        let isStored = messageExists(id)
        for user in mentions where user != senderID {
            try db.run("""
                INSERT INTO messaging_mentions (user_id, chat_id, message_id)
                SELECT CAST(\(user) AS BIGINT), CAST(\(chatID) AS BIGINT), CAST(\(id) AS BIGINT)
                WHERE \(isStored) AND EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(user))
                ON CONFLICT DO NOTHING
                """)
        }
        try touch(chatID: chatID, messageID: id, in: db)
        try markSent(chatID: chatID, senderID: senderID, messageID: id, in: db)
        let message = Message(id: id, chatID: chatID, senderID: senderID, body: body, mentions: mentions, clientID: clientID,
                              createdAt: time, editedAt: nil, deleted: false)
        return SentAhead(message: message, stored: stored)
    }

    /// True, in SQL, when message `id` is stored: the condition of what refers to a message sent ahead.
    static func messageExists(_ id: Int64) -> SQL {
        "EXISTS (SELECT 1 FROM messaging_messages WHERE id = \(id))"
    }

    /// Writes a system line (no body, no mentions, an empty search row) and moves the chat up the
    /// lists; read markers stay where they are, since a system line is never unread.
    static func insertSystemMessage(chatID: Int64, line: SystemLine, at time: Timestamp, in db: Database) throws -> Message {
        let text = line.json.serialized()
        guard let id = try int64("""
            INSERT INTO messaging_messages (chat_id, sender_id, body, mentions, created_at, kind, system)
            VALUES (\(chatID), \(line.actorID), NULL, '[]', \(time), 'system', \(text))
            RETURNING id
            """, in: db) else {
            throw StoreError(code: .system, message: "inserting a system line returned no id")
        }
        if db.dialect == .sqlite {
            // An external-content index holds a row for every message; a system line's is empty.
            try db.run("INSERT INTO messaging_search (rowid, body) VALUES (\(id), NULL)")
        }
        try touch(chatID: chatID, messageID: id, in: db)
        return Message(id: id, chatID: chatID, senderID: line.actorID, body: nil, mentions: [], clientID: nil,
                       createdAt: time, editedAt: nil, deleted: false, kind: .system, system: line)
    }

    /// Moves the chat up the lists: its last activity becomes the time of the newest of the batch's
    /// messages in it that were stored (never earlier), once per write batch however many of the
    /// batch's writes post to the chat. Looked up by id: a message sent ahead that was not stored
    /// simply is not found.
    private static func touch(chatID: Int64, messageID: Int64, in db: Database) throws {
        try db.runBeforeCommit(key: "messaging.activity:\(chatID)", collecting: messageID) { ids in
            let newest: SQL = "(SELECT MAX(created_at) FROM messaging_messages WHERE id IN \(list: ids))"
            return "UPDATE messaging_chats SET last_activity_at = \(newest) WHERE id = \(chatID) AND last_activity_at < \(newest)"
        }
    }

    /// The sender has read the chat up to what they wrote: their marker moves to the newest of
    /// their stored messages of the batch there (never back), once per write batch, like `touch`.
    private static func markSent(chatID: Int64, senderID: Int64, messageID: Int64, in db: Database) throws {
        try db.runBeforeCommit(key: "messaging.read:\(chatID):\(senderID)", collecting: messageID) { ids in
            let newest: SQL = "(SELECT MAX(id) FROM messaging_messages WHERE id IN \(list: ids))"
            return """
                UPDATE messaging_members SET last_read_id = \(newest)
                WHERE chat_id = \(chatID) AND user_id = \(senderID) AND last_read_id < \(newest)
                """
        }
    }

    /// The sender's earlier message with the same `clientID` in the chat, if any.
    static func message(chatID: Int64, senderID: Int64, clientID: String, in db: Database) throws -> Message? {
        try db.fetchOne(Message.self, """
            SELECT \(messageColumns) FROM messaging_messages WHERE chat_id = \(chatID) AND sender_id = \(senderID) AND client_id = \(clientID)
            """)
    }

    static func message(_ id: Int64, in db: Database) throws -> Message? {
        try db.fetchOne(Message.self, "SELECT \(messageColumns) FROM messaging_messages WHERE id = \(id)")
    }

    /// Messages of a chat `reader` is a member of, in ascending id order: after `after` (the
    /// oldest first) when given, else the newest `limit` below `before` (or the newest of all).
    /// Nil when `reader` is not a member; membership is in the same statement, so a page costs
    /// one query (a second one only to tell an empty page from a chat that is not theirs).
    static func messages(chatID: Int64, reader: Int64, after: Int64?, before: Int64?, limit: Int, in db: Database) throws -> [Message]? {
        let page: SQL = """
            SELECT \(messageColumns) FROM messaging_messages
            WHERE chat_id = \(chatID) AND EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(reader))
              AND id > \(after ?? 0) AND id < \(before ?? Int64.max)
            """
        let messages: [Message] = if after != nil {
            try db.fetchAll(Message.self, "\(page) ORDER BY id LIMIT \(limit)")
        } else {
            try db.fetchAll(Message.self, "\(page) ORDER BY id DESC LIMIT \(limit)").reversed()
        }
        if messages.isEmpty, try !isMember(reader, of: chatID, in: db) { return nil }
        return messages
    }

    /// Replaces a message's body and mentions, and its search row.
    static func editMessage(_ old: Message, body: String, mentions: [Int64], at time: Timestamp, in db: Database) throws {
        if db.dialect == .sqlite, let oldBody = old.body {
            try db.run("INSERT INTO messaging_search (messaging_search, rowid, body) VALUES ('delete', \(old.id), \(oldBody))")
        }
        try db.run("UPDATE messaging_messages SET body = \(body), mentions = \(idsText(mentions)), edited_at = \(time) WHERE id = \(old.id)")
        if db.dialect == .sqlite {
            try db.run("INSERT INTO messaging_search (rowid, body) VALUES (\(old.id), \(body))")
        }
        try db.run("DELETE FROM messaging_mentions WHERE message_id = \(old.id)")
        try insertMentions(mentions, messageID: old.id, chatID: old.chatID, senderID: old.senderID, in: db)
    }

    /// Deletes a message softly: the row stays with `deleted = 1`; its body and mentions go, and
    /// its search row is emptied.
    static func deleteMessage(_ old: Message, in db: Database) throws {
        if db.dialect == .sqlite, let oldBody = old.body {
            try db.run("INSERT INTO messaging_search (messaging_search, rowid, body) VALUES ('delete', \(old.id), \(oldBody))")
        }
        try db.run("UPDATE messaging_messages SET body = NULL, mentions = '[]', deleted = 1 WHERE id = \(old.id)")
        if db.dialect == .sqlite {
            // An external-content index holds a row for every message; the deleted one's is empty.
            try db.run("INSERT INTO messaging_search (rowid, body) VALUES (\(old.id), NULL)")
        }
        try db.run("DELETE FROM messaging_mentions WHERE message_id = \(old.id)")
    }

    /// Only the members among `userIDs` (the sender aside) are counted as mentioned.
    private static func insertMentions(_ userIDs: [Int64], messageID: Int64, chatID: Int64, senderID: Int64, in db: Database) throws {
        for user in userIDs where user != senderID {
            try db.run("""
                INSERT INTO messaging_mentions (user_id, chat_id, message_id)
                SELECT CAST(\(user) AS BIGINT), CAST(\(chatID) AS BIGINT), CAST(\(messageID) AS BIGINT)
                WHERE EXISTS (SELECT 1 FROM messaging_members WHERE chat_id = \(chatID) AND user_id = \(user))
                ON CONFLICT DO NOTHING
                """)
        }
    }

    // MARK: Search

    /// One search hit: the message and its snippet, the match between « and ».
    struct Hit: Sendable, RowDecodable {
        let message: Message
        let snippet: String

        init(row: Row) throws {
            message = try Message(row: row)
            snippet = row.string("snippet") ?? ""
        }

        init(message: Message, snippet: String) {
            self.message = message
            self.snippet = snippet
        }
    }

    /// What a person typed, as words to find: every word must appear; `endsInWord` when the text
    /// ends inside a word (it may be half-typed, so the last may be the start of one). Words are
    /// runs of letters, digits and "_" (each backend's tokenizer splits them further at "_", as
    /// it splits the messages). Nil when the text holds no word.
    struct SearchWords: Sendable, Equatable {
        let words: [String]
        let endsInWord: Bool

        init?(_ text: String) {
            var words: [String] = []
            var current = ""
            for ch in text {
                if ch.isLetter || ch.isNumber || ch == "_" { current.append(ch) } else if !current.isEmpty {
                    words.append(current); current = ""
                }
            }
            if !current.isEmpty { words.append(current) }
            guard !words.isEmpty else { return nil }
            self.words = Array(words.prefix(16))
            endsInWord = text.last.map { $0.isLetter || $0.isNumber || $0 == "_" } ?? false
        }

        /// The FTS5 expressions: each word quoted, so FTS5 operators typed by people are plain
        /// words; `prefixed` with the last word as a word's start, when the text ends in a word.
        var fts: (words: String, prefixed: String?) {
            let quoted = words.map { "\"\($0)\"" }.joined(separator: " ")
            return (quoted, endsInWord ? quoted + "*" : nil)
        }

        /// The same expressions as `tsquery` text for `to_tsquery`: each word quoted (a word holds
        /// only letters, digits and "_", so nothing in it is an operator or a quote and no input
        /// makes a syntax error), its parts at "_" a phrase (`<->`, as FTS5 reads a quoted word),
        /// all of them required (`&`); `prefixed` marks the last part of the last word `:*`.
        /// Lowercased here because a C-locale database lowercases ASCII only (the messages are
        /// lowercased with ICU, see `sgem_search_text`). Nil when no word has a part.
        var tsquery: (words: String, prefixed: String?)? {
            let phrases = words.map { word in word.lowercased().split(separator: "_").map { "'\($0)'" } }.filter { !$0.isEmpty }
            guard !phrases.isEmpty else { return nil }
            func text(prefixed: Bool) -> String {
                phrases.enumerated().map { i, parts in
                    let last = prefixed && i == phrases.count - 1
                    return "(" + parts.joined(separator: " <-> ") + (last ? ":*" : "") + ")"
                }.joined(separator: " & ")
            }
            return (text(prefixed: false), endsInWord ? text(prefixed: true) : nil)
        }
    }

    /// PostgreSQL: how many of `userID`'s messages match `query` (`tsquery` text), up to 100,
    /// counted from the GIN index's bitmap alone.
    ///
    /// PostgreSQL's statistics know the common words only: for a rare word or a prefix it
    /// guesses thousands of matches and walks the newest-first key index through every message
    /// looking for them (a quarter second over a million; 2.3 s for a prefix). So the search
    /// counts first: fewer than a hundred are read in full and ordered, more are walked newest
    /// first, where the walk soon meets `limit` of them. Planned for the words at hand each time:
    /// a plan made once for any words (a prepared statement's generic plan) is the walk this avoids.
    static func countMatches(_ query: String, userID: Int64, chatID: Int64?, before: Int64?, in db: Database) throws -> Int {
        let inChat: SQL = chatID.map { "AND m.chat_id = \($0)" } ?? ""
        let counted = try db.planned([.valuesAtHand, .bitmapOnly]) {
            try db.fetchValue("""
                SELECT COUNT(*) FROM (
                  SELECT 1 FROM messaging_messages m
                  WHERE m.search_vector @@ to_tsquery('sgem_search', \(query)) AND m.id < \(before ?? Int64.max)
                    AND m.deleted = 0 AND m.kind = 'text'
                    AND m.chat_id IN (SELECT chat_id FROM messaging_members WHERE user_id = \(userID))
                    \(inChat)
                  LIMIT 100) AS s
                """)
        }
        if case .integer(let n) = counted { return Int(n) }
        return 0
    }

    /// Messages matching `query` (an FTS5 expression on SQLite, `tsquery` text on PostgreSQL) in
    /// `userID`'s chats (one of them when `chatID` is given), newest first, ids below `before`.
    /// On PostgreSQL `matches` is `countMatches` for the same arguments when the caller has it.
    static func search(_ query: String, userID: Int64, chatID: Int64?, before: Int64?, limit: Int, matches: Int? = nil,
                       window: SQL = "", in db: Database) throws -> [Hit] {
        let inChat: SQL = chatID.map { "AND m.chat_id = \($0)" } ?? ""
        if db.dialect == .postgresql {
            let counted = try matches ?? countMatches(query, userID: userID, chatID: chatID, before: before, in: db)
            guard counted > 0 else { return [] }
            // Few: read in full and ordered (`m.id + 0` keeps the key index out); many: walked.
            let order: SQL = counted >= 100 ? "m.id" : "(m.id + 0)"
            // Up to 16 words around the match (FTS5's snippet length), "…" added below where the
            // body was cut, as FTS5 marks it.
            let hits = try db.planned(.valuesAtHand) {
                try db.fetchAll(Hit.self, """
                    SELECT m.id, m.chat_id, m.sender_id, m.body, m.mentions, m.client_id, m.created_at, m.edited_at, m.deleted,
                           m.kind, m.system,
                           ts_headline('sgem_search', m.body, q, 'StartSel=«, StopSel=», MaxWords=16, MinWords=8, ShortWord=0') AS snippet
                    FROM messaging_messages m, to_tsquery('sgem_search', \(query)) q
                    WHERE m.search_vector @@ q AND m.id < \(before ?? Int64.max)
                      AND m.deleted = 0 AND m.kind = 'text'
                      AND m.chat_id IN (SELECT chat_id FROM messaging_members WHERE user_id = \(userID))
                      \(inChat) \(window)
                    ORDER BY \(order) DESC LIMIT \(limit)
                    """)
            }
            return hits.map { Hit(message: $0.message, snippet: ellipsized($0.snippet, of: $0.message.body ?? "")) }
        }
        return try db.fetchAll(Hit.self, """
            SELECT m.id, m.chat_id, m.sender_id, m.body, m.mentions, m.client_id, m.created_at, m.edited_at, m.deleted,
                   m.kind, m.system, snippet(messaging_search, 0, '«', '»', '…', 16) AS snippet
            FROM messaging_search JOIN messaging_messages m ON m.id = messaging_search.rowid
            WHERE messaging_search MATCH \(query) AND messaging_search.rowid < \(before ?? Int64.max)
              AND m.deleted = 0 AND m.kind = 'text'
              AND m.chat_id IN (SELECT chat_id FROM messaging_members WHERE user_id = \(userID))
              \(inChat)
            ORDER BY messaging_search.rowid DESC LIMIT \(limit)
            """)
    }

    /// How many of the newest ids (below `before`) `searchRecent` walks.
    static let recentWindow: Int64 = 4_000

    /// PostgreSQL: the newest `limit` matches of `query` among the `recentWindow` newest ids below
    /// `before`, walked newest first through the key index (never a bitmap of every match): all
    /// of the search's first `limit` when it finds `limit`, since every other match is older.
    static func searchRecent(_ query: String, userID: Int64, chatID: Int64?, before: Int64?, limit: Int, in db: Database) throws -> [Hit] {
        let top: SQL = before.map { "CAST(\($0) AS BIGINT)" } ?? "(SELECT COALESCE(MAX(id), 0) + 1 FROM messaging_messages)"
        return try db.planned([.valuesAtHand, .noBitmap]) {
            try search(query, userID: userID, chatID: chatID, before: before, limit: limit, matches: 100,
                       window: "AND m.id >= \(top) - CAST(\(recentWindow) AS BIGINT)", in: db)
        }
    }

    /// `ts_headline`'s excerpt with "…" where it leaves out the start or the end of the body.
    private static func ellipsized(_ snippet: String, of body: String) -> String {
        func plain(_ text: String) -> String { text.filter { $0 != "«" && $0 != "»" }.trimmingWhitespace() }
        let excerpt = plain(snippet), whole = plain(body)
        guard !excerpt.isEmpty else { return snippet }
        return (whole.hasPrefix(excerpt) ? "" : "…") + snippet + (whole.hasSuffix(excerpt) ? "" : "…")
    }

    /// Search for what a person typed: whole words when some message of the reader's holds them
    /// all, else with the last word as a word's start. FTS5 reads a prefix's matches in full
    /// before ordering them (tens of milliseconds for a common one over a million messages) but
    /// walks a whole word's lazily, newest first, stopping at `limit`; the choice does not depend
    /// on `before`, so every page of one search uses the same one. PostgreSQL makes the same
    /// choice, so both backends answer the same.
    static func search(text: String, userID: Int64, chatID: Int64?, before: Int64?, limit: Int, in db: Database) throws -> [Hit] {
        guard let words = SearchWords(text),
              let query = db.dialect == .postgresql ? words.tsquery : words.fts else { return [] }
        if db.dialect == .postgresql {
            // A page of whole-word matches among the newest messages answers most searches (and
            // says the words are there, so no prefix): a walk of a few thousand ids, where the
            // count below would build the bitmap of a common word's every match.
            let recent = try searchRecent(query.words, userID: userID, chatID: chatID, before: before, limit: limit, in: db)
            if recent.count == limit { return recent }
            // The whole-word count answers both questions: whether to fall back to the prefix,
            // and (on the first page) how to read the matches.
            var wholeWords: Int?
            if let prefixed = query.prefixed {
                let found = try countMatches(query.words, userID: userID, chatID: chatID, before: nil, in: db)
                if found == 0 { return try search(prefixed, userID: userID, chatID: chatID, before: before, limit: limit, in: db) }
                wholeWords = found
            }
            return try search(query.words, userID: userID, chatID: chatID, before: before, limit: limit,
                              matches: before == nil ? wholeWords : nil, in: db)
        }
        if let prefixed = query.prefixed,
           try search(query.words, userID: userID, chatID: chatID, before: nil, limit: 1, in: db).isEmpty {
            return try search(prefixed, userID: userID, chatID: chatID, before: before, limit: limit, in: db)
        }
        return try search(query.words, userID: userID, chatID: chatID, before: before, limit: limit, in: db)
    }

    /// Checks that the search index matches the messages (FTS5's integrity check on SQLite; on
    /// PostgreSQL the generated column against its expression); throws when it does not.
    static func checkSearchIndex(in db: Database) throws {
        if db.dialect == .postgresql {
            let stale = try count("""
                SELECT COUNT(*) AS n FROM messaging_messages
                WHERE search_vector IS DISTINCT FROM to_tsvector('sgem_search', sgem_search_text(body))
                """, in: db)
            guard stale == 0 else { throw StoreError(code: .system, message: "\(stale) messages have a stale search vector") }
        } else {
            try db.run("INSERT INTO messaging_search (messaging_search, rank) VALUES ('integrity-check', 1)")
        }
    }

    // MARK: Contacts

    static func contacts(of ownerID: Int64, in db: Database) throws -> [(Int64, Timestamp)] {
        try db.fetchAll(ContactRow.self, """
            SELECT contact_id, created_at FROM messaging_contacts WHERE owner_id = \(ownerID) ORDER BY created_at, contact_id
            """).map { ($0.contactID, $0.createdAt) }
    }

    static func contactCount(of ownerID: Int64, in db: Database) throws -> Int {
        try count("SELECT COUNT(*) AS n FROM messaging_contacts WHERE owner_id = \(ownerID)", in: db)
    }

    static func addContact(_ contactID: Int64, to ownerID: Int64, at time: Timestamp, in db: Database) throws {
        try db.run("""
            INSERT INTO messaging_contacts (owner_id, contact_id, created_at) VALUES (\(ownerID), \(contactID), \(time))
            ON CONFLICT (owner_id, contact_id) DO NOTHING
            """)
    }

    static func removeContact(_ contactID: Int64, from ownerID: Int64, in db: Database) throws {
        try db.run("DELETE FROM messaging_contacts WHERE owner_id = \(ownerID) AND contact_id = \(contactID)")
    }

    // MARK: Encoding of list columns

    private static func tagsText(_ tags: [String]) -> String { JSONValue.array(tags.map(JSONValue.string)).serialized() }
    private static func idsText(_ ids: [Int64]) -> String { JSONValue.array(ids.map { .number(Double($0)) }).serialized() }
    /// A list of ids as `idsText` wrote it; most messages mention nobody, so "[]" is not parsed.
    fileprivate static func parseIDs(_ text: String?) -> [Int64] {
        guard let text, text != "[]" else { return [] }
        return text.utf8.split(whereSeparator: { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "[") || $0 == UInt8(ascii: "]") })
            .compactMap { Int64(String(decoding: $0, as: UTF8.self).trimmingWhitespace()) }
    }

    fileprivate static func parseIDsOrTags(_ text: String?) -> [JSONValue] {
        guard let text, let value = try? JSONValue.parse(Array(text.utf8)) else { return [] }
        return value.arrayValue ?? []
    }
}

/// A message from a row whose first columns are `messageColumns`, in that order (by position: a
/// page decodes 50 rows, and a lookup by name compares column names each time).
extension Message: RowDecodable {
    init(row: Row) throws {
        guard case let .integer(id) = row[0], case let .integer(chat) = row[1], case let .integer(sender) = row[2],
              case let .integer(created) = row[6] else {
            throw StoreError(code: .decoding, message: "a message row lacks its id, chat, sender or time")
        }
        var deleted = false
        if case let .integer(flag) = row[8] { deleted = flag != 0 }
        var body: String?
        if !deleted, case let .text(text) = row[3] { body = text }
        var mentions: [Int64] = []
        if case let .text(text) = row[4] { mentions = MessagingRepository.parseIDs(text) }
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
        self.init(id: id, chatID: chat, senderID: sender, body: body, mentions: mentions, clientID: clientID,
                  createdAt: Timestamp(milliseconds: created), editedAt: editedAt, deleted: deleted, kind: kind, system: system)
    }
}
