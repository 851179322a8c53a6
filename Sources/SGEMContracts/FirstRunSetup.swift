import SGEMCore
/// The one-time first-run setup token, published by the accounts module while no active admin
/// exists, so the server can print `http://HOST:PORT/setup#token=TOKEN` when it starts.
public protocol FirstRunSetup: Sendable {
    /// The token, once: later calls return nil (only its digest is kept). Nil when setup is closed.
    func takeSetupToken() -> String?
}
