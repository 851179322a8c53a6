import SGEMSupport

/// One result row: values by column name or position.
public struct Row: Sendable {
    /// The column names, in select order.
    public let columns: [String]
    let values: [SQLValue]

    init(columns: [String], values: [SQLValue]) {
        self.columns = columns
        self.values = values
    }

    /// The value of the first column named `column`; `.null` when there is none.
    public subscript(_ column: String) -> SQLValue {
        guard let index = columns.firstIndex(of: column) else { return .null }
        return values[index]
    }

    /// The value at `index`; `.null` when out of range.
    public subscript(_ index: Int) -> SQLValue {
        values.indices.contains(index) ? values[index] : .null
    }

    /// An integer column (a real with an integral value converts too).
    public func int(_ column: String) -> Int? { int64(column).map { Int($0) } }

    /// A 64-bit integer column (a real with an integral value converts too).
    public func int64(_ column: String) -> Int64? { self[column].int64 }

    /// A floating-point column; integers convert.
    public func double(_ column: String) -> Double? { self[column].double }

    /// A timestamp column: INTEGER milliseconds since the Unix epoch (the store's one timestamp
    /// form); RFC 3339 text, as older rows may hold, is read too.
    public func timestamp(_ column: String) -> Timestamp? { self[column].timestamp }

    /// A text column.
    public func string(_ column: String) -> String? { self[column].string }

    /// A boolean stored as an integer: nonzero is true.
    public func bool(_ column: String) -> Bool? { self[column].bool }

    /// A blob column; text comes back as its UTF-8 bytes.
    public func blob(_ column: String) -> [UInt8]? {
        switch self[column] {
        case .blob(let b): b
        case .text(let s): Array(s.utf8)
        default: nil
        }
    }

    // By position: a repository that decodes many rows of a statement it wrote itself reads
    // columns in select order, without a name comparison per column. Same conversions as above.

    public func int64(at index: Int) -> Int64? { self[index].int64 }
    public func double(at index: Int) -> Double? { self[index].double }
    public func string(at index: Int) -> String? { self[index].string }
    public func bool(at index: Int) -> Bool? { self[index].bool }
    public func timestamp(at index: Int) -> Timestamp? { self[index].timestamp }
}

/// The conversions the row accessors share.
private extension SQLValue {
    var int64: Int64? {
        switch self {
        case .integer(let v): v
        case .real(let d): Int64(exactly: d)
        default: nil
        }
    }

    var double: Double? {
        switch self {
        case .real(let d): d
        case .integer(let v): Double(v)
        default: nil
        }
    }

    var timestamp: Timestamp? {
        switch self {
        case .integer(let ms): Timestamp(milliseconds: ms)
        case .text(let text): Timestamp(rfc3339: text)
        default: nil
        }
    }

    var string: String? {
        if case .text(let s) = self { return s }
        return nil
    }

    var bool: Bool? {
        if case .integer(let v) = self { return v != 0 }
        return nil
    }
}
