/// `{"items": [...]}`, the shape of every list the API answers.
public struct Items<Item: Encodable & Sendable>: Encodable, Sendable {
    public let items: [Item]

    public init(items: [Item]) { self.items = items }
}
