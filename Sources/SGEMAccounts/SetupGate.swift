import SGEMCore
import SGEMSupport
import Synchronization

/// The first-run setup token: 32 random bytes (base64url) made at boot while no active admin
/// exists. Only its SHA-256 digest is kept, in memory: a restart makes a new one, and a used one
/// is forgotten at once.
final class SetupGate: FirstRunSetup {
    private struct State {
        var digest: [UInt8]?
        var unshown: String?
    }
    private let state: Mutex<State>

    /// An open gate with a fresh token when `open`, else a closed one.
    init(open: Bool) {
        guard open else {
            state = Mutex(State())
            return
        }
        let token = Crypto.base64URL(Crypto.randomBytes(32))
        state = Mutex(State(digest: Crypto.sha256(Array(token.utf8)), unshown: token))
    }

    func takeSetupToken() -> String? {
        state.withLock { s in
            defer { s.unshown = nil }
            return s.digest == nil ? nil : s.unshown
        }
    }

    /// Whether a token is still valid (setup may still be closed by an existing admin).
    var hasToken: Bool { state.withLock { $0.digest != nil } }

    /// Whether `token` is the setup token, compared in constant time.
    func matches(_ token: String) -> Bool {
        let candidate = Crypto.sha256(Array(token.utf8))
        return state.withLock { s in s.digest.map { Crypto.constantTimeEqual($0, candidate) } ?? false }
    }

    /// Kills the token: after the first admin exists, setup is over.
    func close() { state.withLock { $0 = State() } }
}
