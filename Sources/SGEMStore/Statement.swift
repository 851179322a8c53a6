import CSQLite

/// A prepared statement. Confined to its connection's thread; finalized when released.
final class Statement {
    let handle: OpaquePointer
    let sql: String
    private let db: OpaquePointer

    init(handle: OpaquePointer, sql: String, db: OpaquePointer) {
        self.handle = handle
        self.sql = sql
        self.db = db
    }

    deinit { sqlite3_finalize(handle) }

    /// Binds `values` to the `?` parameters, all of them and no more.
    func bind(_ values: [SQLValue]) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard expected == values.count else {
            throw StoreError(code: .sqlite, message: "expected \(expected) bindings, got \(values.count)",
                             sqliteCode: SQLITE_RANGE, sql: sql)
        }
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null:
                rc = sqlite3_bind_null(handle, index)
            case .integer(let v):
                rc = sqlite3_bind_int64(handle, index, v)
            case .real(let d):
                rc = sqlite3_bind_double(handle, index, d)
            case .text(var s):
                // A nil pointer would bind NULL, so an empty string needs a real (empty) buffer.
                rc = s.withUTF8 { bytes in
                    bytes.isEmpty
                        ? sqlite3_bind_text(handle, index, "", 0, sgem_sqlite_transient())
                        : sqlite3_bind_text(handle, index, bytes.baseAddress, Int32(bytes.count), sgem_sqlite_transient())
                }
            case .blob(let b):
                rc = b.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : b.withUnsafeBytes { sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), sgem_sqlite_transient()) }
            }
            guard rc == SQLITE_OK else { throw StoreError.sqlite(rc, db: db, sql: sql, context: "binding parameter \(index)") }
        }
    }

    /// Advances one row: true when a row is available, false when the statement is done.
    func step() throws -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw StoreError.sqlite(rc, db: db, sql: sql)
        }
    }

    /// Column names of the current result; read per execution because a re-prepare after a
    /// schema change may change them.
    func columnNames() -> [String] {
        (0..<sqlite3_column_count(handle)).map { String(cString: sqlite3_column_name(handle, $0)) }
    }

    /// The values of the current row.
    func values(count: Int) -> [SQLValue] {
        var values: [SQLValue] = []
        values.reserveCapacity(count)
        for i in 0..<Int32(count) {
            switch sqlite3_column_type(handle, i) {
            case SQLITE_INTEGER:
                values.append(.integer(sqlite3_column_int64(handle, i)))
            case SQLITE_FLOAT:
                values.append(.real(sqlite3_column_double(handle, i)))
            case SQLITE_TEXT:
                // Pointer first, then length: SQLite's documented order (the length describes that buffer).
                if let text = sqlite3_column_text(handle, i) {
                    let length = Int(sqlite3_column_bytes(handle, i))
                    values.append(.text(String(decoding: UnsafeBufferPointer(start: text, count: length), as: UTF8.self)))
                } else {
                    values.append(.text(""))
                }
            case SQLITE_BLOB:
                let blob = sqlite3_column_blob(handle, i)
                let length = Int(sqlite3_column_bytes(handle, i))
                if let blob, length > 0 {
                    values.append(.blob(Array(UnsafeRawBufferPointer(start: blob, count: length))))
                } else {
                    values.append(.blob([]))
                }
            default:
                values.append(.null)
            }
        }
        return values
    }

    /// Makes the statement reusable and drops its bindings so no value outlives the call.
    func reset() {
        // The error, if any, was already reported by `step`.
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }
}
