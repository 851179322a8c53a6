/// An optional field written as `null` when it is nil, where the contract lists the key always
/// (a synthesized `Encodable` leaves nil optionals out).
@propertyWrapper
struct ExplicitNull<Value: Encodable & Sendable & Equatable>: Encodable, Sendable, Equatable {
    var wrappedValue: Value?

    init(wrappedValue: Value?) { self.wrappedValue = wrappedValue }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }
}
