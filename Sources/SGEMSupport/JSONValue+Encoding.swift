extension JSONValue {
    /// `value` as a `JSONValue`, its object keys in the order it encodes them (Foundation's
    /// `JSONEncoder` writes them in a dictionary's order, which changes from run to run). An
    /// optional encoded with `encodeIfPresent` (what synthesised `Encodable` does) is left out
    /// when nil; one encoded with `encode` is `null`.
    public init<T: Encodable>(encoding value: T) throws {
        let node = EncodedNode()
        try value.encode(to: NodeEncoder(node: node, codingPath: []))
        self = node.value
    }
}

/// One value being encoded; containers fill it in place, so nested containers need no copying back.
private final class EncodedNode {
    enum Content {
        case empty
        case value(JSONValue)
        case object([(String, EncodedNode)])
        case array([EncodedNode])
    }

    var content = Content.empty

    var value: JSONValue {
        switch content {
        case .empty: return .object([])
        case let .value(v): return v
        case let .object(pairs): return .object(pairs.map { ($0.0, $0.1.value) })
        case let .array(items): return .array(items.map(\.value))
        }
    }

    /// The child under `key`, replacing one encoded before under the same key.
    func child(_ key: String) -> EncodedNode {
        let node = EncodedNode()
        var pairs: [(String, EncodedNode)] = []
        if case let .object(existing) = content { pairs = existing }
        if let i = pairs.firstIndex(where: { $0.0 == key }) { pairs[i].1 = node } else { pairs.append((key, node)) }
        content = .object(pairs)
        return node
    }

    func appended() -> EncodedNode {
        let node = EncodedNode()
        var items: [EncodedNode] = []
        if case let .array(existing) = content { items = existing }
        items.append(node)
        content = .array(items)
        return node
    }

    var count: Int { if case let .array(items) = content { items.count } else { 0 } }

    func encode<T: Encodable>(_ value: T, codingPath: [any CodingKey]) throws {
        switch value {
        case let v as String: content = .value(.string(v))
        case let v as Bool: content = .value(.bool(v))
        case let v as Double: content = .value(.number(v))
        case let v as Float: content = .value(.number(Double(v)))
        case let v as any BinaryInteger: content = .value(.number(Double(v)))
        case let v as JSONValue: content = .value(v)
        default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }
}

private struct NodeEncoder: Encoder {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = node.content {} else { node.content = .object([]) }
        return KeyedEncodingContainer(KeyedNodeContainer<Key>(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = node.content {} else { node.content = .array([]) }
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNodeContainer(node: node, codingPath: codingPath) }
}

private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.child(key.stringValue).content = .value(.null) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try node.child(key.stringValue).encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.child("super"), codingPath: codingPath) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { NodeEncoder(node: node.child(key.stringValue), codingPath: codingPath + [key]) }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.appended().content = .value(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.appended().encode(value, codingPath: codingPath) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.appended(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.appended(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.appended(), codingPath: codingPath) }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: EncodedNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.content = .value(.null) }
    mutating func encode<T: Encodable>(_ value: T) throws { try node.encode(value, codingPath: codingPath) }
}
