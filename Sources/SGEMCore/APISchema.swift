import SGEMHTTP
import SGEMSupport

/// Small builders for the OpenAPI schemas modules attach to their routes.
public enum APISchema {
    public static let string: JSONValue = ["type": "string"]
    public static let integer: JSONValue = ["type": "integer"]
    public static let number: JSONValue = ["type": "number"]
    public static let boolean: JSONValue = ["type": "boolean"]
    public static let dateTime: JSONValue = ["type": "string", "format": "date-time"]
    public static let date: JSONValue = ["type": "string", "format": "date", "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"]

    /// `{"type": "object", "properties": …, "required": …}`.
    public static func object(_ properties: KeyValuePairs<String, JSONValue>, required: [String] = [],
                              additionalProperties: Bool? = nil) -> JSONValue {
        var o: [(String, JSONValue)] = [("type", "object"), ("properties", .object(properties.map { ($0.key, $0.value) }))]
        if !required.isEmpty { o.append(("required", .array(required.map(JSONValue.string)))) }
        if let additionalProperties { o.append(("additionalProperties", .bool(additionalProperties))) }
        return .object(o)
    }

    /// `schema` that may also be null.
    public static func nullable(_ schema: JSONValue) -> JSONValue {
        .object((schema.objectValue ?? []) + [("nullable", true)])
    }

    /// `{"type": "array", "items": items}`.
    public static func array(_ items: JSONValue) -> JSONValue { ["type": "array", "items": items] }

    /// A documented error answer in the contract's shape.
    public static func error(_ status: Int, _ description: String) -> ResponseDoc {
        ResponseDoc(status: status, description: description, schema: ["$ref": "#/components/schemas/Error"])
    }
}
