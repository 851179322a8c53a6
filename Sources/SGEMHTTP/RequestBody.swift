/// A request body of the API, read once from the request: every field's problem is collected in
/// the `JSONBody`, then answered together as 422 `validation_failed` naming them all (fields the
/// type does not know are ignored). Every module's typed bodies that need nothing but the request
/// conform to it.
public protocol RequestBody {
    /// Reads the fields from `body`, recording a problem for each bad one (then any value will do:
    /// the body is refused before it is used).
    init(reading body: inout JSONBody)
}

extension RequestBody {
    /// 415 `unsupported_media_type` unless declared JSON, 400 `invalid_json` unless a JSON object,
    /// 422 `validation_failed` for bad fields.
    public init(_ request: Request) throws {
        var body = try JSONBody(request)
        self.init(reading: &body)
        try body.check()
    }
}
