import SGEMCore
import SGEMSupport

/// The company-wide settings admins edit (`GET/PUT /api/v1/admin/settings`).
public struct CompanySettingsValue: Sendable, Equatable {
    /// Holiday days per employee and year unless set per employee.
    public var defaultAllowanceDays: Int
    /// ISO weekday numbers (1 = Monday … 7 = Sunday) that count as working days.
    public var workingDays: [Int]
    /// "closed", "open" or "domain".
    public var registration: String
    /// With registration "domain": the email domain allowed to register.
    public var registrationDomain: String?
    /// ISO 639-1 code of the language new users get.
    public var defaultLanguage: String
    /// The IANA time zone the company's calendar days are counted in ("Europe/Madrid").
    public var timeZone: String
    /// Most employees absent on one day; nil means no limit.
    public var maxSimultaneousAbsences: Int?
    /// Unused holiday days that carry over into the next year; 0 turns carry-over off.
    public var carryOverMaxDays: Int
    /// "MM-DD": the day carried-over days expire in the next year; nil means they never expire.
    public var carryOverExpires: String?
    /// Where push services may reach the company (RFC 8292's `sub`: `mailto:` or `https:`); nil: none given.
    public var pushContact: String? = nil
    /// When an admin last saved the settings; nil until then.
    public var updatedAt: Timestamp?

    public init(defaultAllowanceDays: Int = 23, workingDays: [Int] = [1, 2, 3, 4, 5], registration: String = "closed",
                registrationDomain: String? = nil, defaultLanguage: String = "en", timeZone: String = "UTC",
                maxSimultaneousAbsences: Int? = nil, carryOverMaxDays: Int = 0, carryOverExpires: String? = nil,
                updatedAt: Timestamp? = nil) {
        self.defaultAllowanceDays = defaultAllowanceDays
        self.workingDays = workingDays
        self.registration = registration
        self.registrationDomain = registrationDomain
        self.defaultLanguage = defaultLanguage
        self.timeZone = timeZone
        self.maxSimultaneousAbsences = maxSimultaneousAbsences
        self.carryOverMaxDays = carryOverMaxDays
        self.carryOverExpires = carryOverExpires
        self.updatedAt = updatedAt
    }

    /// The registration modes.
    public static let registrationModes = ["closed", "open", "domain"]
}

/// The current company settings; implemented by the company module.
public protocol CompanySettingsProvider: Sendable {
    /// The settings as stored now (defaults until an admin changes them).
    func current() async throws -> CompanySettingsValue
}

/// The company's name, for what shows it outside the API (the console's page and its web app
/// manifest); implemented by the company module.
public protocol CompanyNameProvider: Sendable {
    /// The name an admin gave the company, or nil until they have.
    func companyName() async throws -> String?
}
