import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the event journal's SQL: the `system_events` table.
struct JournalRepository: Sendable {
    static func registerMigrations(_ migrations: inout MigrationList) {
        // AUTOINCREMENT: an id is never handed out twice, even after retention deletes the newest
        // rows' predecessors or all of them, so a client's `since` cursor stays meaningful.
        // PostgreSQL's baseline is the final table (ids from an identity column, never handed out
        // twice either); its forms of 005 and 006 are empty.
        migrations.add("system.004_events", sqlite: """
            CREATE TABLE system_events (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                type TEXT NOT NULL,
                audience_kind TEXT NOT NULL CHECK (audience_kind IN ('everyone', 'user', 'admins', 'chat', 'users')),
                audience_id INTEGER,
                audience_users TEXT,
                data TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                CHECK ((audience_kind IN ('user', 'chat')) = (audience_id IS NOT NULL)),
                CHECK ((audience_kind = 'users') = (audience_users IS NOT NULL))
            );
            CREATE INDEX system_events_created ON system_events (created_at);
            """, postgresql: """
            CREATE TABLE system_events (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                type TEXT NOT NULL,
                audience_kind TEXT NOT NULL
                    CHECK (audience_kind IN ('everyone', 'user', 'admins', 'chat', 'users', 'chat_users', 'user_admins', 'hubs')),
                audience_id BIGINT,
                audience_users TEXT,
                data TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                subject TEXT,
                CHECK ((audience_kind IN ('user', 'chat', 'chat_users', 'user_admins')) = (audience_id IS NOT NULL)),
                CHECK ((audience_kind IN ('users', 'chat_users')) = (audience_users IS NOT NULL))
            );
            CREATE INDEX system_events_created ON system_events (created_at);
            CREATE INDEX system_events_subject ON system_events (subject) WHERE subject IS NOT NULL;
            """)
        // Two audiences judged at delivery: `chat_users` (these users while members of the chat)
        // and `user_admins` (one user and the admins of the moment). SQLite cannot change a CHECK
        // in place, so the table is rebuilt; the AUTOINCREMENT counter moves with it, so ids
        // never go back even when retention had emptied the table.
        migrations.add("system.005_event_audiences", sqlite: """
            CREATE TABLE system_events_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                type TEXT NOT NULL,
                audience_kind TEXT NOT NULL
                    CHECK (audience_kind IN ('everyone', 'user', 'admins', 'chat', 'users', 'chat_users', 'user_admins')),
                audience_id INTEGER,
                audience_users TEXT,
                data TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                CHECK ((audience_kind IN ('user', 'chat', 'chat_users', 'user_admins')) = (audience_id IS NOT NULL)),
                CHECK ((audience_kind IN ('users', 'chat_users')) = (audience_users IS NOT NULL))
            );
            INSERT INTO system_events_new (id, type, audience_kind, audience_id, audience_users, data, created_at)
                SELECT id, type, audience_kind, audience_id, audience_users, data, created_at FROM system_events;
            DELETE FROM sqlite_sequence WHERE name = 'system_events_new';
            INSERT INTO sqlite_sequence (name, seq) SELECT 'system_events_new', seq FROM sqlite_sequence WHERE name = 'system_events';
            DROP TABLE system_events;
            ALTER TABLE system_events_new RENAME TO system_events;
            CREATE INDEX system_events_created ON system_events (created_at);
            """, postgresql: "")
        // `subject` (`message:42`), indexed, so an edit or deletion finds and rewrites the earlier
        // events about it; `hubs`, the audience of control events no client receives. A rebuild
        // again (a CHECK changes); events recorded before get their subject from their data, and
        // a message's events older than its last edit or deletion take that change's data, as
        // the rewrite would have done (notices recorded no deletion to go by).
        migrations.add("system.006_event_subjects", sqlite: """
            CREATE TABLE system_events_new (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                type TEXT NOT NULL,
                audience_kind TEXT NOT NULL
                    CHECK (audience_kind IN ('everyone', 'user', 'admins', 'chat', 'users', 'chat_users', 'user_admins', 'hubs')),
                audience_id INTEGER,
                audience_users TEXT,
                data TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                subject TEXT,
                CHECK ((audience_kind IN ('user', 'chat', 'chat_users', 'user_admins')) = (audience_id IS NOT NULL)),
                CHECK ((audience_kind IN ('users', 'chat_users')) = (audience_users IS NOT NULL))
            );
            INSERT INTO system_events_new (id, type, audience_kind, audience_id, audience_users, data, created_at, subject)
                SELECT id, type, audience_kind, audience_id, audience_users, data, created_at,
                       CASE WHEN NOT json_valid(data) THEN NULL
                            WHEN type LIKE 'message.%' THEN 'message:' || json_extract(data, '$.message.id')
                            WHEN type LIKE 'notice.%' THEN 'notice:' || json_extract(data, '$.notice.id') END
                FROM system_events;
            DELETE FROM sqlite_sequence WHERE name = 'system_events_new';
            INSERT INTO sqlite_sequence (name, seq) SELECT 'system_events_new', seq FROM sqlite_sequence WHERE name = 'system_events';
            DROP TABLE system_events;
            ALTER TABLE system_events_new RENAME TO system_events;
            CREATE INDEX system_events_created ON system_events (created_at);
            CREATE INDEX system_events_subject ON system_events (subject) WHERE subject IS NOT NULL;
            UPDATE system_events AS e SET data = (
                SELECT c.data FROM system_events c WHERE c.subject = e.subject AND c.audience_kind = 'chat'
                    AND c.type IN ('message.updated', 'message.deleted') ORDER BY c.id DESC LIMIT 1)
            WHERE e.subject LIKE 'message:%' AND EXISTS (
                SELECT 1 FROM system_events c WHERE c.subject = e.subject AND c.audience_kind = 'chat'
                    AND c.type IN ('message.updated', 'message.deleted') AND c.id > e.id);
            """, postgresql: "")
        // The newest id retention has removed, kept in the deleting transaction: with the newest
        // id kept, it says where the journal ends even when retention emptied it, on both backends
        // (SQLite's own counter is not PostgreSQL's, and a sequence there runs ahead of commits).
        migrations.add("system.007_events_removed", sqlite: """
            CREATE TABLE system_events_removed (id INTEGER PRIMARY KEY CHECK (id = 1), removed_through INTEGER NOT NULL);
            INSERT INTO system_events_removed (id, removed_through)
                VALUES (1, COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'system_events'), 0));
            """, postgresql: """
            CREATE TABLE system_events_removed (id INTEGER PRIMARY KEY CHECK (id = 1), removed_through BIGINT NOT NULL);
            INSERT INTO system_events_removed (id, removed_through) VALUES (1, 0);
            """)
    }

    /// Migrations of the journal that come after `system.008` (another repository's).
    static func registerLaterMigrations(_ migrations: inout MigrationList) {
        // PostgreSQL: the audience kind's rule moves from a CHECK constraint to a domain. A table's
        // CHECK constraints are read back from the catalogue and planned again every time an
        // INSERT starts — a fifth of an event's cost, paid by every write that records one — while
        // a domain's are planned once per connection. The domain comes without its rule first, so
        // that changing the column's type rewrites nothing; adding the rule then only reads the
        // rows. The two rules across columns (an id exactly for the kinds that name one) go: the
        // journal writes those columns from one `EventAudience` value (`columns(_:)`), which
        // cannot pair them otherwise. SQLite checks cost nothing of the kind and stay.
        migrations.add("system.009_journal_audience_domain", sqlite: "", postgresql: """
            CREATE DOMAIN sgem_audience_kind AS TEXT;
            ALTER TABLE system_events DROP CONSTRAINT IF EXISTS system_events_audience_kind_check,
                DROP CONSTRAINT IF EXISTS system_events_check, DROP CONSTRAINT IF EXISTS system_events_check1,
                ALTER COLUMN audience_kind TYPE sgem_audience_kind;
            ALTER DOMAIN sgem_audience_kind ADD CONSTRAINT sgem_audience_kind_known
                CHECK (VALUE IN ('everyone', 'user', 'admins', 'chat', 'users', 'chat_users', 'user_admins', 'hubs'));
            """)
    }

    /// Inserts one event in `db`'s transaction and returns its id.
    static func insert(_ event: RealtimeEvent, at time: Timestamp, in db: Database) throws -> Int64 {
        let (kind, id, users) = JournalRepository.columns(event.audience)
        guard let row = try db.queryOne("""
            INSERT INTO system_events (type, audience_kind, audience_id, audience_users, data, created_at, subject)
            VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, event.type, kind, id, users, event.serializedData ?? event.data.serialized(), time, event.subject),
              let newID = row.int64("id") else {
            throw StoreError(code: .system, message: "inserting an event returned no id")
        }
        return newID
    }

    /// Inserts an event without reading its id back: no rows to wait for, so on PostgreSQL the
    /// statement is pipelined with the write's next one.
    static func insertUnnumbered(_ event: RealtimeEvent, at time: Timestamp, in db: Database) throws {
        let (kind, id, users) = JournalRepository.columns(event.audience)
        try db.execute("""
            INSERT INTO system_events (type, audience_kind, audience_id, audience_users, data, created_at, subject)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, event.type, kind, id, users, event.serializedData ?? event.data.serialized(), time, event.subject)
    }

    /// Inserts one event in `db`'s transaction if `condition` holds then, in the same statement.
    static func insertUnnumbered(_ event: RealtimeEvent, at time: Timestamp, onlyIf condition: SQL, in db: Database) throws {
        let (kind, id, users) = JournalRepository.columns(event.audience)
        let data = event.serializedData ?? event.data.serialized()
        // The casts type the selected bindings for PostgreSQL (it cannot infer them in a SELECT list).
        try db.run("""
            INSERT INTO system_events (type, audience_kind, audience_id, audience_users, data, created_at, subject)
            SELECT CAST(\(event.type) AS TEXT), CAST(\(kind) AS TEXT), CAST(\(id) AS BIGINT), CAST(\(users) AS TEXT),
                   CAST(\(data) AS TEXT), CAST(\(time) AS BIGINT), CAST(\(event.subject) AS TEXT)
            WHERE \(condition)
            """)
    }

    /// Sets the data of every event about `subject` to `data`; returns how many changed.
    static func rewrite(subject: String, to data: String, in db: Database) throws -> Int {
        try db.execute("UPDATE system_events SET data = ? WHERE subject = ? AND data <> ?", data, subject, data)
        return try db.changes
    }

    static func events(after: Int64, limit: Int, in db: Database) throws -> [RecordedEvent] {
        try db.query("""
            SELECT id, type, audience_kind, audience_id, audience_users, data, created_at, subject FROM system_events
            WHERE id > ? ORDER BY id LIMIT ?
            """, after, limit).compactMap(JournalRepository.event)
    }

    /// Of the next `limit` events after `after`, those of `types` and `audiences` (a chat's only
    /// for `chats`, when given), and the last id looked at.
    static func events(after: Int64, limit: Int, types: Set<String>, audiences: Set<EventAudience.Kind>, chats: Set<Int64>?,
                       in db: Database) throws -> ([Row], Int64) {
        guard let end = try db.fetchOne("""
            SELECT MAX(id) AS id FROM (SELECT id FROM system_events WHERE id > \(after) ORDER BY id LIMIT \(limit)) AS page
            """)?.int64("id") else { return ([], after) }
        guard !types.isEmpty, !audiences.isEmpty else { return ([], end) }
        let chatsOnly: SQL = chats.map { " AND (audience_kind <> \(kindName(.chat)) OR audience_id IN \(list: $0.sorted()))" } ?? ""
        let rows = try db.fetchAll("""
            SELECT id, type, audience_kind, audience_id, audience_users, data, created_at, subject FROM system_events
            WHERE id > \(after) AND id <= \(end) AND type IN \(list: types.sorted())
                AND audience_kind IN \(list: audiences.map(JournalRepository.kindName).sorted())\(chatsOnly) ORDER BY id
            """)
        // Rows, not events: the caller decodes them on its own thread, off the store's.
        return (rows, end)
    }

    /// The newest id handed out to an event that committed: the newest kept, or the newest that
    /// retention removed; 0 before the first event.
    static func lastID(in db: Database) throws -> Int64 {
        let kept = try db.queryOne("SELECT MAX(id) AS id FROM system_events")?.int64("id") ?? 0
        return max(kept, try removedThrough(in: db))
    }

    private static func removedThrough(in db: Database) throws -> Int64 {
        try db.queryOne("SELECT removed_through FROM system_events_removed WHERE id = 1")?.int64("removed_through") ?? 0
    }

    /// The newest id retention removed: the one before the oldest kept, or every id handed out
    /// when none is kept; 0 when nothing was ever removed.
    static func horizon(in db: Database) throws -> Int64 {
        if let oldest = try db.queryOne("SELECT MIN(id) AS id FROM system_events")?.int64("id") { return oldest - 1 }
        return try lastID(in: db)
    }

    /// Removes at most `limit` of the oldest events, and only a prefix of the ids: every id up
    /// to the newest recorded before `time`, so `horizon` stays exact even when clocks of
    /// several writers disagree a little. Records the newest id removed. Returns how many went.
    static func removeEvents(recordedBefore time: Timestamp, limit: Int, in db: Database) throws -> Int {
        guard let newest = try db.queryOne("SELECT MAX(id) AS id FROM system_events WHERE created_at < ?", time)?.int64("id") else {
            return 0
        }
        let removed = try db.query("""
            DELETE FROM system_events WHERE id IN (SELECT id FROM system_events WHERE id <= ? ORDER BY id LIMIT ?) RETURNING id
            """, newest, limit).compactMap { $0.int64(at: 0) }
        if let through = removed.max() {
            try db.execute("UPDATE system_events_removed SET removed_through = ? WHERE id = 1 AND removed_through < ?", through, through)
        }
        return removed.count
    }

    /// An audience kind's stored name.
    static func kindName(_ kind: EventAudience.Kind) -> String {
        switch kind {
        case .everyone: "everyone"
        case .user: "user"
        case .admins: "admins"
        case .chat: "chat"
        case .users: "users"
        case .chatMembers: "chat_users"
        case .userAndAdmins: "user_admins"
        case .hubs: "hubs"
        }
    }

    /// The audience as stored: its kind, the one id of `user`/`chat`, the comma-separated ids of `users`.
    static func columns(_ audience: EventAudience) -> (String, Int64?, String?) {
        switch audience {
        case .everyone: ("everyone", nil, nil)
        case let .user(id): ("user", id, nil)
        case .admins: ("admins", nil, nil)
        case let .chat(id): ("chat", id, nil)
        case let .users(ids): ("users", nil, ids.map(String.init).joined(separator: ","))
        case let .chatMembers(chat, ids): ("chat_users", chat, ids.map(String.init).joined(separator: ","))
        case let .userAndAdmins(id): ("user_admins", id, nil)
        case .hubs: ("hubs", nil, nil)
        }
    }

    static func audience(kind: String?, id: Int64?, users: String?) -> EventAudience? {
        switch (kind, id) {
        case ("everyone"?, _): .everyone
        case ("admins"?, _): .admins
        case let ("user"?, id?): .user(id)
        case let ("chat"?, id?): .chat(id)
        case ("users"?, _): users.map { .users($0.split(separator: ",").compactMap { Int64($0) }) }
        case let ("chat_users"?, chat?): users.map { .chatMembers(chat: chat, users: $0.split(separator: ",").compactMap { Int64($0) }) }
        case let ("user_admins"?, id?): .userAndAdmins(id)
        case ("hubs"?, _): .hubs
        default: nil
        }
    }

    /// A row as a recorded event; nil for a row no version of this code wrote (skipped, not fatal).
    static func event(_ row: Row) -> RecordedEvent? {
        guard let id = row.int64("id"), let type = row.string("type"),
              let audience = audience(kind: row.string("audience_kind"), id: row.int64("audience_id"), users: row.string("audience_users")),
              let text = row.string("data"), let data = try? JSONValue.parse(Array(text.utf8)),
              let at = row.timestamp("created_at") else { return nil }
        return RecordedEvent(id: id, event: RealtimeEvent(type: type, audience: audience, data: data, subject: row.string("subject")), at: at)
    }
}
