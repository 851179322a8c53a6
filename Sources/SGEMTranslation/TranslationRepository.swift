import SGEMCore
import SGEMStore
import SGEMSupport

/// A cache key: the 32 bytes of a SHA-256 digest.
typealias CacheKey = [UInt8]

/// All of the translation module's SQL: the cache of translations and who reads which chat in
/// which language.
enum TranslationRepository {
    static func registerMigrations(_ migrations: inout MigrationList) {
        // key: SHA-256 of provider, source ("auto" when detected), target and text. A row whose
        // source equals its target records "already in that language" (translated is the text).
        // translation_sources: the language a provider detected for a text (SHA-256 of provider
        // and text), one row per text, so a text known to be in a language is never sent to be
        // translated into it. Keys are the 32 digest bytes: every message translated into five
        // languages writes five cache rows and one source row, so their size is the cache's cost.
        migrations.add("translation.001_cache", sqlite: """
            CREATE TABLE translation_cache (
                key BLOB PRIMARY KEY,
                target TEXT NOT NULL,
                source TEXT NOT NULL,
                translated TEXT NOT NULL,
                bytes INTEGER NOT NULL,
                used_at INTEGER NOT NULL
            );
            CREATE INDEX translation_cache_used ON translation_cache (used_at);
            CREATE TABLE translation_sources (
                text_key BLOB PRIMARY KEY,
                source TEXT NOT NULL,
                used_at INTEGER NOT NULL
            );
            CREATE TABLE translation_chat_readers (
                chat_id INTEGER NOT NULL,
                user_id INTEGER NOT NULL,
                target TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (chat_id, user_id)
            );
            """, postgresql: """
            CREATE TABLE translation_cache (
                key BYTEA PRIMARY KEY,
                target TEXT NOT NULL,
                source TEXT NOT NULL,
                translated TEXT NOT NULL,
                bytes BIGINT NOT NULL,
                used_at BIGINT NOT NULL
            );
            CREATE INDEX translation_cache_used ON translation_cache (used_at);
            CREATE TABLE translation_sources (
                text_key BYTEA PRIMARY KEY,
                source TEXT NOT NULL,
                used_at BIGINT NOT NULL
            );
            CREATE TABLE translation_chat_readers (
                chat_id BIGINT NOT NULL,
                user_id BIGINT NOT NULL,
                target TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                PRIMARY KEY (chat_id, user_id)
            );
            """)
        // Each person's translation allowance (a token bucket), shared by every instance on one
        // database so N instances do not allow N times the requests.
        migrations.add("translation.002_shared_rate_limit", sqlite: """
            CREATE TABLE translation_allowance (
                user_id INTEGER PRIMARY KEY,
                tokens REAL NOT NULL,
                at INTEGER NOT NULL
            );
            """, postgresql: """
            CREATE TABLE translation_allowance (
                user_id BIGINT PRIMARY KEY,
                tokens DOUBLE PRECISION NOT NULL,
                at BIGINT NOT NULL
            );
            """)
        // The last journal event the leading chat translator has turned into translations: an
        // instance that takes over goes on from there (`ChatTranslator.resumePoint`).
        migrations.add("translation.003_chat_cursor", sqlite: """
            CREATE TABLE translation_chat_cursor (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                event_id INTEGER NOT NULL
            );
            INSERT INTO translation_chat_cursor (id, event_id) VALUES (1, 0);
            """, postgresql: """
            CREATE TABLE translation_chat_cursor (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                event_id BIGINT NOT NULL
            );
            INSERT INTO translation_chat_cursor (id, event_id) VALUES (1, 0);
            """)
    }

    // MARK: The chat translator's cursor

    /// The stored cursor; 0 when no leader ever stored one.
    static func chatCursor(in db: Database) throws -> Int64 {
        try db.fetchOne("SELECT event_id FROM translation_chat_cursor WHERE id = 1")?.int64(at: 0) ?? 0
    }

    /// Moves the stored cursor forward to `eventID` (never back).
    static func advanceChatCursor(to eventID: Int64, in db: Database) throws {
        try db.run("UPDATE translation_chat_cursor SET event_id = \(eventID) WHERE id = 1 AND event_id < \(eventID)")
    }

    // MARK: Allowance

    /// `user`'s bucket: tokens left and when they were counted (epoch milliseconds).
    static func allowance(of user: Int64, in db: Database) throws -> (tokens: Double, at: Int64)? {
        guard let row = try db.fetchOne("SELECT tokens, at FROM translation_allowance WHERE user_id = \(user)"),
              let tokens = row.double(at: 0), let at = row.int64(at: 1) else { return nil }
        return (tokens, at)
    }

    static func setAllowance(of user: Int64, tokens: Double, at: Int64, in db: Database) throws {
        try db.run("""
            INSERT INTO translation_allowance (user_id, tokens, at) VALUES (\(user), \(tokens), \(at))
            ON CONFLICT (user_id) DO UPDATE SET tokens = excluded.tokens, at = excluded.at
            """)
    }

    /// One cached translation.
    struct Entry: Sendable, Equatable {
        var source: String
        var translated: String
    }

    // MARK: Cache

    static func cached(_ key: CacheKey, in db: Database) throws -> Entry? {
        guard let row = try db.queryOne("SELECT source, translated FROM translation_cache WHERE key = ?", key),
              let source = row.string(at: 0), let translated = row.string(at: 1) else { return nil }
        return Entry(source: source, translated: translated)
    }

    /// The entries of `keys` that are cached, in one statement per 500 keys.
    static func cached(_ keys: [CacheKey], in db: Database) throws -> [CacheKey: Entry] {
        var out: [CacheKey: Entry] = [:]
        for chunk in chunks(keys) {
            for row in try db.fetchAll("SELECT key, source, translated FROM translation_cache WHERE key IN \(list: chunk)") {
                guard let key = row.blob("key"), let source = row.string(at: 1), let translated = row.string(at: 2) else { continue }
                out[key] = Entry(source: source, translated: translated)
            }
        }
        return out
    }

    /// The language a provider detected for this text before, if any call did.
    static func knownSource(textKey: CacheKey, in db: Database) throws -> String? {
        try db.queryOne("SELECT source FROM translation_sources WHERE text_key = ?", textKey)?.string(at: 0)
    }

    /// The detected language of each of `textKeys` that some call detected.
    static func knownSources(_ textKeys: [CacheKey], in db: Database) throws -> [CacheKey: String] {
        var out: [CacheKey: String] = [:]
        for chunk in chunks(textKeys) {
            for row in try db.fetchAll("SELECT text_key, source FROM translation_sources WHERE text_key IN \(list: chunk)") {
                guard let key = row.blob("text_key"), let source = row.string(at: 1) else { continue }
                out[key] = source
            }
        }
        return out
    }

    /// `keys` 500 at a time: statements stay small whatever a page of history asks.
    private static func chunks(_ keys: [CacheKey]) -> [[CacheKey]] {
        stride(from: 0, to: keys.count, by: 500).map { Array(keys[$0..<min($0 + 500, keys.count)]) }
    }

    /// Stores a translation; with `textKey`, also the language detected for its text.
    static func store(key: CacheKey, target: String, entry: Entry, textKey: CacheKey?, at time: Timestamp, in db: Database) throws {
        try db.execute("""
            INSERT INTO translation_cache (key, target, source, translated, bytes, used_at) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (key) DO UPDATE SET source = excluded.source, translated = excluded.translated,
                bytes = excluded.bytes, used_at = excluded.used_at
            """, key, target, entry.source, entry.translated, entry.translated.utf8.count + 96, time)
        if let textKey {
            try db.execute("""
                INSERT INTO translation_sources (text_key, source, used_at) VALUES (?, ?, ?)
                ON CONFLICT (text_key) DO UPDATE SET source = excluded.source, used_at = excluded.used_at
                """, textKey, entry.source, time)
        }
    }

    static func touch(_ key: CacheKey, at time: Timestamp, in db: Database) throws {
        try db.execute("UPDATE translation_cache SET used_at = ? WHERE key = ?", time, key)
    }

    /// How many entries and bytes the cache holds.
    static func size(in db: Database) throws -> (entries: Int, bytes: Int) {
        let row = try db.queryOne("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM translation_cache")
        return (Int(row?.int64(at: 0) ?? 0), Int(row?.int64(at: 1) ?? 0))
    }

    /// Removes up to `limit` of the least recently used entries, and the detected languages of
    /// texts not used since the oldest entry kept; returns how many entries went.
    static func evictOldest(_ limit: Int, in db: Database) throws -> Int {
        try db.execute("""
            DELETE FROM translation_cache WHERE key IN (SELECT key FROM translation_cache ORDER BY used_at LIMIT ?)
            """, limit)
        let removed = try db.changes
        try db.execute("""
            DELETE FROM translation_sources WHERE used_at < COALESCE((SELECT MIN(used_at) FROM translation_cache), 9223372036854775807)
            """)
        return removed
    }

    // MARK: Chat readers

    static func setReader(chat: Int64, user: Int64, target: String?, at time: Timestamp, in db: Database) throws {
        if let target {
            try db.execute("""
                INSERT INTO translation_chat_readers (chat_id, user_id, target, created_at) VALUES (?, ?, ?, ?)
                ON CONFLICT (chat_id, user_id) DO UPDATE SET target = excluded.target
                """, chat, user, target, time)
        } else {
            try db.execute("DELETE FROM translation_chat_readers WHERE chat_id = ? AND user_id = ?", chat, user)
        }
    }

    /// Every reader of every chat in translation mode: (chat, user, target).
    static func readers(in db: Database) throws -> [(chat: Int64, user: Int64, target: String)] {
        try db.query("SELECT chat_id, user_id, target FROM translation_chat_readers").compactMap { row in
            guard let chat = row.int64(at: 0), let user = row.int64(at: 1), let target = row.string(at: 2) else { return nil }
            return (chat, user, target)
        }
    }
}
