import FoundationEssentials
import SGEMSupport

/// One HTTP request as handlers see it: method, target, decoded path and query, headers, body.
public struct Request: Sendable {
    public var method: HTTPMethod
    /// The raw request-target as sent.
    public var target: String
    /// The percent-decoded path, without the query.
    public var path: String
    /// Percent-decoded query parameters (`+` is a space); the last value of a name wins.
    public var query: [String: String]
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Path parameters filled by the router.
    public var parameters: [String: String]
    /// The socket peer's IP address, without the port.
    public var remoteAddress: String
    /// The client's IP address: the peer's, or, when the peer is a configured trusted proxy, the
    /// address that proxy reports in `X-Forwarded-For`. Throttles and audit lines use this one.
    public var clientAddress: String
    /// Whether the client's connection is encrypted: TLS to this server, or `X-Forwarded-Proto:
    /// https` from a trusted proxy. Decides the cookie's `Secure` attribute.
    public var isSecure: Bool

    /// A request whose path and query are parsed from `target`.
    public init(method: HTTPMethod, target: String, headers: HTTPHeaders = .init(), body: [UInt8] = [],
                remoteAddress: String = "127.0.0.1", clientAddress: String? = nil, isSecure: Bool = false) {
        self.method = method
        self.target = target
        self.headers = headers
        self.body = body
        self.parameters = [:]
        self.remoteAddress = remoteAddress
        self.clientAddress = clientAddress ?? remoteAddress
        self.isSecure = isSecure
        let (path, query) = Request.split(target: target)
        self.path = path
        self.query = query
    }

    /// Decodes the JSON body into `type`; 415 unless the body is declared `application/json`.
    public func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try checkJSONMediaType()
        do {
            return try JSONDecoder().decode(T.self, from: Data(body))
        } catch let error as DecodingError {
            throw APIError.invalidJSON(Request.describe(error))
        } catch {
            throw APIError.invalidJSON("the request body is not valid JSON")
        }
    }

    /// Throws 415 `unsupported_media_type` unless the body is declared `Content-Type:
    /// application/json` (parameters such as `charset` allowed). A missing Content-Type is refused
    /// too: a cross-origin page can send a body without one (or as `text/plain`) with no CORS
    /// preflight, so only the declared type proves a script of this origin sent it. An empty body
    /// without a Content-Type passes — it carries nothing to smuggle, and endpoints whose body is
    /// optional accept it; the JSON readers then judge it (an empty body is not a JSON object).
    public func checkJSONMediaType() throws {
        guard let contentType = headers["Content-Type"] else {
            if body.isEmpty { return }
            throw APIError(status: 415, code: "unsupported_media_type", message: "send the body with Content-Type application/json")
        }
        let media = contentType.split(separator: ";", maxSplits: 1).first.map { $0.trimmingASCIISpaces() } ?? ""
        guard HTTPHeaders.equalsIgnoringCase(media, "application/json") else {
            throw APIError(status: 415, code: "unsupported_media_type", message: "expected Content-Type application/json")
        }
    }

    static func describe(_ error: DecodingError) -> String {
        func path(_ keys: [any CodingKey]) -> String {
            keys.isEmpty ? "body" : keys.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case let .keyNotFound(key, context): return "missing field \(path(context.codingPath + [key]))"
        case let .typeMismatch(_, context): return "wrong type for \(path(context.codingPath))"
        case let .valueNotFound(_, context): return "missing value for \(path(context.codingPath))"
        case .dataCorrupted: return "the request body is not valid JSON"
        @unknown default: return "the request body is not valid JSON"
        }
    }

    /// Splits an origin-form (or absolute-form) target into decoded path and query.
    static func split(target: String) -> (String, [String: String]) {
        // The common case: an origin-form path with nothing to decode (checked over contiguous
        // bytes: the generic UTF-8 view cost more than the rest of this function).
        let plain = target.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.first == UInt8(ascii: "/") && !bytes.contains { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "%") }
        }
        if plain == true { return (target, [:]) }
        var utf8 = Substring(target).utf8[...]
        // absolute-form: scheme://authority/path — keep only the path.
        if let first = utf8.first, first != UInt8(ascii: "/"), first != UInt8(ascii: "*"),
           let schemeEnd = utf8.firstRange(of: "://".utf8) {
            let afterAuthority = utf8[schemeEnd.upperBound...]
            if let slash = afterAuthority.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) {
                utf8 = afterAuthority[slash...]
            } else {
                utf8 = "/".utf8[...]
            }
        }
        let rawPath: Substring.UTF8View.SubSequence
        var query: [String: String] = [:]
        if let q = utf8.firstIndex(of: UInt8(ascii: "?")) {
            rawPath = utf8[..<q]
            for pair in utf8[utf8.index(after: q)...].split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
                if let eq = pair.firstIndex(of: UInt8(ascii: "=")) {
                    query[percentDecode(pair[..<eq], plusIsSpace: true)] = percentDecode(pair[pair.index(after: eq)...], plusIsSpace: true)
                } else {
                    query[percentDecode(pair, plusIsSpace: true)] = ""
                }
            }
        } else {
            rawPath = utf8
        }
        let path = rawPath.isEmpty ? "/" : percentDecode(rawPath, plusIsSpace: false)
        return (path, query)
    }

    /// Decodes `%XX` escapes; malformed escapes are kept literally. Invalid UTF-8 is repaired.
    static func percentDecode<C: Collection>(_ bytes: C, plusIsSpace: Bool) -> String where C.Element == UInt8 {
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = bytes.startIndex
        while i != bytes.endIndex {
            let b = bytes[i]
            if b == UInt8(ascii: "%") {
                let h1 = bytes.index(after: i)
                if h1 != bytes.endIndex {
                    let h2 = bytes.index(after: h1)
                    if h2 != bytes.endIndex, let hi = hexValue(bytes[h1]), let lo = hexValue(bytes[h2]) {
                        out.append(hi << 4 | lo)
                        i = bytes.index(after: h2)
                        continue
                    }
                }
                out.append(b)
            } else if plusIsSpace && b == UInt8(ascii: "+") {
                out.append(0x20)
            } else {
                out.append(b)
            }
            i = bytes.index(after: i)
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x41 + 10
        case 0x61...0x66: b - 0x61 + 10
        default: nil
        }
    }
}

extension StringProtocol {
    func trimmingASCIISpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
