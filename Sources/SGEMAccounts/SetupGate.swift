import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport
import Synchronization

/// The first-run setup token: 32 random bytes (base64url), one per database while no active
/// admin exists. Its SHA-256 checks a link; the token itself is kept sealed under the secret key
/// file, which every instance on one database shares, so every instance prints the same link and
/// any of them accepts it. It stays valid until the first admin is made (then the row goes), so a
/// restart prints the same link again instead of voiding the one already sent.
final class SetupGate: FirstRunSetup {
    /// The name the token is sealed under.
    static let sealedName = "accounts.setup_token"

    private let store: Store
    /// The token for the start-up line, handed out once.
    private let unshown: Mutex<String?>

    private init(store: Store, token: String?) {
        self.store = store
        unshown = Mutex(token)
    }

    /// The gate for a server starting now: while no active admin exists, the database's token (made
    /// here when there is none, or when it does not open under this key file); otherwise closed,
    /// and a token left from before removed.
    static func open(store: Store, secrets: Secrets, needed: Bool, clock: @escaping @Sendable () -> Timestamp,
                     logger: Logger) async throws -> SetupGate {
        guard needed else {
            if try await store.read({ db in try AccountsRepository.setupToken(in: db) }) != nil {
                try await store.write { db in try AccountsRepository.deleteSetupToken(in: db) }
            }
            return SetupGate(store: store, token: nil)
        }
        let fresh = Crypto.base64URL(Crypto.randomBytes(32))
        let sealed = try secrets.seal(fresh, as: sealedName)
        let hash = Crypto.hex(Crypto.sha256(Array(fresh.utf8)))
        let now = clock()
        // One write: of instances starting together, the first stores its token and the others read it.
        let stored = try await store.write { db in
            try AccountsRepository.insertSetupTokenIfNone(hash: hash, sealed: sealed, at: now, in: db)
        }
        if let token = try secrets.open(stored.sealed, as: sealedName),
           Crypto.hex(Crypto.sha256(Array(token.utf8))) == stored.hash {
            return SetupGate(store: store, token: token)
        }
        // Sealed under another key file: the instances do not share one (they must). A new link
        // replaces the old, which no instance here could print.
        logger.warning("the stored first-run setup link was sealed under another secret key file; a new one replaces it",
                       ["hint": "every instance on one database must use the same secret key file"])
        try await store.write { db in try AccountsRepository.replaceSetupToken(hash: hash, sealed: sealed, at: now, in: db) }
        return SetupGate(store: store, token: fresh)
    }

    func takeSetupToken() -> String? {
        unshown.withLock { token in
            defer { token = nil }
            return token
        }
    }

    /// Whether a token is still valid (setup may still be closed by an existing admin).
    func hasToken() async throws -> Bool {
        try await store.read { db in try AccountsRepository.setupToken(in: db) } != nil
    }

    /// Whether `token` is the setup token, compared in constant time.
    func matches(_ token: String) async throws -> Bool {
        guard let stored = try await store.read({ db in try AccountsRepository.setupToken(in: db) }) else { return false }
        let candidate = Array(Crypto.hex(Crypto.sha256(Array(token.utf8))).utf8)
        return Crypto.constantTimeEqual(Array(stored.hash.utf8), candidate)
    }

    /// Removes the token: after the first admin exists, setup is over (on every instance).
    func close() async throws {
        try await store.write { db in try AccountsRepository.deleteSetupToken(in: db) }
    }
}
