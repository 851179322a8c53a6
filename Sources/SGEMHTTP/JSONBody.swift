import SGEMSupport

/// A JSON object request body read field by field, collecting one problem per invalid field so
/// that a 422 lists them all. Unlike `Codable`, it tells an absent field from an explicit null.
public struct JSONBody {
    public let fields: [String: JSONValue]
    public private(set) var problems: [String: String] = [:]

    /// Reads `request`'s body; 415 `unsupported_media_type` unless it is declared
    /// `application/json` (see `Request.checkJSONMediaType`), 400 `invalid_json` unless it is a JSON object.
    public init(_ request: Request) throws {
        try request.checkJSONMediaType()
        guard let value = try? JSONValue.parse(request.body) else { throw APIError.invalidJSON("the request body is not valid JSON") }
        guard let pairs = value.objectValue else { throw APIError.invalidJSON("the request body must be a JSON object") }
        var fields: [String: JSONValue] = [:]
        for (k, v) in pairs { fields[k] = v }
        self.fields = fields
    }

    public func has(_ key: String) -> Bool { fields[key] != nil }

    public mutating func problem(_ key: String, _ message: String) {
        if problems[key] == nil { problems[key] = message }
    }

    /// A string field; nil when absent or null (a problem when `required`), a problem when not a string.
    public mutating func string(_ key: String, required: Bool = false) -> String? {
        switch fields[key] {
        case let .string(s)?: return s
        case nil, .null?:
            if required { problem(key, "is required") }
            return nil
        default:
            problem(key, "must be a string")
            return nil
        }
    }

    /// A string field that may be null: `.none` when absent, `.some(nil)` for null.
    public mutating func nullableString(_ key: String) -> String?? {
        switch fields[key] {
        case nil: return .none
        case .null?: return .some(nil)
        case let .string(s)?: return .some(s)
        default:
            problem(key, "must be a string or null")
            return .none
        }
    }

    public mutating func bool(_ key: String) -> Bool? {
        switch fields[key] {
        case nil: return nil
        case let .bool(b)?: return b
        default:
            problem(key, "must be true or false")
            return nil
        }
    }

    /// 422 `validation_failed` when any field had a problem.
    public func check() throws {
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
    }
}
