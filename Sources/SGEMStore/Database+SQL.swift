/// Statements written as `SQL` values, rendered in the dialect of the store's backend.
extension Database {
    /// The dialect this connection renders `SQL` with.
    public var dialect: SQLDialect { connection.dialect }

    /// Runs one statement.
    public func run(_ sql: SQL) throws {
        let (text, bindings) = sql.render(connection.dialect)
        try connection.execute(text, bindings)
    }

    /// Runs a query and returns every row.
    public func fetchAll(_ sql: SQL) throws -> [Row] {
        let (text, bindings) = sql.render(connection.dialect)
        return try connection.query(text, bindings)
    }

    /// The first row of a query, or nil when there is none.
    public func fetchOne(_ sql: SQL) throws -> Row? {
        try fetchAll(sql).first
    }
}

/// How the statements of a `planned` block are planned, where a backend can be told.
public struct PlannerHints: OptionSet, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Planned for the values at hand every time, never with a prepared statement's generic plan
    /// (PostgreSQL's `plan_cache_mode = force_custom_plan`).
    public static let valuesAtHand = PlannerHints(rawValue: 1)
    /// Rows found through an index's bitmap only: no walk of a key index, no scan of the table
    /// (PostgreSQL's `enable_indexscan` and `enable_seqscan` off). For counting matches in a
    /// full-text index, which a walk would visit row by row.
    public static let bitmapOnly = PlannerHints(rawValue: 2)
    /// Rows found by walking an index, never through a bitmap (PostgreSQL's `enable_bitmapscan`
    /// off): for a walk bounded by a key range, where building the bitmap of a common word's
    /// every match would cost more than the walk.
    public static let noBitmap = PlannerHints(rawValue: 4)
}

extension Database {
    /// Runs `body` with its statements planned as `hints` say, inside the current transaction;
    /// the planner's defaults are back when it returns. SQLite plans each statement for its
    /// values and has no such switches: there `body` simply runs.
    public func planned<T>(_ hints: PlannerHints, _ body: () throws -> T) throws -> T {
        guard dialect == .postgresql, !hints.isEmpty else { return try body() }
        // Sent in the pipeline with the statement they govern: no round trip of their own.
        var settings: [String] = []
        if hints.contains(.valuesAtHand) { settings.append("plan_cache_mode") }
        if hints.contains(.bitmapOnly) { settings += ["enable_indexscan", "enable_seqscan"] }
        if hints.contains(.noBitmap) { settings.append("enable_bitmapscan") }
        for setting in settings {
            try connection.execute(setting == "plan_cache_mode" ? "SET LOCAL plan_cache_mode = force_custom_plan" : "SET LOCAL \(setting) = off", [])
        }
        let value = try body()
        for setting in settings { try connection.execute("SET LOCAL \(setting) TO DEFAULT", []) }
        return value
    }
}
