import FoundationEssentials

/// A JSON document as a value: used where the shape is dynamic (the OpenAPI document, config
/// files, error details). Objects keep their key order so output is stable.
public enum JSONValue: Sendable, Equatable, Codable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case let (.bool(a), .bool(b)): a == b
        case let (.number(a), .number(b)): a == b
        case let (.string(a), .string(b)): a == b
        case let (.array(a), .array(b)): a == b
        case let (.object(a), .object(b)): a.count == b.count && zip(a, b).allSatisfy { $0.0 == $1.0 && $0.1 == $1.1 }
        default: false
        }
    }

    public subscript(key: String) -> JSONValue? {
        if case let .object(pairs) = self { return pairs.last(where: { $0.0 == key })?.1 }
        return nil
    }

    public var stringValue: String? { if case let .string(s) = self { s } else { nil } }
    public var numberValue: Double? { if case let .number(n) = self { n } else { nil } }
    public var boolValue: Bool? { if case let .bool(b) = self { b } else { nil } }
    public var arrayValue: [JSONValue]? { if case let .array(a) = self { a } else { nil } }
    public var objectValue: [(String, JSONValue)]? { if case let .object(o) = self { o } else { nil } }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var pairs: [(String, JSONValue)] = []
            for key in keyed.allKeys { pairs.append((key.stringValue, try keyed.decode(JSONValue.self, forKey: key))) }
            self = .object(pairs)
            return
        }
        if var list = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !list.isAtEnd { items.append(try list.decode(JSONValue.self)) }
            self = .array(items)
            return
        }
        let single = try decoder.singleValueContainer()
        if single.decodeNil() { self = .null }
        else if let b = try? single.decode(Bool.self) { self = .bool(b) }
        else if let n = try? single.decode(Double.self) { self = .number(n) }
        else { self = .string(try single.decode(String.self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var c = encoder.singleValueContainer(); try c.encodeNil()
        case let .bool(b):
            var c = encoder.singleValueContainer(); try c.encode(b)
        case let .number(n):
            var c = encoder.singleValueContainer(); try c.encode(n)
        case let .string(s):
            var c = encoder.singleValueContainer(); try c.encode(s)
        case let .array(items):
            var c = encoder.unkeyedContainer()
            for item in items { try c.encode(item) }
        case let .object(pairs):
            var c = encoder.container(keyedBy: AnyKey.self)
            for (k, v) in pairs { try c.encode(v, forKey: AnyKey(stringValue: k)) }
        }
    }

    /// Parses a JSON text; throws on anything malformed.
    public static func parse(_ bytes: [UInt8]) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(bytes))
    }

    /// The same value with every object's keys in ascending order, at every depth: a stable form
    /// for a parsed value, whose key order `parse` does not keep.
    public func sortingKeys() -> JSONValue {
        switch self {
        case let .array(items): .array(items.map { $0.sortingKeys() })
        case let .object(pairs): .object(pairs.map { ($0.0, $0.1.sortingKeys()) }.sorted { $0.0 < $1.0 })
        default: self
        }
    }

    /// Compact JSON text with keys in their stored order.
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    /// Compact JSON as UTF-8 bytes, ready for a response body.
    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    /// Appends the compact JSON text to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case let .bool(b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case let .number(n):
            if n.isFinite, n == n.rounded(), abs(n) < 9e15 {
                JSONValue.writeInteger(Int64(n), into: &out)
            } else if n.isFinite {
                out.append(contentsOf: String(n).utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case let .string(s): JSONValue.writeString(s, into: &out)
        case let .array(items): JSONValue.writeArray(items, into: &out) { $0.write(into: &$1) }
        case let .object(pairs): JSONValue.writeObject(pairs, into: &out) { $0.write(into: &$1) }
        }
    }

    /// Appends `[…]` of `items`, each written by `write` (shared with `OrderedJSONEncoder`).
    static func writeArray<Item>(_ items: [Item], into out: inout [UInt8], _ write: (Item, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "["))
        for (i, item) in items.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            write(item, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Appends `{…}` of `pairs` in their order, each value written by `write`.
    static func writeObject<Item>(_ pairs: [(String, Item)], into out: inout [UInt8], _ write: (Item, inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: "{"))
        for (i, (key, item)) in pairs.enumerated() {
            if i > 0 { out.append(UInt8(ascii: ",")) }
            writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            write(item, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Decimal digits of `n`, without a String in between.
    static func writeInteger(_ n: Int64, into out: inout [UInt8]) {
        if n == 0 { out.append(UInt8(ascii: "0")); return }
        var magnitude = n.magnitude
        if n < 0 { out.append(UInt8(ascii: "-")) }
        let start = out.count
        while magnitude > 0 {
            out.append(UInt8(ascii: "0") + UInt8(magnitude % 10))
            magnitude /= 10
        }
        out[start...].reverse()
    }

    /// Writes `s` as a JSON string literal, escaping quotes, backslashes, control characters and
    /// U+2028/U+2029 (which end a line in JavaScript). Runs that need no escaping are copied whole.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var runStart = 0
            var i = 0
            while i < bytes.count {
                let b = bytes[i]
                let escape: UInt8  // the letter after the backslash; 0 for a \u escape
                var width = 1
                switch b {
                case UInt8(ascii: "\""): escape = UInt8(ascii: "\"")
                case UInt8(ascii: "\\"): escape = UInt8(ascii: "\\")
                case UInt8(ascii: "\n"): escape = UInt8(ascii: "n")
                case UInt8(ascii: "\r"): escape = UInt8(ascii: "r")
                case UInt8(ascii: "\t"): escape = UInt8(ascii: "t")
                case 0..<0x20: escape = 0
                case 0xE2 where i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
                    escape = 0
                    width = 3
                default:
                    i += 1
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<i]))
                out.append(UInt8(ascii: "\\"))
                if escape != 0 {
                    out.append(escape)
                } else {
                    let value: UInt32 = width == 3 ? (bytes[i + 2] == 0xA8 ? 0x2028 : 0x2029) : UInt32(b)
                    out.append(UInt8(ascii: "u"))
                    for shift in stride(from: 12, through: 0, by: -4) {
                        out.append(hexDigits[Int((value >> UInt32(shift)) & 0xF)])
                    }
                }
                i += width
                runStart = i
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(elements.map { ($0.0, $0.1) }) }
    public init(nilLiteral: ()) { self = .null }
}
