@testable import SGEMCompany
import SGEMContracts
import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

/// Each answer of the company API, encoded from a sample value, against the OpenAPI schema
/// documented beside its route: the same keys (every required one), types and nullability, and
/// the keys in the contract's order.
@Suite("Company: response types match their OpenAPI schemas")
struct ViewSchemaTests {
    static let at = Timestamp(rfc3339: "2030-05-02T09:30:00Z")!

    static func json(_ value: some Encodable) -> JSONValue {
        (try? OrderedJSONEncoder.jsonValue(value)) ?? .null
    }

    static var settings: CompanySettingsValue {
        var value = CompanySettingsValue()
        (value.registration, value.registrationDomain, value.maxSimultaneousAbsences) = ("domain", "example.com", 3)
        (value.carryOverExpires, value.pushContact, value.updatedAt) = ("03-31", "mailto:it@example.com", at)
        return value
    }

    static let profile = CompanyProfile(name: "Acme", phone: "+34 600", email: "hi@acme.example", website: "https://acme.example",
                                        address: "Calle 1\nMadrid", updatedAt: at)
    static let feed = FeedStatus(url: "https://acme.example/feed.xml", title: "Acme blog", status: "error", error: "timed out",
                                 lastFetchedAt: at, lastSuccessAt: at, entryCount: 4)
    static let entry = FeedItem(title: "Hello", url: "https://acme.example/hello", publishedAt: at, source: "Acme blog")

    static let cases: [(String, JSONValue, JSONValue)] = [
        ("profile", json(CompanyProfileView(profile)), CompanyAPI.profileSchema),
        ("empty profile", json(CompanyProfileView(CompanyProfile())), CompanyAPI.profileSchema),
        ("settings", json(SettingsView(settings)), CompanyAPI.settingsSchema),
        ("default settings", json(SettingsView(CompanySettingsValue())), CompanyAPI.settingsSchema),
        ("feed entries", json(Items(items: [FeedItemView(entry), FeedItemView(FeedItem(title: "x", url: nil, publishedAt: nil, source: "h"))])),
         CompanyAPI.feedItemsSchema),
        ("feeds", json(Items(items: [FeedStatusView(feed), FeedStatusView(FeedStatus(url: "https://b.example/", title: nil, status: "pending",
                                                                                      error: nil, lastFetchedAt: nil, lastSuccessAt: nil,
                                                                                      entryCount: 0))])),
         CompanyAPI.feedStatusesSchema),
    ]

    @Test("the encoded value has the schema's properties, types and nulls, in the schema's order", arguments: cases.indices)
    func matches(_ index: Int) {
        let (name, value, schema) = ViewSchemaTests.cases[index]
        #expect(value != .null && viewMismatches(value, against: schema) == [], "\(name)")
    }

    @Test("unset values are null, never left out")
    func nulls() {
        let empty = ViewSchemaTests.json(CompanyProfileView(CompanyProfile()))
        #expect(empty == ["name": .null, "phone": .null, "email": .null, "website": .null, "address": .null, "updatedAt": .null])
        let defaults = ViewSchemaTests.json(SettingsView(CompanySettingsValue()))
        #expect(defaults["registrationDomain"] == .null && defaults["pushContact"] == .null && defaults["updatedAt"] == .null)
    }
}
