import SGEMHTTP
import SGEMSupport

// The company API's request bodies, read once from the request. The company's information and
// its settings are checked field by field when applied to the stored values (`CompanyProfile`,
// `SettingsChange`), in the same write transaction; the feed list is checked here.

/// `PUT /admin/company`: `{name?, phone?, email?, website?, address?}`; null or "" clears.
struct CompanyProfileBody {
    let fields: [String: JSONValue]

    init(_ request: Request) throws { fields = try JSONBody(request).fields }
}

extension SettingsChange {
    /// `PUT /admin/settings`: any of `keys`; fields left out keep their value.
    init(_ request: Request) throws { self.init(fields: try JSONBody(request).fields) }
}

/// `PUT /admin/company/feeds`: `{urls: [string]}`, checked like the command line's list.
struct FeedsBody {
    let urls: [String]

    init(_ request: Request) throws {
        let body = try JSONBody(request)
        guard let list = body.fields["urls"]?.arrayValue else {
            throw APIError.validationFailed(["urls": "must be a list of feed addresses"])
        }
        guard list.count <= FeedURLs.maxCount * 5 else {
            throw APIError.validationFailed(["urls": "must list at most \(FeedURLs.maxCount) feeds"])
        }
        var urls: [String] = []
        var problems: [String: String] = [:]
        for (index, item) in list.enumerated() {
            if let s = item.stringValue { urls.append(s) } else { problems["urls[\(index)]"] = "must be a string"; urls.append("") }
        }
        if !problems.isEmpty { throw APIError.validationFailed(problems) }
        self.urls = try FeedURLs.checked(urls)
    }
}
