/// The company-wide settings admins edit (`GET/PUT /api/v1/admin/settings`).
public struct CompanySettingsValue: Codable, Sendable, Equatable {
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

    public init(defaultAllowanceDays: Int = 23, workingDays: [Int] = [1, 2, 3, 4, 5], registration: String = "closed",
                registrationDomain: String? = nil, defaultLanguage: String = "en") {
        self.defaultAllowanceDays = defaultAllowanceDays
        self.workingDays = workingDays
        self.registration = registration
        self.registrationDomain = registrationDomain
        self.defaultLanguage = defaultLanguage
    }

    /// The registration modes.
    public static let registrationModes = ["closed", "open", "domain"]
}

/// The current company settings; implemented by the company module.
public protocol CompanySettingsProvider: Sendable {
    /// The settings as stored now (defaults until an admin changes them).
    func current() async throws -> CompanySettingsValue
}
