import SGEMHTTP
import SGEMStore
import SGEMSupport

/// A value admins change while the server runs (a translation provider, its URL, its key),
/// declared by the module that reads it and kept in the store. A secret is write-only: clients
/// learn whether it is set, never its value.
public struct RuntimeSetting: Sendable {
    /// `<module>.<name>`, e.g. `translation.api_key`.
    public let key: String
    public let secret: Bool
    /// What `value(_:)` returns while the setting is unset.
    public let defaultValue: String?
    public let help: String
    /// The problem with a proposed value in words, or nil when it is acceptable.
    public let check: (@Sendable (String) -> String?)?

    public init(_ key: String, secret: Bool = false, default defaultValue: String? = nil, _ help: String,
                check: (@Sendable (String) -> String?)? = nil) {
        self.key = key
        self.secret = secret
        self.defaultValue = defaultValue
        self.help = help
        self.check = check
    }
}

/// One runtime setting as clients may see it: secrets show only whether they are set.
public struct RuntimeSettingView: Sendable, Equatable {
    public let key: String
    public let secret: Bool
    /// The value (the default when unset); always nil for a secret.
    public let value: String?
    /// Whether a value was stored (as opposed to the default applying); false for a secret that
    /// does not open.
    public let isSet: Bool
    /// A secret stored sealed under another key (the key file missing or replaced since, or the
    /// value altered): it reads as unset and must be entered again.
    public let needsReentry: Bool

    public init(key: String, secret: Bool, value: String?, isSet: Bool, needsReentry: Bool = false) {
        self.key = key
        self.secret = secret
        self.value = value
        self.isSet = isSet
        self.needsReentry = needsReentry
    }

    /// `{"key":…, "secret":…, "value":…, "set":…, "needsReentry":…}`.
    public var json: JSONValue {
        ["key": .string(key), "secret": .bool(secret), "value": value.map(JSONValue.string) ?? .null, "set": .bool(isSet),
         "needsReentry": .bool(needsReentry)]
    }
}

/// The store-backed runtime settings of every module; published by the system module. Secrets
/// are stored sealed (`Secrets`); one that does not open reads as unset.
public protocol RuntimeSettings: Sendable {
    /// Every declared setting, in module order.
    var declared: [RuntimeSetting] { get }
    /// The current value, secrets included — for the declaring module's own use, never for
    /// clients; the default when unset. Throws `RuntimeSettingError` for an undeclared key.
    func value(_ key: String) async throws -> String?
    /// Stores `value` (nil clears it) inside the caller's write transaction, so a setting and
    /// what goes with it commit together. Throws `RuntimeSettingError` for an undeclared key or
    /// a value the setting's check refuses.
    func set(_ key: String, to value: String?, in db: Database) throws
    /// Stores `value` (nil clears it) in a write of its own.
    func set(_ key: String, to value: String?) async throws
    /// What clients may see of every declared setting.
    func views() async throws -> [RuntimeSettingView]
}

/// A refused runtime-settings call; reaches clients as 422 (or 404 for an unknown key).
public struct RuntimeSettingError: HTTPResponseError, CustomStringConvertible, Equatable {
    public let status: Int
    public let code: String
    public let message: String

    /// The key is not declared by any module.
    public static func unknown(_ key: String) -> RuntimeSettingError {
        RuntimeSettingError(status: 404, code: "unknown_setting", message: "no runtime setting named '\(key)'")
    }

    /// The value was refused by the setting's check.
    public static func invalid(_ key: String, _ problem: String) -> RuntimeSettingError {
        RuntimeSettingError(status: 422, code: "validation_failed", message: "\(key) \(problem)")
    }

    public var details: JSONValue? {
        guard status == 422, let space = message.firstIndex(of: " ") else { return nil }
        return ["fields": .object([(String(message[..<space]), .string(String(message[message.index(after: space)...])))])]
    }

    public var description: String { message }
}
