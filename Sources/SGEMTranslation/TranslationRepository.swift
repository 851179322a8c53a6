import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the translation module's SQL: the cache of translations and who reads which chat in
/// which language.
enum TranslationRepository {
    static func registerMigrations(_ migrations: inout MigrationList) {
        // key: hex SHA-256 of provider, source ("auto" when detected), target and text; text_key:
        // hex SHA-256 of provider and text, so a text whose language one call detected needs no
        // call for that language. A row whose source equals its target records "already in that
        // language" (translated is the text itself).
        migrations.add("translation.001_cache", sql: """
            CREATE TABLE translation_cache (
                key TEXT PRIMARY KEY,
                text_key TEXT NOT NULL,
                provider TEXT NOT NULL,
                target TEXT NOT NULL,
                source TEXT NOT NULL,
                translated TEXT NOT NULL,
                bytes INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                used_at INTEGER NOT NULL
            );
            CREATE INDEX translation_cache_text ON translation_cache (text_key);
            CREATE INDEX translation_cache_used ON translation_cache (used_at);
            CREATE TABLE translation_chat_readers (
                chat_id INTEGER NOT NULL,
                user_id INTEGER NOT NULL,
                target TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                PRIMARY KEY (chat_id, user_id)
            );
            """)
    }

    /// One cached translation.
    struct Entry: Sendable, Equatable {
        var source: String
        var translated: String
    }

    // MARK: Cache

    static func cached(_ key: String, in db: Database) throws -> Entry? {
        guard let row = try db.queryOne("SELECT source, translated FROM translation_cache WHERE key = ?", key),
              let source = row.string(at: 0), let translated = row.string(at: 1) else { return nil }
        return Entry(source: source, translated: translated)
    }

    /// The entries of `keys` that are cached, in one statement per 500 keys.
    static func cached(_ keys: [String], in db: Database) throws -> [String: Entry] {
        var out: [String: Entry] = [:]
        for start in stride(from: 0, to: keys.count, by: 500) {
            let chunk = Array(keys[start..<min(start + 500, keys.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try db.query("SELECT key, source, translated FROM translation_cache WHERE key IN (\(marks))", bindings: chunk) {
                guard let key = row.string(at: 0), let source = row.string(at: 1), let translated = row.string(at: 2) else { continue }
                out[key] = Entry(source: source, translated: translated)
            }
        }
        return out
    }

    /// The language a provider detected for this text before, if any call did.
    static func knownSource(textKey: String, in db: Database) throws -> String? {
        try db.queryOne("SELECT source FROM translation_cache WHERE text_key = ? LIMIT 1", textKey)?.string(at: 0)
    }

    /// The detected language of each of `textKeys` that some call detected, in one statement per 500.
    static func knownSources(_ textKeys: [String], in db: Database) throws -> [String: String] {
        var out: [String: String] = [:]
        for start in stride(from: 0, to: textKeys.count, by: 500) {
            let chunk = Array(textKeys[start..<min(start + 500, textKeys.count)])
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try db.query("SELECT text_key, source FROM translation_cache WHERE text_key IN (\(marks))", bindings: chunk) {
                guard let key = row.string(at: 0), let source = row.string(at: 1) else { continue }
                out[key] = source
            }
        }
        return out
    }

    static func store(key: String, textKey: String, provider: String, target: String, entry: Entry, at time: Timestamp,
                      in db: Database) throws {
        let bytes = entry.translated.utf8.count + 160
        try db.execute("""
            INSERT INTO translation_cache (key, text_key, provider, target, source, translated, bytes, created_at, used_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (key) DO UPDATE SET source = excluded.source, translated = excluded.translated,
                bytes = excluded.bytes, used_at = excluded.used_at
            """, key, textKey, provider, target, entry.source, entry.translated, bytes, time, time)
    }

    static func touch(_ key: String, at time: Timestamp, in db: Database) throws {
        try db.execute("UPDATE translation_cache SET used_at = ? WHERE key = ?", time, key)
    }

    /// How many entries and bytes the cache holds.
    static func size(in db: Database) throws -> (entries: Int, bytes: Int) {
        let row = try db.queryOne("SELECT COUNT(*), COALESCE(SUM(bytes), 0) FROM translation_cache")
        return (Int(row?.int64(at: 0) ?? 0), Int(row?.int64(at: 1) ?? 0))
    }

    /// Removes up to `limit` of the least recently used entries; returns how many.
    static func evictOldest(_ limit: Int, in db: Database) throws -> Int {
        try db.execute("""
            DELETE FROM translation_cache WHERE key IN (SELECT key FROM translation_cache ORDER BY used_at LIMIT ?)
            """, limit)
        return db.changes
    }

    static func clearCache(in db: Database) throws {
        try db.execute("DELETE FROM translation_cache")
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

    /// Forgets the readers of `chat` among `users` (they left it).
    static func removeReaders(chat: Int64, users: [Int64], in db: Database) throws {
        for user in users { try db.execute("DELETE FROM translation_chat_readers WHERE chat_id = ? AND user_id = ?", chat, user) }
    }
}
