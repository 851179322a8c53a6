import SGEMSupport
import Synchronization

/// Seals and opens the secrets modules keep in the store (a provider's API key, a VAPID private
/// key) with the key in the secret key file, read — or made, when `creating` — the first time it
/// is needed, so that admin verbs that touch no secret never touch the file. Every process on one
/// database uses the same file, so every process seals with the same key.
public final class Secrets: Sendable {
    /// The secret key file (`--secret-key-file`, by default `DATA_DIR/secret.key`).
    public let keyFile: String
    private let creating: Bool
    private let loaded: Mutex<SecretBox?>

    /// Secrets under the key in `keyFile`; with `creating`, a missing file is made on first use.
    public init(keyFile: String, creating: Bool = true) {
        self.keyFile = keyFile
        self.creating = creating
        self.loaded = Mutex(nil)
    }

    /// Secrets under a key that lives in memory only (tests, and contexts built by hand).
    public static func ephemeral() -> Secrets {
        let secrets = Secrets(keyFile: "(in memory)", creating: false)
        secrets.loaded.withLock { $0 = SecretBox.ephemeral() }
        return secrets
    }

    /// Reads (or makes) the key now, so a start-up fails early with one line; true when it was
    /// made by this call.
    @discardableResult
    public func prepare() throws(SecretKeyFileError) -> Bool {
        var created = false
        _ = try box { created = $0 }
        return created
    }

    /// `value` sealed as `name` (a setting's key), for storing.
    public func seal(_ value: String, as name: String) throws -> String {
        guard let box = try box() else { throw SecretKeyFileError("no secret key file at \(keyFile)") }
        return try box.seal(value, as: name)
    }

    /// The clear value of what was stored as `name`: a sealed value opened, a value stored before
    /// secrets were sealed as it is; nil when it does not open (sealed under another key or name,
    /// altered, or no key file while not `creating`) — it must be entered again.
    public func open(_ stored: String, as name: String) throws(SecretKeyFileError) -> String? {
        guard SecretBox.isSealed(stored) else { return stored }
        guard let box = try box() else { return nil }
        return try? box.open(stored, as: name)
    }

    /// The box, loading the key file the first time; nil when there is none and not `creating`.
    private func box(created: (Bool) -> Void = { _ in }) throws(SecretKeyFileError) -> SecretBox? {
        try loaded.withLock { (box: inout SecretBox?) throws(SecretKeyFileError) -> SecretBox? in
            if let box { return box }
            if creating {
                let made = try SecretKeyFile.loadOrCreate(keyFile)
                created(made.created)
                box = made.box
            } else {
                box = try SecretKeyFile.load(keyFile)
            }
            return box
        }
    }
}
