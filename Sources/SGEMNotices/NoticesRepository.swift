import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the notices module's SQL: the notices and who has read them. Every function takes the
/// connection of the caller's `store.read` / `store.write`, so a notice, its event and the change
/// that caused it share one transaction.
struct NoticesRepository: Sendable {
    /// Pinned notices on a first page at most (newest first); the board is meant to pin a few.
    static let maxPinned = 200

    static func registerMigrations(_ migrations: inout MigrationList) {
        // A company notice has no recipient; a personal one exactly one. AUTOINCREMENT: a deleted
        // notice's id never comes back, so a client's cached read state or link cannot point at
        // a different notice.
        migrations.add("notices.001_notices", sql: """
            CREATE TABLE notices (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                kind TEXT NOT NULL CHECK (kind IN ('company', 'holiday')),
                recipient_id INTEGER,
                title TEXT NOT NULL,
                body TEXT NOT NULL,
                pinned INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
                author_id INTEGER,
                created_at INTEGER NOT NULL,
                edited_at INTEGER,
                audience_base INTEGER,
                CHECK ((kind = 'company') = (recipient_id IS NULL))
            );
            CREATE INDEX notices_recipient ON notices (recipient_id, id);
            CREATE INDEX notices_pinned ON notices (pinned, id);
            CREATE TABLE notices_reads (
                notice_id INTEGER NOT NULL REFERENCES notices (id) ON DELETE CASCADE,
                user_id INTEGER NOT NULL,
                read_at INTEGER NOT NULL,
                PRIMARY KEY (notice_id, user_id)
            ) WITHOUT ROWID;
            """)
        // A holiday notice keeps what happened (JSON facts) and is worded when read, in the
        // reader's language; rows written before keep their stored text. The index serves the
        // board filtered by kind.
        let kinds = """
            ALTER TABLE notices ADD COLUMN facts TEXT;
            CREATE INDEX notices_kind ON notices (kind, id);
            """
        migrations.add("notices.002_notice_kinds", sqlite: kinds, postgresql: kinds)
    }

    /// The columns of a notice as `viewer` sees it (?1 is the viewer's id; 0 for nobody).
    private static let columns = """
        n.id, n.kind, n.recipient_id, n.title, n.body, n.pinned, n.author_id, n.created_at, n.edited_at, n.audience_base, n.facts,
        CASE WHEN n.kind = 'company' AND n.author_id = ?1 THEN 1
             WHEN EXISTS (SELECT 1 FROM notices_reads r WHERE r.notice_id = n.id AND r.user_id = ?1) THEN 1
             ELSE 0 END AS is_read,
        (SELECT COUNT(*) FROM notices_reads r WHERE r.notice_id = n.id AND r.user_id IS NOT n.author_id) AS read_count
        """

    /// Company notices, and the viewer's own personal ones (?1 is the viewer's id).
    private static let visible = "(n.recipient_id IS NULL OR n.recipient_id = ?1)"

    static func insert(_ new: Notice.Draft, in db: Database) throws -> Notice {
        guard let row = try db.queryOne("""
            INSERT INTO notices (kind, recipient_id, title, body, pinned, author_id, created_at, audience_base, facts)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, new.kind.rawValue, new.recipientID, new.title, new.body, new.pinned, new.authorID, new.createdAt, new.audienceBase,
            new.facts?.json.serialized()),
              let id = row.int64("id") else {
            throw StoreError(code: .system, message: "inserting a notice returned no id")
        }
        return Notice(id: id, draft: new, editedAt: nil, read: new.kind == .company && new.authorID != nil, readCount: 0)
    }

    /// A notice `viewer` may see; nil when there is none or it is someone else's.
    static func notice(_ id: Int64, viewer: Int64, in db: Database) throws -> Notice? {
        try db.queryOne("SELECT \(columns) FROM notices n WHERE \(visible) AND n.id = ?2", viewer, id).flatMap(notice)
    }

    /// A company notice (the only kind admins edit); nil for a personal one or none.
    static func companyNotice(_ id: Int64, viewer: Int64, in db: Database) throws -> Notice? {
        try db.queryOne("SELECT \(columns) FROM notices n WHERE n.kind = 'company' AND n.id = ?2", viewer, id).flatMap(notice)
    }

    /// The visible pinned notices (of `kind` when given), newest first, at most `maxPinned`.
    static func pinned(viewer: Int64, kind: Notice.Kind? = nil, in db: Database) throws -> [Notice] {
        try db.query("""
            SELECT \(columns) FROM notices n WHERE \(visible) AND n.pinned = 1 AND (?3 IS NULL OR n.kind = ?3)
            ORDER BY n.id DESC LIMIT ?2
            """, viewer, maxPinned, kind?.rawValue).compactMap(notice)
    }

    /// Visible notices that are not pinned (of `kind` when given), newest first, with ids below
    /// `before` when given.
    static func unpinned(viewer: Int64, before: Int64?, limit: Int, kind: Notice.Kind? = nil, in db: Database) throws -> [Notice] {
        try db.query("""
            SELECT \(columns) FROM notices n WHERE \(visible) AND n.pinned = 0 AND n.id < ?2 AND (?4 IS NULL OR n.kind = ?4)
            ORDER BY n.id DESC LIMIT ?3
            """, viewer, before ?? Int64.max, limit, kind?.rawValue).compactMap(notice)
    }

    /// Visible notices the viewer has not read, their own company notices excepted.
    static func unreadCount(viewer: Int64, in db: Database) throws -> Int {
        try unreadByKind(viewer: viewer, in: db).values.reduce(0, +)
    }

    /// `unreadCount` per kind; every kind is present (zero when none).
    static func unreadByKind(viewer: Int64, in db: Database) throws -> [Notice.Kind: Int] {
        var counts: [Notice.Kind: Int] = [.company: 0, .holiday: 0]
        for row in try db.query("""
            SELECT n.kind AS kind, COUNT(*) AS n FROM notices n
            WHERE \(visible) AND NOT (n.kind = 'company' AND n.author_id IS ?1)
              AND NOT EXISTS (SELECT 1 FROM notices_reads r WHERE r.notice_id = n.id AND r.user_id = ?1)
            GROUP BY n.kind
            """, viewer) {
            if let kind = row.string("kind").flatMap(Notice.Kind.init(rawValue:)) { counts[kind] = row.int("n") ?? 0 }
        }
        return counts
    }

    /// Marks a visible notice read (again is fine); false when the viewer may not see it.
    static func markRead(_ id: Int64, viewer: Int64, at time: Timestamp, in db: Database) throws -> Bool {
        let inserted = try db.query("""
            INSERT INTO notices_reads (notice_id, user_id, read_at)
            SELECT n.id, ?1, ?3 FROM notices n WHERE \(visible) AND n.id = ?2
            ON CONFLICT (notice_id, user_id) DO NOTHING
            RETURNING notice_id
            """, viewer, id, time)
        if !inserted.isEmpty { return true }
        return try db.queryOne("SELECT 1 AS ok FROM notices n WHERE \(visible) AND n.id = ?2", viewer, id) != nil
    }

    /// Marks every visible notice (of `kind` when given) read; returns how many were not read before.
    @discardableResult
    static func markAllRead(viewer: Int64, kind: Notice.Kind? = nil, at time: Timestamp, in db: Database) throws -> Int {
        try db.execute("""
            INSERT INTO notices_reads (notice_id, user_id, read_at)
            SELECT n.id, ?1, ?2 FROM notices n WHERE \(visible) AND (?3 IS NULL OR n.kind = ?3)
            ON CONFLICT (notice_id, user_id) DO NOTHING
            """, viewer, time, kind?.rawValue)
        return db.changes
    }

    /// Changes a company notice's fields (nil keeps one); false when there is no such company notice.
    static func update(_ id: Int64, title: String?, body: String?, pinned: Bool?, editedAt: Timestamp?, in db: Database) throws -> Bool {
        try db.execute("""
            UPDATE notices SET title = COALESCE(?, title), body = COALESCE(?, body), pinned = COALESCE(?, pinned),
                edited_at = COALESCE(?, edited_at)
            WHERE id = ? AND kind = 'company'
            """, title, body, pinned, editedAt, id)
        return db.changes > 0
    }

    /// Deletes a company notice and its reads; false when there is no such company notice.
    static func deleteCompanyNotice(_ id: Int64, in db: Database) throws -> Bool {
        try db.execute("DELETE FROM notices WHERE id = ? AND kind = 'company'", id)
        return db.changes > 0
    }

    /// Every company notice, newest first, as nobody in particular sees it (the admin verbs).
    static func companyNotices(limit: Int, in db: Database) throws -> [Notice] {
        try db.query("SELECT \(columns) FROM notices n WHERE n.kind = 'company' ORDER BY n.pinned DESC, n.id DESC LIMIT ?2",
                     Int64(0), limit).compactMap(notice)
    }

    private static func notice(_ row: Row) -> Notice? {
        guard let id = row.int64("id"), let kind = row.string("kind").flatMap(Notice.Kind.init(rawValue:)),
              let title = row.string("title"), let body = row.string("body"), let createdAt = row.timestamp("created_at") else { return nil }
        let draft = Notice.Draft(kind: kind, recipientID: row.int64("recipient_id"), title: title, body: body,
                                 pinned: row.bool("pinned") ?? false, authorID: row.int64("author_id"), createdAt: createdAt,
                                 audienceBase: row.int64("audience_base"), facts: HolidayNoticeFacts(stored: row.string("facts")))
        return Notice(id: id, draft: draft, editedAt: row.timestamp("edited_at"), read: row.bool("is_read") ?? false,
                      readCount: row.int("read_count") ?? 0)
    }
}
