import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// A company feed as admins see it: its URL, its title once read, and how the last fetch went.
struct FeedStatus: Sendable, Equatable {
    var url: String
    var title: String?
    /// `pending` (never fetched), `ok` or `error`.
    var status: String
    /// The last failure in words while `status` is `error`.
    var error: String?
    var lastFetchedAt: Timestamp?
    var lastSuccessAt: Timestamp?
    var entryCount: Int

    var json: JSONValue {
        [
            "url": .string(url), "title": title.map(JSONValue.string) ?? .null, "status": .string(status),
            "error": error.map(JSONValue.string) ?? .null,
            "lastFetchedAt": lastFetchedAt.map { .string($0.rfc3339()) } ?? .null,
            "lastSuccessAt": lastSuccessAt.map { .string($0.rfc3339()) } ?? .null,
            "entryCount": .number(Double(entryCount)),
        ]
    }
}

/// What the fetcher needs to ask for a feed again: its row, URL and the validators of the last
/// good answer.
struct FeedTarget: Sendable, Equatable {
    var id: Int64
    var url: String
    var etag: String?
    var lastModified: String?
}

/// One entry of the company feed as clients see it.
struct FeedItem: Sendable, Equatable {
    var title: String
    var url: String?
    var publishedAt: Timestamp?
    /// The feed's title, else its host.
    var source: String

    var json: JSONValue {
        ["title": .string(title), "url": url.map(JSONValue.string) ?? .null,
         "publishedAt": publishedAt.map { .string($0.rfc3339()) } ?? .null, "source": .string(source)]
    }
}

/// All of the company feed's SQL: the feed URLs with their fetch state, and the entries kept
/// from each feed's last good answer.
struct FeedRepository: Sendable {
    let store: Store

    static func registerMigrations(_ migrations: inout MigrationList) {
        // Entries belong to their feed: removing a URL removes what was read from it.
        migrations.add("company.005_feeds", sql: """
            CREATE TABLE company_feeds (
                id INTEGER PRIMARY KEY,
                url TEXT NOT NULL UNIQUE,
                position INTEGER NOT NULL,
                title TEXT,
                etag TEXT,
                last_modified TEXT,
                status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'ok', 'error')),
                error TEXT,
                last_fetched_at INTEGER,
                last_success_at INTEGER,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE company_feed_entries (
                id INTEGER PRIMARY KEY,
                feed_id INTEGER NOT NULL REFERENCES company_feeds(id) ON DELETE CASCADE,
                entry_key TEXT NOT NULL,
                title TEXT NOT NULL,
                url TEXT,
                published_at INTEGER,
                position INTEGER NOT NULL,
                UNIQUE (feed_id, entry_key)
            );
            CREATE INDEX company_feed_entries_published ON company_feed_entries (published_at);
            """)
    }

    // MARK: Admins

    /// Every feed in the admins' order, with its entry count.
    func feeds() async throws -> [FeedStatus] {
        try await store.read { db in try FeedRepository.feeds(db) }
    }

    /// Replaces the list by `urls` (checked already) in one write: kept URLs keep their entries
    /// and validators, new ones wait for their first fetch; `also` (the audit entry) runs in the
    /// same transaction.
    func replace(with urls: [String], also: (@Sendable (Database) throws -> Void)? = nil) async throws -> [FeedStatus] {
        try await store.write { db in
            try also?(db)
            let existing = Set(try db.query("SELECT url FROM company_feeds").compactMap { $0.string("url") })
            for url in existing.subtracting(urls) {
                try db.execute("DELETE FROM company_feeds WHERE url = ?", url)
            }
            let now = Timestamp.now().milliseconds
            for (position, url) in urls.enumerated() {
                try db.execute("""
                    INSERT INTO company_feeds (url, position, created_at) VALUES (?, ?, ?)
                    ON CONFLICT (url) DO UPDATE SET position = excluded.position
                    """, url, position, now)
            }
            return try FeedRepository.feeds(db)
        }
    }

    static func feeds(_ db: Database) throws -> [FeedStatus] {
        try db.query("""
            SELECT f.url, f.title, f.status, f.error, f.last_fetched_at, f.last_success_at,
                   (SELECT COUNT(*) FROM company_feed_entries e WHERE e.feed_id = f.id) AS entry_count
            FROM company_feeds f ORDER BY f.position, f.id
            """).map { row in
            FeedStatus(url: row.string("url") ?? "", title: row.string("title"), status: row.string("status") ?? "pending",
                       error: row.string("error"), lastFetchedAt: row.int64("last_fetched_at").map(Timestamp.init(milliseconds:)),
                       lastSuccessAt: row.int64("last_success_at").map(Timestamp.init(milliseconds:)),
                       entryCount: row.int("entry_count") ?? 0)
        }
    }

    // MARK: The fetcher

    /// The feeds to fetch, with the validators of their last good answer.
    func targets() async throws -> [FeedTarget] {
        try await store.read { db in
            try db.query("SELECT id, url, etag, last_modified FROM company_feeds ORDER BY position, id").map { row in
                FeedTarget(id: row.int64("id") ?? 0, url: row.string("url") ?? "", etag: row.string("etag"),
                           lastModified: row.string("last_modified"))
            }
        }
    }

    /// A 304: the entries stand; validators the answer renews replace the old ones.
    func recordNotModified(_ target: FeedTarget, etag: String?, lastModified: String?, at time: Timestamp) async throws {
        try await store.write { db in
            try db.execute("""
                UPDATE company_feeds SET status = 'ok', error = NULL, last_fetched_at = ?, last_success_at = ?,
                    etag = COALESCE(?, etag), last_modified = COALESCE(?, last_modified)
                WHERE id = ? AND url = ?
                """, time.milliseconds, time.milliseconds, etag, lastModified, target.id, target.url)
        }
    }

    /// A good answer: its entries replace the feed's, with its title and validators, in one
    /// write. Nothing happens when the URL was removed while it was being fetched.
    func recordSuccess(_ target: FeedTarget, feed: ParsedFeed, etag: String?, lastModified: String?, at time: Timestamp) async throws {
        try await store.write { db in
            try db.execute("""
                UPDATE company_feeds SET status = 'ok', error = NULL, title = ?, etag = ?, last_modified = ?,
                    last_fetched_at = ?, last_success_at = ?
                WHERE id = ? AND url = ?
                """, feed.title, etag, lastModified, time.milliseconds, time.milliseconds, target.id, target.url)
            guard db.changes == 1 else { return }
            try db.execute("DELETE FROM company_feed_entries WHERE feed_id = ?", target.id)
            for (position, entry) in feed.entries.enumerated() {
                try db.execute("""
                    INSERT INTO company_feed_entries (feed_id, entry_key, title, url, published_at, position)
                    VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (feed_id, entry_key) DO NOTHING
                    """, target.id, entry.key, entry.title, entry.url, entry.publishedAt?.milliseconds, position)
            }
        }
    }

    /// A failed fetch: the last good entries stay; the reason is kept for admins.
    func recordFailure(_ target: FeedTarget, reason: String, at time: Timestamp) async throws {
        try await store.write { db in
            try db.execute("UPDATE company_feeds SET status = 'error', error = ?, last_fetched_at = ? WHERE id = ? AND url = ?",
                           reason, time.milliseconds, target.id, target.url)
        }
    }

    // MARK: Everyone

    /// The newest `limit` entries across feeds: dated ones newest first, then undated ones in
    /// their feed's order.
    func latest(limit: Int) async throws -> [FeedItem] {
        try await store.read { db in
            try db.query("""
                SELECT e.title, e.url, e.published_at, f.title AS feed_title, f.url AS feed_url
                FROM company_feed_entries e JOIN company_feeds f ON f.id = e.feed_id
                ORDER BY e.published_at IS NULL, e.published_at DESC, f.position, e.position
                LIMIT ?
                """, limit).map { row in
                let feedURL = row.string("feed_url") ?? ""
                return FeedItem(title: row.string("title") ?? "", url: row.string("url"),
                                publishedAt: row.int64("published_at").map(Timestamp.init(milliseconds:)),
                                source: row.string("feed_title") ?? FeedRepository.host(of: feedURL))
            }
        }
    }

    /// The host of a feed URL, the source shown for a feed without a title.
    static func host(of url: String) -> String {
        (try? HTTPClientURL(url))?.host ?? url
    }
}
