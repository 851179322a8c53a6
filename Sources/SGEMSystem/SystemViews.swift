import SGEMSupport

// What the system API answers, as `Encodable` values. Their OpenAPI schemas are in
// `SystemAPI.swift`, and `ViewSchemaTests` checks that the two agree.

/// `{status}`: `ok` from liveness, `ready` from readiness.
struct StatusView: Encodable, Sendable {
    let status: String
}

/// `{id}`: the row or event a benchmark request stored.
struct StoredIDView: Encodable, Sendable {
    let id: Int64
}

/// `{count}`: the rows the write benchmark stored.
struct CountView: Encodable, Sendable {
    let count: Int64
}
