import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMSupport

/// The console's page and its web app manifest carry the company's name: both are filled in per
/// request from what the company module holds, so a new name shows at the next load (and the
/// service worker, network first, never keeps an old one while the server answers).
extension ConsoleModule {
    /// What the page and the installed app are called before an admin names the company.
    static let neutralName = "Company console"
    static let neutralShortName = "Console"
    /// Longer short names are cut by launchers; the manifest's `short_name` stays within this.
    static let shortNameLimit = 12

    /// The company's name, or nil when there is none yet (or no company module to ask).
    static func companyName(_ services: ServiceRegistry) async -> String? {
        guard let provider = services.resolve((any CompanyNameProvider).self),
              let name = try? await provider.companyName() else { return nil }
        let trimmed = name.trimmingCharacters(in: " \t\r\n")
        return trimmed.isEmpty ? nil : trimmed
    }

    /// `index.html` with the company's name in its title, its brand and its `application-name`
    /// (empty there when unnamed, so the console can say "Company console" in the reader's language).
    static func serveIndex(_ request: Request, companyName name: String?) -> Response {
        guard let asset = embeddedAssets["index.html"] else { return .error(APIError.notFound("no such console file")) }
        let page = String(decoding: asset.bytes, as: UTF8.self)
            .replacing("{{company}}", with: htmlEscaped(name ?? ""))
            .replacing("{{title}}", with: htmlEscaped(name ?? neutralName))
        return dynamic(Array(page.utf8), contentType: asset.contentType, base: asset.etag, request)
    }

    /// The embedded manifest's fields, parsed once. Parsing keeps no key order (another one in
    /// every parse), so the keys are sorted at every depth: the same name always gives the same
    /// bytes, and so the same ETag.
    static let manifestFields: [(String, JSONValue)]? = {
        guard let asset = embeddedAssets["manifest.webmanifest"],
              case let .object(pairs) = ((try? JSONValue.parse(asset.bytes)) ?? .null).sortingKeys() else { return nil }
        return pairs
    }()

    /// The web app manifest with the company's name as `name` and `short_name`.
    static func serveManifest(_ request: Request, companyName name: String?) -> Response {
        guard let asset = embeddedAssets["manifest.webmanifest"], var fields = manifestFields else {
            return .error(APIError.notFound("no such console file"))
        }
        func set(_ key: String, _ value: String) {
            if let at = fields.firstIndex(where: { $0.0 == key }) { fields[at].1 = .string(value) } else { fields.append((key, .string(value))) }
        }
        set("name", name ?? neutralName)
        set("short_name", name.map(shortName) ?? neutralShortName)
        return dynamic(JSONValue.object(fields).serializedBytes(), contentType: asset.contentType, base: asset.etag, request)
    }

    /// The name as it fits under an icon: whole when short, else its first word, else cut.
    static func shortName(_ name: String) -> String {
        if name.count <= shortNameLimit { return name }
        if let first = name.split(separator: " ").first, first.count <= shortNameLimit { return String(first) }
        return String(name.prefix(shortNameLimit)).trimmingCharacters(in: " ")
    }

    /// Text safe inside HTML content and double- or single-quoted attributes.
    static func htmlEscaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for c in text {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// A response built per request: its ETag follows the bytes (the file's and the name's), so a
    /// renamed company is never answered 304 with the old page.
    static func dynamic(_ body: [UInt8], contentType: String, base: String, _ request: Request) -> Response {
        let digest = Crypto.hex(Crypto.sha256(body).prefix(8))
        let etag = "\"\(base.trimmingCharacters(in: "\"W/"))-\(digest)\""
        var headers = HTTPHeaders()
        headers.set("ETag", etag)
        headers.set("Cache-Control", "no-cache")
        if request.headers.ifNoneMatchMatches(etag) { return Response(status: 304, headers: headers) }
        headers.set("Content-Type", contentType)
        return Response(status: 200, headers: headers, body: body)
    }
}
