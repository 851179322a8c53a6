import SGEMSupport

/// Documentation of one possible response of a route, for the OpenAPI document.
public struct ResponseDoc: Sendable {
    public let status: Int
    public let description: String
    public let schema: JSONValue?
    public let contentType: String

    /// One documented response.
    public init(status: Int, description: String, schema: JSONValue? = nil, contentType: String = "application/json") {
        self.status = status
        self.description = description
        self.schema = schema
        self.contentType = contentType
    }
}

/// An optional query parameter of a route, for the OpenAPI document.
public struct QueryDoc: Sendable {
    public let name: String
    public let description: String
    public let schema: JSONValue

    /// One documented `?name=` parameter, always optional.
    public init(_ name: String, _ description: String, schema: JSONValue = ["type": "string"]) {
        self.name = name
        self.description = description
        self.schema = schema
    }
}

/// Documentation of a route, for the OpenAPI document.
public struct RouteDoc: Sendable {
    public let summary: String
    public let description: String?
    public let tags: [String]
    public let query: [QueryDoc]
    public let requestSchema: JSONValue?
    public let requestContentType: String
    public let responses: [ResponseDoc]
    public let authenticated: Bool

    /// Documentation for one route.
    public init(summary: String, description: String? = nil, tags: [String] = [], query: [QueryDoc] = [],
                requestSchema: JSONValue? = nil, requestContentType: String = "application/json", responses: [ResponseDoc] = [],
                authenticated: Bool = false) {
        self.summary = summary
        self.description = description
        self.tags = tags
        self.query = query
        self.requestSchema = requestSchema
        self.requestContentType = requestContentType
        self.responses = responses
        self.authenticated = authenticated
    }
}

/// A registered route as listed by `Router.routes`.
public struct RouteInfo: Sendable {
    public let method: HTTPMethod
    public let pattern: String
    public let doc: RouteDoc?
    public let maxBodyBytes: Int
}
