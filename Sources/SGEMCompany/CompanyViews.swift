import SGEMContracts
import SGEMSupport

// What the company API answers, as `Encodable` values written in the contract's key order
// (`Response.json`); the admin verbs and the audit log read the same values. Their OpenAPI
// schemas are in `CompanyAPI.swift`, and `ViewSchemaTests` checks that the two agree.

/// The company's contact information; a field never set is null.
struct CompanyProfileView: Encodable, Sendable {
    @ExplicitNull var name: String?
    @ExplicitNull var phone: String?
    @ExplicitNull var email: String?
    @ExplicitNull var website: String?
    @ExplicitNull var address: String?
    @ExplicitNull var updatedAt: String?

    init(_ profile: CompanyProfile) {
        name = profile.name
        phone = profile.phone
        email = profile.email
        website = profile.website
        address = profile.address
        updatedAt = profile.updatedAt?.rfc3339()
    }
}

/// The company settings; the nullable ones are null when unset.
struct SettingsView: Encodable, Sendable {
    let defaultAllowanceDays: Int
    let workingDays: [Int]
    let registration: String
    @ExplicitNull var registrationDomain: String?
    let defaultLanguage: String
    let timeZone: String
    @ExplicitNull var maxSimultaneousAbsences: Int?
    let carryOverMaxDays: Int
    @ExplicitNull var carryOverExpires: String?
    @ExplicitNull var pushContact: String?
    @ExplicitNull var updatedAt: String?

    init(_ value: CompanySettingsValue) {
        (defaultAllowanceDays, workingDays, registration) = (value.defaultAllowanceDays, value.workingDays, value.registration)
        registrationDomain = value.registrationDomain
        (defaultLanguage, timeZone) = (value.defaultLanguage, value.timeZone)
        maxSimultaneousAbsences = value.maxSimultaneousAbsences
        carryOverMaxDays = value.carryOverMaxDays
        carryOverExpires = value.carryOverExpires
        pushContact = value.pushContact
        updatedAt = value.updatedAt?.rfc3339()
    }
}

/// One entry of the company feed.
struct FeedItemView: Encodable, Sendable {
    let title: String
    @ExplicitNull var url: String?
    @ExplicitNull var publishedAt: String?
    /// The feed's title, else its host.
    let source: String

    init(_ item: FeedItem) {
        title = item.title
        url = item.url
        publishedAt = item.publishedAt?.rfc3339()
        source = item.source
    }
}

/// A company feed as admins see it, with its last fetch.
struct FeedStatusView: Encodable, Sendable {
    let url: String
    @ExplicitNull var title: String?
    let status: String
    @ExplicitNull var error: String?
    @ExplicitNull var lastFetchedAt: String?
    @ExplicitNull var lastSuccessAt: String?
    let entryCount: Int

    init(_ feed: FeedStatus) {
        url = feed.url
        title = feed.title
        status = feed.status
        error = feed.error
        lastFetchedAt = feed.lastFetchedAt?.rfc3339()
        lastSuccessAt = feed.lastSuccessAt?.rfc3339()
        entryCount = feed.entryCount
    }
}

extension CompanyProfile {
    /// The API's view as a value, for the audit log's before and after and the admin verbs.
    var json: JSONValue { (try? OrderedJSONEncoder.jsonValue(CompanyProfileView(self))) ?? .null }
}

extension CompanySettingsValue {
    /// The API's view as a value, for the audit log's before and after and the admin verbs.
    var json: JSONValue { (try? OrderedJSONEncoder.jsonValue(SettingsView(self))) ?? .null }
}
