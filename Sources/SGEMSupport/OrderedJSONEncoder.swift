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

    /// `value` as a `JSONValue` (integers as its numbers), for events and documents built as values.
    public static func jsonValue<T: Encodable>(_ value: T) throws -> JSONValue {
        try tree(value).jsonValue
    }

    private static func tree<T: Encodable>(_ value: T) throws -> Node {
        let root = Node()
        try value.encode(to: TreeEncoder(node: root, codingPath: []))
        return root
    }
}

/// One value being built; containers fill it in place, so nested containers may be filled in any order.
private final class Node {
    enum Value {
        /// Null, a boolean, a string or a fractional number.
        case leaf(JSONValue)
        case int(Int64), uint(UInt64)
        case array([Node]), object([(String, Node)])
    }

    var value: Value = .leaf(.null)

    func write(into out: inout [UInt8]) {
        switch value {
        case let .leaf(leaf): leaf.write(into: &out)
        case let .int(n): JSONValue.writeInteger(n, into: &out)
        case let .uint(n): out.append(contentsOf: String(n).utf8)
        case let .array(items): JSONValue.writeArray(items, into: &out) { $0.write(into: &$1) }
        case let .object(pairs): JSONValue.writeObject(pairs, into: &out) { $0.write(into: &$1) }
        }
    }

    var jsonValue: JSONValue {
        switch value {
        case let .leaf(leaf): leaf
        case let .int(n): .number(Double(n))
        case let .uint(n): .number(Double(n))
        case let .array(items): .array(items.map(\.jsonValue))
        case let .object(pairs): .object(pairs.map { ($0.0, $0.1.jsonValue) })
        }
    }

    /// The child under `key`, replacing an earlier one of the same key in its place.
    func child(_ key: String) -> Node {
        var pairs: [(String, Node)]
        if case let .object(existing) = value { pairs = existing } else { pairs = [] }
        let node = Node()
        if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs[i].1 = node } else { pairs.append((key, node)) }
        value = .object(pairs)
        return node
    }

    func appended() -> Node {
        var items: [Node]
        if case let .array(existing) = value { items = existing } else { items = [] }
        let node = Node()
        items.append(node)
        value = .array(items)
        return node
    }

    func becomeObject() { if case .object = value {} else { value = .object([]) } }
    func becomeArray() { if case .array = value {} else { value = .array([]) } }

    var count: Int {
        switch value {
        case let .array(items): items.count
        case let .object(pairs): pairs.count
        default: 0
        }
    }
}

private struct TreeEncoder: Encoder {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(node: node, codingPath: codingPath)
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
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).value = .leaf(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { node.child(key.stringValue).value = .leaf(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) throws { node.child(key.stringValue).value = .leaf(.string(value)) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { node.child(key.stringValue).value = .int(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { node.child(key.stringValue).value = .int(Int64(value)) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try value.encode(to: TreeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type,
                                                        forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        TreeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        TreeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { TreeEncoder(node: node.child("super"), codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        TreeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.appended().value = .leaf(.null) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let key = IndexKey(node.count)
        try value.encode(to: TreeEncoder(node: node.appended(), codingPath: codingPath + [key]))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let key = IndexKey(node.count)
        return TreeEncoder(node: node.appended(), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let key = IndexKey(node.count)
        return TreeEncoder(node: node.appended(), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        let key = IndexKey(node.count)
        return TreeEncoder(node: node.appended(), codingPath: codingPath + [key])
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let node: Node
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.value = .leaf(.null) }
    mutating func encode(_ value: Bool) throws { node.value = .leaf(.bool(value)) }
    mutating func encode(_ value: String) throws { node.value = .leaf(.string(value)) }
    mutating func encode(_ value: Double) throws { node.value = .leaf(.number(value)) }
    mutating func encode(_ value: Float) throws { node.value = .leaf(.number(Double(value))) }
    mutating func encode(_ value: Int) throws { node.value = .int(Int64(value)) }
    mutating func encode(_ value: Int8) throws { node.value = .int(Int64(value)) }
    mutating func encode(_ value: Int16) throws { node.value = .int(Int64(value)) }
    mutating func encode(_ value: Int32) throws { node.value = .int(Int64(value)) }
    mutating func encode(_ value: Int64) throws { node.value = .int(value) }
    mutating func encode(_ value: UInt) throws { node.value = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { node.value = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { node.value = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { node.value = .uint(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { node.value = .uint(value) }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try value.encode(to: TreeEncoder(node: node, codingPath: codingPath))
    }
}
