#if canImport(Glibc)
import Glibc
#endif
import CLibPQ
import SGEMSupport

/// A message delivered by PostgreSQL's `NOTIFY` to a connection that ran `LISTEN`.
public struct PostgresNotification: Sendable, Equatable {
    /// The channel it was sent on.
    public let channel: String
    /// The payload text ("" when none).
    public let payload: String
    /// The server process that sent it.
    public let senderPID: Int32

    public init(channel: String, payload: String, senderPID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderPID = senderPID
    }
}

/// One libpq connection to PostgreSQL. Calls block (like `sqlite3_step`): run them on a dedicated
/// thread, never on Swift's cooperative pool. Not Sendable: one owner at a time uses it.
///
/// Values are the store's backend-neutral `SQLValue`s (booleans read back as 0/1 integers, as on
/// SQLite); errors are `StoreError`s with the SQLSTATE and a backend-neutral `category`.
/// The password in the URL never appears in an error or a description.
public final class PostgresConnection {
    /// The server's libpq handle (`PGconn *`); freed in `deinit`.
    var handle: OpaquePointer
    /// The handle, for the notification extension in its own file.
    var handleForNotifications: OpaquePointer { handle }
    /// Where it connects; `description` masks the password.
    public let url: PostgresURL

    /// The `application_name` sgem's sessions carry unless the URL sets one.
    public static let applicationName = "sgem-server"

    /// Connects, or throws `connectionFailed` with libpq's reason (password masked).
    public init(url: PostgresURL) throws {
        self.url = url
        // The URI expands as `dbname`; sessions are named "sgem-server" in pg_stat_activity
        // unless the URI names them (restore looks for running servers by that name).
        let keywords: [UnsafeMutablePointer<CChar>?] = [strdup("dbname"), strdup("fallback_application_name"), nil]
        let values: [UnsafeMutablePointer<CChar>?] = [strdup(url.raw), strdup(PostgresConnection.applicationName), nil]
        defer { for pointer in keywords + values { free(pointer) } }
        let keywordPointers: [UnsafePointer<CChar>?] = keywords.map { $0.map { UnsafePointer($0) } }
        let valuePointers: [UnsafePointer<CChar>?] = values.map { $0.map { UnsafePointer($0) } }
        let made = PQconnectdbParams(keywordPointers, valuePointers, 1)
        guard let conn = made else {
            throw StoreError(code: .connectionFailed, message: "libpq could not allocate a connection")
        }
        handle = conn
        try checkConnected(conn, context: "cannot connect to \(url)")
        configure()
    }

    /// Connects to a URL given as text; throws `connectionFailed` when it is not a PostgreSQL URI.
    public convenience init(url text: String) throws {
        guard let url = PostgresURL(text) else {
            throw StoreError(code: .connectionFailed, message: "not a PostgreSQL URL (postgresql://…)")
        }
        try self.init(url: url)
    }

    deinit { PQfinish(handle) }

    private func checkConnected(_ conn: OpaquePointer, context: String) throws {
        guard PQstatus(conn) == CONNECTION_OK else {
            throw StoreError(code: .connectionFailed, message: "\(context): \(lastErrorMessage)")
        }
    }

    private func configure() {
        // libpq prints server notices (e.g. "schema … does not exist, skipping") to stderr by default.
        PQsetNoticeProcessor(handle, { _, _ in }, nil)
        PQsetClientEncoding(handle, "UTF8")
    }

    /// libpq's last message on this connection, trimmed, with the password masked.
    var lastErrorMessage: String {
        let text = PQerrorMessage(handle).map { String(cString: $0) } ?? "unknown error"
        return url.redact(text.trimmingCharacters(in: " \n"))
    }

    /// True while the connection is usable (false after the server closed it).
    public var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// The server process serving this connection (`pg_backend_pid()`).
    public var backendPID: Int32 { PQbackendPID(handle) }

    /// The server's version as a number, e.g. 150018 for 15.18.
    public var serverVersion: Int { Int(PQserverVersion(handle)) }

    /// The connection's socket, to wait on with poll/epoll for notifications.
    public var socketDescriptor: Int32 { PQsocket(handle) }

    /// True while a transaction is open on this connection (also when it failed and awaits a
    /// ROLLBACK).
    public var isInTransaction: Bool {
        let status = PQtransactionStatus(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }

    /// Rows the last statement changed (or returned), from its command tag.
    public internal(set) var lastChangedRows = 0

    /// The statements prepared on this session by text (and bytea parameter types): each is
    /// parsed and planned once instead of on every call. Up to `preparedLimit`; later ones run
    /// unprepared. Forgotten on reconnect (a new session) and before scripts (schema changes).
    var prepared: [String: String] = [:]
    static let preparedLimit = 512
    /// Numbers the prepared statements' names (`sgem_N`): never reused within a session.
    private var preparedSerial = 0

    /// Statements sent in pipeline mode whose results are not read yet (see `send`), oldest first.
    var pipeline: [PipelineCommand] = []

    /// Times this connection waited for the server: statements run one by one, a prepare, a
    /// pipeline's flush (the tests count them).
    public internal(set) var roundTrips = 0

    /// The name a statement is prepared under on this session, and its key in `prepared`; nil
    /// when the cache is full (it then runs unprepared).
    func preparedName(for sql: String, types: [Oid], reserving: Bool = true) -> (key: String, name: String, isNew: Bool)? {
        let key = Self.preparedKey(sql, types: types)
        if let name = prepared[key] { return (key, name, false) }
        guard prepared.count < Self.preparedLimit else { return nil }
        guard reserving else { return (key, "", true) }
        preparedSerial += 1
        return (key, "sgem_\(preparedSerial)", true)
    }

    /// A statement's key in `prepared`: its text, and the parameter types when one is bytea.
    static func preparedKey(_ sql: String, types: [Oid]) -> String {
        types.contains(17) ? sql + "\u{1}" + types.map(String.init).joined(separator: ",") : sql
    }

    private func forgetPreparedStatements() throws {
        try flushPipeline()
        guard !prepared.isEmpty else { return }
        prepared.removeAll()
        if let result = PQexec(handle, "DEALLOCATE ALL") { PQclear(result) }
    }

    /// The dialect `SQL` values render with on this connection.
    public var dialect: SQLDialect { .postgresql }

    /// Connects again with the same URL after the connection was lost. Session state
    /// (`SET`, `LISTEN`) does not survive: set it again.
    public func reconnect() throws {
        prepared.removeAll()
        pipeline.removeAll()
        PQreset(handle)
        if PQpipelineStatus(handle) != PQ_PIPELINE_OFF { _ = PQexitPipelineMode(handle) }
        try checkConnected(handle, context: "cannot reconnect to \(url)")
        configure()
    }

    // MARK: Statements

    /// Runs one statement with `$1…$N` bindings; returns the rows it produced (none for commands).
    @discardableResult
    public func query(_ sql: String, _ bindings: [SQLValue] = []) throws -> [Row] {
        try withResult(sql, bindings) { result in try Self.rows(of: result) }
    }

    /// Runs one statement with `$1…$N` bindings; returns the number of rows it changed.
    @discardableResult
    public func execute(_ sql: String, _ bindings: [SQLValue] = []) throws -> Int {
        try withResult(sql, bindings) { result in
            Int(String(cString: PQcmdTuples(result))) ?? 0
        }
    }

    /// Runs several statements separated by `;`, without bindings (schema scripts), in one round trip.
    public func executeScript(_ sql: String) throws {
        // Scripts change schemas: statements prepared before may no longer fit them.
        try forgetPreparedStatements()
        roundTrips += 1
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result, sql: sql)
    }

    /// Runs a `SQL` statement; returns the number of rows it changed.
    @discardableResult
    public func run(_ sql: SQL) throws -> Int {
        let (text, bindings) = sql.render(.postgresql)
        return try execute(text, bindings)
    }

    /// Runs a `SQL` query and returns every row.
    public func fetchAll(_ sql: SQL) throws -> [Row] {
        let (text, bindings) = sql.render(.postgresql)
        return try query(text, bindings)
    }

    /// The first row of a `SQL` query, or nil when there is none.
    public func fetchOne(_ sql: SQL) throws -> Row? { try fetchAll(sql).first }

    private func withResult<T>(_ sql: String, _ bindings: [SQLValue], _ body: (OpaquePointer) throws -> T) throws -> T {
        let params = try Parameter.list(bindings, sql: sql)
        // Statements already in the pipeline go first, with this one, in one round trip; so does
        // the prepare of a statement new to this session (parsed and planned once per session).
        let types = params.map { Oid($0.binary ? 17 : 0) }
        if !pipeline.isEmpty || preparedName(for: sql, types: types, reserving: false)?.isNew == true {
            try send(sql, bindings, control: false)
            let result: OpaquePointer?
            do {
                result = try flushPipeline(keepingLast: true)
            } catch let failure as PostgresPipelineFailure where !failure.control {
                throw failure.error
            }
            guard let result else { throw StoreError(code: .postgres, message: "the pipeline returned no result", sql: sql) }
            defer { PQclear(result) }
            return try body(result)
        }
        roundTrips += 1
        let result = withParameters(params) { values, lengths, formats, types -> OpaquePointer? in
            if let name = prepared[Self.preparedKey(sql, types: types)] {
                return PQexecPrepared(handle, name, Int32(params.count), values, lengths, formats, 0)
            }
            // The cache is full: later statements run unprepared.
            return PQexecParams(handle, sql, Int32(params.count), types, values, lengths, formats, 0)
        }
        defer { PQclear(result) }
        try check(result, sql: sql)
        lastChangedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
        return try body(result!)
    }

    /// Throws the error a result reports, mapped by SQLSTATE; a broken connection becomes `connectionLost`.
    func check(_ result: OpaquePointer?, sql: String) throws {
        let status = result.map(PQresultStatus) ?? PGRES_FATAL_ERROR
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default: break
        }
        var sqlState: String?
        var message = lastErrorMessage
        if let result {
            sqlState = Self.field(result, "C")
            if let primary = Self.field(result, "M") { message = url.redact(primary) }
        }
        let lost = PQstatus(handle) != CONNECTION_OK
            || sqlState.map { StoreError.category(sqlState: $0) == .connectionLost } == true
        throw StoreError(code: lost ? .connectionLost : .postgres, message: message, sql: sql, sqlState: sqlState)
    }

    private static func field(_ result: OpaquePointer, _ code: Character) -> String? {
        PQresultErrorField(result, Int32(code.asciiValue!)).map { String(cString: $0) }
    }

    // MARK: Values

    /// A binding as libpq takes it: text for everything but bytea, which goes as binary.
    struct Parameter {
        let bytes: [UInt8]?
        let binary: Bool

        /// The bindings of one statement, at most PostgreSQL's 65,535.
        static func list(_ bindings: [SQLValue], sql: String) throws -> [Parameter] {
            guard bindings.count <= SQLDialect.postgresql.maximumBindings else {
                throw StoreError(code: .postgres, message: "\(bindings.count) bindings: PostgreSQL takes at most 65535", sql: sql)
            }
            return try bindings.map(Parameter.init)
        }

        init(_ value: SQLValue) throws {
            switch value {
            case .null: bytes = nil; binary = false
            case .integer(let i): bytes = Array(String(i).utf8); binary = false
            case .real(let d):
                let text = d.isNaN ? "NaN" : d.isInfinite ? (d < 0 ? "-Infinity" : "Infinity") : "\(d)"
                bytes = Array(text.utf8); binary = false
            case .text(let s):
                guard !s.utf8.contains(0) else {
                    throw StoreError(code: .postgres, message: "PostgreSQL text cannot hold a NUL character", sqlState: "22021")
                }
                bytes = Array(s.utf8); binary = false
            case .blob(let b): bytes = b; binary = true
            }
        }
    }

    func withParameters<T>(_ params: [Parameter],
                                   _ body: ([UnsafePointer<CChar>?], [Int32], [Int32], [Oid]) -> T) -> T {
        // NUL-terminated copies that live until libpq has sent them.
        let buffers: [UnsafeMutablePointer<CChar>?] = params.map { param -> UnsafeMutablePointer<CChar>? in
            guard let bytes = param.bytes else { return nil }
            let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count + 1)
            for (i, byte) in bytes.enumerated() { buffer[i] = CChar(bitPattern: byte) }
            buffer[bytes.count] = 0
            return buffer
        }
        defer { buffers.forEach { $0?.deallocate() } }
        let values = buffers.map { $0.map { UnsafePointer($0) } }
        let lengths = params.map { Int32($0.bytes?.count ?? 0) }
        let formats = params.map { Int32($0.binary ? 1 : 0) }
        // bytea (OID 17) is typed; the rest is left for the server to infer from the statement.
        let types = params.map { Oid($0.binary ? 17 : 0) }
        return body(values, lengths, formats, types)
    }

    /// Every row of a result, each value decoded by its column's type OID.
    static func rows(of result: OpaquePointer) throws -> [Row] {
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        let columns = (0..<columnCount).map { String(cString: PQfname(result, $0)) }
        let types = (0..<columnCount).map { PQftype(result, $0) }
        var rows: [Row] = []
        rows.reserveCapacity(Int(rowCount))
        for r in 0..<rowCount {
            var values: [SQLValue] = []
            values.reserveCapacity(Int(columnCount))
            for c in 0..<columnCount {
                if PQgetisnull(result, r, c) != 0 { values.append(.null); continue }
                let length = Int(PQgetlength(result, r, c))
                let bytes = UnsafeRawBufferPointer(start: PQgetvalue(result, r, c), count: length)
                values.append(try decode(bytes, type: types[Int(c)], column: columns[Int(c)]))
            }
            rows.append(Row(columns: columns, values: values))
        }
        return rows
    }

    /// One text-format value by type OID: bool, int2/4/8 and oid as integers, float4/8 and numeric
    /// as reals, bytea as bytes, everything else as text.
    static func decode(_ bytes: UnsafeRawBufferPointer, type: Oid, column: String) throws -> SQLValue {
        let text = String(decoding: bytes, as: UTF8.self)
        func malformed() -> StoreError {
            StoreError(code: .postgres, message: "column \(column): cannot read \"\(text.prefix(40))\" as type \(type)")
        }
        switch type {
        case 16: // bool
            return .integer(text == "t" ? 1 : 0)
        case 20, 21, 23, 26: // int8, int2, int4, oid
            guard let value = Int64(text) else { throw malformed() }
            return .integer(value)
        case 700, 701, 1700: // float4, float8, numeric
            switch text {
            case "NaN": return .real(.nan)
            case "Infinity": return .real(.infinity)
            case "-Infinity": return .real(-.infinity)
            default:
                guard let value = Double(text) else { throw malformed() }
                return .real(value)
            }
        case 17: // bytea, hex output ("\x0a1b…", bytea_output's default)
            guard let decoded = decodeHexBytea(bytes) else { throw malformed() }
            return .blob(decoded)
        default:
            return .text(text)
        }
    }

    static func decodeHexBytea(_ bytes: UnsafeRawBufferPointer) -> [UInt8]? {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "\\"), bytes[1] == UInt8(ascii: "x"), bytes.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count - 2) / 2)
        var i = 2
        while i < bytes.count {
            guard let high = nibble(bytes[i]), let low = nibble(bytes[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }
}

@available(*, unavailable, message: "a PostgresConnection has one owner at a time")
extension PostgresConnection: Sendable {}
