import SGEMCore
@testable import SGEMPush
import SGEMSupport
import SGEMTestSupport
import Testing

/// Each answer of the push API, encoded from a sample value, against the OpenAPI schema
/// documented beside its route: the same keys (every required one), types and nullability, and
/// the keys in the contract's order.
@Suite("Push: response types match their OpenAPI schemas")
struct ViewSchemaTests {
    static let subscription = PushSubscription(id: 3, userID: 7, endpoint: "https://push.example/abc", p256dh: "k", auth: "a",
                                               createdAt: Timestamp(rfc3339: "2030-05-02T09:30:00Z")!)

    static func json(_ value: some Encodable) -> JSONValue {
        (try? OrderedJSONEncoder.jsonValue(value)) ?? .null
    }

    static let cases: [(String, JSONValue, JSONValue)] = [
        ("key", json(PushKeyView(publicKey: "BPub")), PushAPI.keySchema),
        ("subscription", json(SubscriptionView(subscription)), PushAPI.subscriptionSchema),
        ("subscriptions", json(SubscriptionListView(items: [SubscriptionView(subscription)])), PushAPI.listSchema),
    ]

    @Test("the encoded value has the schema's properties, types and nulls, in the schema's order", arguments: cases.indices)
    func matches(_ index: Int) {
        let (name, value, schema) = ViewSchemaTests.cases[index]
        #expect(value != .null && viewMismatches(value, against: schema) == [], "\(name)")
    }

    @Test("a subscription shows its id, endpoint and time, never its keys")
    func subscriptionFields() {
        let value = ViewSchemaTests.json(SubscriptionView(ViewSchemaTests.subscription))
        #expect(value == ["id": 3, "endpoint": "https://push.example/abc", "createdAt": "2030-05-02T09:30:00Z"])
    }
}
