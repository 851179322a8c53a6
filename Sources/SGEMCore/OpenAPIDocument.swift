import SGEMHTTP
import SGEMSupport

/// Builds the OpenAPI 3.0 document from what every module declared about its routes.
public enum OpenAPIDocument {
    public static let errorSchema: JSONValue = [
        "type": "object",
        "required": ["error"],
        "properties": [
            "error": [
                "type": "object",
                "required": ["code", "message"],
                "properties": [
                    "code": ["type": "string", "example": "not_found"],
                    "message": ["type": "string"],
                    "details": ["type": "object"],
                ],
            ],
        ],
    ]

    /// The document for `routes`: documented routes only, grouped by path, with path
    /// parameters, request bodies, responses and the shared error shape.
    public static func build(routes: [RouteInfo], title: String, version: String, description: String) -> JSONValue {
        var paths: [(String, [(String, JSONValue)])] = []
        for route in routes {
            guard let doc = route.doc, route.method != .HEAD else { continue }
            let pattern = route.pattern.replacingOccurrences(of: "*}", with: "}")
            var operation: [(String, JSONValue)] = [
                ("summary", .string(doc.summary)),
                ("operationId", .string(operationID(route.method, pattern))),
            ]
            if let description = doc.description { operation.append(("description", .string(description))) }
            if !doc.tags.isEmpty { operation.append(("tags", .array(doc.tags.map { .string($0) }))) }
            var params: [JSONValue] = parameterNames(pattern).map { name in
                ["name": .string(name), "in": "path", "required": true,
                 "schema": name == "id" || name.hasSuffix("Id") ? ["type": "integer"] : ["type": "string"]]
            }
            params += doc.query.map { q in
                ["name": .string(q.name), "in": "query", "required": false, "description": .string(q.description), "schema": q.schema]
            }
            if !params.isEmpty { operation.append(("parameters", .array(params))) }
            if let schema = doc.requestSchema {
                operation.append(("requestBody", [
                    "required": true,
                    "content": .object([(doc.requestContentType, JSONValue.object([("schema", schema)]))]),
                ]))
            }
            var responses: [(String, JSONValue)] = []
            for r in doc.responses {
                var entry: [(String, JSONValue)] = [("description", .string(r.description))]
                if let schema = r.schema { entry.append(("content", .object([(r.contentType, JSONValue.object([("schema", schema)]))]))) }
                responses.append((String(r.status), .object(entry)))
            }
            if responses.isEmpty { responses.append(("200", ["description": "OK"])) }
            responses.append(("default", [
                "description": "An error in the contract's shape",
                "content": ["application/json": ["schema": ["$ref": "#/components/schemas/Error"]]],
            ]))
            operation.append(("responses", .object(responses)))
            if doc.authenticated {
                operation.append(("security", .array([.object([("bearerAuth", .array([]))]), .object([("cookieAuth", .array([]))])])))
            }
            let method = route.method.rawValue.lowercased()
            if let i = paths.firstIndex(where: { $0.0 == pattern }) {
                paths[i].1.append((method, .object(operation)))
            } else {
                paths.append((pattern, [(method, .object(operation))]))
            }
        }
        return [
            "openapi": "3.0.3",
            "info": ["title": .string(title), "version": .string(version), "description": .string(description)],
            "paths": .object(paths.map { ($0.0, .object($0.1)) }),
            "components": [
                "schemas": ["Error": errorSchema],
                "securitySchemes": [
                    "bearerAuth": ["type": "http", "scheme": "bearer"],
                    "cookieAuth": ["type": "apiKey", "in": "cookie", "name": "sgem_session"],
                ],
            ],
        ]
    }

    static func parameterNames(_ pattern: String) -> [String] {
        var names: [String] = []
        var current: String?
        for ch in pattern {
            if ch == "{" { current = "" } else if ch == "}" { if let c = current { names.append(c) }; current = nil } else if current != nil { current!.append(ch) }
        }
        return names
    }

    static func operationID(_ method: HTTPMethod, _ pattern: String) -> String {
        var words = [method.rawValue.lowercased()]
        for part in pattern.split(separator: "/") where part != "api" && part != "v1" {
            let clean = part.filter { $0.isLetter || $0.isNumber }
            guard !clean.isEmpty else { continue }
            words.append(part.hasPrefix("{") ? "By" + clean.prefix(1).uppercased() + clean.dropFirst() : clean.prefix(1).uppercased() + clean.dropFirst())
        }
        return words.joined()
    }
}
