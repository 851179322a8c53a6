import SGEMStore

extension AccountsRepository {
    /// The accounts schema, append-only: a released migration is never edited. `through` stops
    /// after the named migration (tests build a database as an older release left it).
    static func registerMigrations(_ migrations: inout MigrationList, through last: String? = nil) {
        migrations.add("accounts.001_users", sql: """
            CREATE TABLE accounts_users (
                id INTEGER PRIMARY KEY,
                username TEXT NOT NULL UNIQUE,
                email TEXT NOT NULL,
                email_lower TEXT NOT NULL UNIQUE,
                password_hash TEXT NOT NULL,
                role TEXT NOT NULL CHECK (role IN ('admin', 'employee')),
                active INTEGER NOT NULL DEFAULT 1,
                display_name TEXT NOT NULL,
                name_key TEXT NOT NULL,
                position TEXT, phone TEXT, twitter TEXT, linkedin TEXT, bio TEXT, status TEXT, country TEXT,
                language TEXT NOT NULL DEFAULT 'en',
                notifications_enabled INTEGER NOT NULL DEFAULT 1,
                avatar_version INTEGER,
                avatar_counter INTEGER NOT NULL DEFAULT 0,
                created_at TEXT NOT NULL,
                last_login_at TEXT
            );
            CREATE INDEX accounts_users_by_name ON accounts_users (name_key, username);
            CREATE TABLE accounts_sessions (
                id INTEGER PRIMARY KEY,
                user_id INTEGER NOT NULL REFERENCES accounts_users (id) ON DELETE CASCADE,
                token_digest TEXT NOT NULL UNIQUE,
                csrf_digest TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_used_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                ip TEXT,
                user_agent TEXT
            );
            CREATE INDEX accounts_sessions_by_user ON accounts_sessions (user_id);
            CREATE TABLE accounts_avatars (
                user_id INTEGER PRIMARY KEY REFERENCES accounts_users (id) ON DELETE CASCADE,
                content_type TEXT NOT NULL,
                data BLOB NOT NULL,
                version INTEGER NOT NULL,
                etag TEXT NOT NULL
            );
            CREATE TABLE accounts_audit (
                id INTEGER PRIMARY KEY,
                at TEXT NOT NULL,
                event TEXT NOT NULL,
                actor_id INTEGER,
                target_id INTEGER,
                login TEXT,
                ip TEXT,
                detail TEXT
            );
            """)
        if last == "accounts.001_users" { return }
        // One timestamp form across the module: INTEGER epoch milliseconds. Users' and audit times
        // were RFC 3339 TEXT, sessions' INTEGER seconds. A TEXT-affinity column would turn
        // integers back into text, so new INTEGER columns take the converted values, the old ones
        // are dropped and the new ones renamed (SQLite 3.35+). Their `DEFAULT 0` only satisfies
        // ADD COLUMN's rule for NOT NULL; every insert gives a value.
        migrations.add("accounts.002_integer_timestamps") { db in
            try db.executeScript("""
                ALTER TABLE accounts_users ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
                ALTER TABLE accounts_users ADD COLUMN last_login_at_ms INTEGER;
                ALTER TABLE accounts_audit ADD COLUMN at_ms INTEGER NOT NULL DEFAULT 0;
                """)
            for row in try db.query("SELECT id, created_at, last_login_at FROM accounts_users") {
                try db.execute("UPDATE accounts_users SET created_at_ms = ?, last_login_at_ms = ? WHERE id = ?",
                               row.timestamp("created_at")?.milliseconds ?? 0, row.timestamp("last_login_at")?.milliseconds, row.int64("id"))
            }
            for row in try db.query("SELECT id, at FROM accounts_audit") {
                try db.execute("UPDATE accounts_audit SET at_ms = ? WHERE id = ?", row.timestamp("at")?.milliseconds ?? 0, row.int64("id"))
            }
            try db.executeScript("""
                ALTER TABLE accounts_users DROP COLUMN created_at;
                ALTER TABLE accounts_users DROP COLUMN last_login_at;
                ALTER TABLE accounts_users RENAME COLUMN created_at_ms TO created_at;
                ALTER TABLE accounts_users RENAME COLUMN last_login_at_ms TO last_login_at;
                ALTER TABLE accounts_audit DROP COLUMN at;
                ALTER TABLE accounts_audit RENAME COLUMN at_ms TO at;
                UPDATE accounts_sessions SET created_at = created_at * 1000, last_used_at = last_used_at * 1000,
                                             expires_at = expires_at * 1000;
                CREATE INDEX accounts_sessions_by_expiry ON accounts_sessions (expires_at);
                """)
        }
        if last == "accounts.002_integer_timestamps" { return }
        // The directory matches and sorts ignoring case and accents: `name_key` becomes the
        // folded display name (it was only lowercased), and `accounts_user_words` holds every
        // folded word a user is found by (name and position words, username, email), so a search
        // is an index range per query word instead of a scan. Both are computed in Swift
        // (`SearchKey`), here for existing rows and at every write. The counts read an index.
        migrations.add("accounts.003_folded_search_keys") { db in
            try db.executeScript("""
                CREATE TABLE accounts_user_words (
                    word TEXT NOT NULL,
                    user_id INTEGER NOT NULL REFERENCES accounts_users (id) ON DELETE CASCADE,
                    PRIMARY KEY (word, user_id)
                ) WITHOUT ROWID;
                CREATE INDEX accounts_user_words_by_user ON accounts_user_words (user_id);
                CREATE INDEX accounts_users_by_active ON accounts_users (active);
                """)
            let repository = AccountsRepository()
            for row in try db.query("SELECT id, display_name FROM accounts_users") {
                guard let id = row.int64("id") else { continue }
                try db.execute("UPDATE accounts_users SET name_key = ? WHERE id = ?", SearchKey.fold(row.string("display_name") ?? ""), id)
                try repository.refreshSearchWords(db, userID: id)
            }
            // The audit log's filters: one event name, or one user as actor or target, newest first.
            try db.executeScript("""
                CREATE INDEX accounts_audit_by_event ON accounts_audit (event, id);
                CREATE INDEX accounts_audit_by_actor ON accounts_audit (actor_id, id);
                CREATE INDEX accounts_audit_by_target ON accounts_audit (target_id, id);
                """)
        }
        if last == "accounts.003_folded_search_keys" { return }
        // A generated or reset password is not the person's own: `must_change_password` holds every
        // other endpoint back until they choose one. `language_chosen` is 0 while the account
        // follows the company's default language (none of its own yet), so the console can adopt
        // the browser's at the first login; accounts that exist already keep theirs (1).
        migrations.add("accounts.004_first_password_and_language", sql: """
            ALTER TABLE accounts_users ADD COLUMN must_change_password INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE accounts_users ADD COLUMN language_chosen INTEGER NOT NULL DEFAULT 1;
            """)
        if last == "accounts.004_first_password_and_language" { return }
        // Invitations: a link carries a random token; only its SHA-256 is stored, so the table
        // gives no usable link away. `uses` grows by one per account made with it, never past
        // `max_uses` (a conditional UPDATE in the registration's transaction).
        migrations.add("accounts.005_invites", sql: """
            CREATE TABLE accounts_invites (
                id INTEGER PRIMARY KEY,
                token_hash TEXT NOT NULL UNIQUE,
                role TEXT NOT NULL CHECK (role IN ('admin', 'employee')),
                expires_at INTEGER NOT NULL,
                max_uses INTEGER NOT NULL CHECK (max_uses >= 1),
                uses INTEGER NOT NULL DEFAULT 0 CHECK (uses >= 0 AND uses <= max_uses),
                note TEXT,
                created_by INTEGER REFERENCES accounts_users (id) ON DELETE SET NULL,
                created_at INTEGER NOT NULL,
                revoked_at INTEGER
            );
            CREATE INDEX accounts_invites_by_expiry ON accounts_invites (expires_at);
            """)
    }
}
