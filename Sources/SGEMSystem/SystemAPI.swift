import SGEMSupport

/// The OpenAPI schemas of the system and benchmark answers (each checked against its
/// `Encodable` view by `ViewSchemaTests`).
enum SystemAPI {
    /// `StatusView`.
    static let statusSchema: JSONValue = ["type": "object", "properties": ["status": ["type": "string"]]]

    /// `StoredIDView`.
    static let storedIDSchema: JSONValue = ["type": "object", "properties": ["id": ["type": "integer"]]]
}
