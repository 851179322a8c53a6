/// Encodes `Encodable` values as compact JSON with the keys in the order `encode(to:)` writes
/// them and strings escaped as `JSONValue` escapes them. Foundation's `JSONEncoder` orders keys
/// by hash (a different order in every process) or sorted; responses should read the same on
/// every run, in the order the contract lists the fields. Integers stay exact (no `Double`).
public enum OrderedJSONEncoder {
    /// `value` as compact JSON text in UTF-8.
    public static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        let root = try tree(value)
        var out: [UInt8] = []
        out.reserveCapacity(256)
        root.write(into: &out)
        return out
    }

    /// `value` as compact JSON text, for a command's `--json` output.
    public static func text<T: Encodable>(_ value: T) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }

    /// `value` as a `JSONValue` (integers as its numbers), for events and documents built as values.
    public static func jsonValue<T: Encodable>(_ value: T) throws -> JSONValue {
        try tree(value).jsonValue
    }

    private static func tree<T: Encodable>(_ value: T) throws -> Node {
        let root = Node()
        try value.encode(to: TreeEncoder(node: root, path: .root))
        return root
    }
}

/// One value being built; containers fill it in place, so nested containers may be filled in any order.
private final class Node {
    enum Scalar {
        /// Null, a boolean, a string or a fractional number.
        case leaf(JSONValue)
        case int(Int64), uint(UInt64)
    }

    enum Kind { case scalar, array, object }

    private(set) var kind = Kind.scalar
    var scalar = Scalar.leaf(.null)
    private var items: [Node] = []
    private var pairs: [(String, Node)] = []

    var count: Int { kind == .array ? items.count : pairs.count }

    func write(into out: inout [UInt8]) {
        switch kind {
        case .array: JSONValue.writeArray(items, into: &out) { $0.write(into: &$1) }
        case .object: JSONValue.writeObject(pairs, into: &out) { $0.write(into: &$1) }
        case .scalar:
            switch scalar {
            case let .leaf(leaf): leaf.write(into: &out)
            case let .int(n): JSONValue.writeInteger(n, into: &out)
            case let .uint(n): out.append(contentsOf: String(n).utf8)
            }
        }
    }

    var jsonValue: JSONValue {
        switch kind {
        case .array: .array(items.map(\.jsonValue))
        case .object: .object(pairs.map { ($0.0, $0.1.jsonValue) })
        case .scalar:
            switch scalar {
            case let .leaf(leaf): leaf
            case let .int(n): .number(Double(n))
            case let .uint(n): .number(Double(n))
            }
        }
    }

    func set(_ value: Scalar) {
        kind = .scalar
        scalar = value
    }

    /// The child under `key`, replacing an earlier one of the same key in its place.
    func child(_ key: String) -> Node {
        becomeObject()
        let node = Node()
        if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs[i].1 = node } else { pairs.append((key, node)) }
        return node
    }

    func appended() -> Node {
        becomeArray()
        let node = Node()
        items.append(node)
        return node
    }

    func becomeObject() { if kind != .object { kind = .object; items = [] } }
    func becomeArray() { if kind != .array { kind = .array; pairs = [] } }
}

/// Where a value sits, put together as keys only when someone asks (most encoders never do).
private struct CodingPath {
    let base: [any CodingKey]
    let key: (any CodingKey)?

    static let root = CodingPath(base: [], key: nil)

    var keys: [any CodingKey] { key.map { base + [$0] } ?? base }

    func appending(_ key: (any CodingKey)?) -> CodingPath { CodingPath(base: keys, key: key) }
}

/// Encodes into `node`.
private struct TreeEncoder: Encoder {
    let node: Node
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, path: path))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedContainer(node: node, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, path: path)
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: Node
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).set(.leaf(.null)) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.child(key.stringValue).set(.leaf(.bool(value))) }
    mutating func encode(_ value: String, forKey key: Key) throws { node.child(key.stringValue).set(.leaf(.string(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.child(key.stringValue).set(.int(value)) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.child(key.stringValue).set(.int(Int64(value))) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: TreeEncoder(node: node.child(key.stringValue), path: path.appending(key)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        TreeEncoder(node: node.child(key.stringValue), path: path.appending(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        TreeEncoder(node: node.child(key.stringValue), path: path.appending(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { TreeEncoder(node: node.child("super"), path: path.appending(nil)) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        TreeEncoder(node: node.child(key.stringValue), path: path.appending(key))
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: Node
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }
    var count: Int { node.count }

    mutating func encodeNil() throws { node.appended().set(.leaf(.null)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = IndexKey(node.count)
        try value.encode(to: TreeEncoder(node: node.appended(), path: path.appending(key)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = IndexKey(node.count)
        return TreeEncoder(node: node.appended(), path: path.appending(key)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = IndexKey(node.count)
        return TreeEncoder(node: node.appended(), path: path.appending(key)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = IndexKey(node.count)
        return TreeEncoder(node: node.appended(), path: path.appending(key))
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let node: Node
    let path: CodingPath
    var codingPath: [any CodingKey] { path.keys }

    mutating func encodeNil() throws { node.set(.leaf(.null)) }
    mutating func encode(_ value: Bool) throws { node.set(.leaf(.bool(value))) }
    mutating func encode(_ value: String) throws { node.set(.leaf(.string(value))) }
    mutating func encode(_ value: Double) throws { node.set(.leaf(.number(value))) }
    mutating func encode(_ value: Float) throws { node.set(.leaf(.number(Double(value)))) }
    mutating func encode(_ value: Int) throws { node.set(.int(Int64(value))) }
    mutating func encode(_ value: Int8) throws { node.set(.int(Int64(value))) }
    mutating func encode(_ value: Int16) throws { node.set(.int(Int64(value))) }
    mutating func encode(_ value: Int32) throws { node.set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) throws { node.set(.int(value)) }
    mutating func encode(_ value: UInt) throws { node.set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt8) throws { node.set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt16) throws { node.set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt32) throws { node.set(.uint(UInt64(value))) }
    mutating func encode(_ value: UInt64) throws { node.set(.uint(value)) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: TreeEncoder(node: node, path: path))
    }
}
