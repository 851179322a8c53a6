/// An absolute `http` or `https` URL, parsed strictly: a host (DNS name, IPv4 or bracketed
/// IPv6), an optional port, a path and query of visible ASCII; no user info; the fragment dropped.
public struct HTTPClientURL: Sendable, Hashable, CustomStringConvertible {
    public enum Scheme: String, Sendable { case http, https }

    public let scheme: Scheme
    /// Lower-cased; an IPv6 literal without its brackets.
    public let host: String
    public let port: Int
    /// Path and query as sent in the request line, at least `/`.
    public let target: String

    /// Parses `text`, throwing `invalid_url` for anything else than the form above.
    public init(_ text: String) throws(HTTPClientError) {
        func invalid(_ why: String) -> HTTPClientError { HTTPClientError(.invalidURL, "\(why): \(text.prefix(200).debugDescription)") }
        guard text.utf8.count <= 8192 else { throw invalid("the URL is too long") }
        guard text.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { throw invalid("the URL must be visible ASCII without spaces") }
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { throw invalid("the URL has no scheme") }
        guard let scheme = Scheme(rawValue: text[..<colon].lowercased()) else { throw invalid("only http and https URLs are supported") }
        var rest = text[text.index(colon, offsetBy: 3)...]
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        var target = String(rest[authorityEnd...])
        if target.isEmpty || target.first == "?" { target = "/" + target }
        guard !authority.contains("@") else { throw invalid("user information in URLs is not supported") }

        var host: Substring
        var portText: Substring?
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw invalid("unterminated IPv6 literal") }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw invalid("junk after the IPv6 literal") }
                portText = after.dropFirst()
            }
            guard !host.isEmpty, host.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { throw invalid("malformed IPv6 literal") }
        } else {
            if let colon = authority.firstIndex(of: ":") {
                host = authority[..<colon]
                portText = authority[authority.index(after: colon)...]
            } else {
                host = authority
            }
            guard !host.isEmpty, host.utf8.count <= 253 else { throw invalid("the host is empty or too long") }
            let labels = host.split(separator: ".", omittingEmptySubsequences: false)
            for label in labels {
                guard !label.isEmpty, label.utf8.count <= 63, label.first != "-", label.last != "-",
                      label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }) else {
                    throw invalid("malformed host name")
                }
            }
        }
        var port = scheme == .https ? 443 : 80
        if let portText, !portText.isEmpty {
            guard portText.count <= 5, portText.allSatisfy(\.isASCII), portText.allSatisfy(\.isNumber),
                  let value = Int(portText), (1...65535).contains(value) else { throw invalid("malformed port") }
            port = value
        } else if portText != nil {
            throw invalid("empty port")
        }
        self.scheme = scheme
        self.host = host.lowercased()
        self.port = port
        self.target = target
    }

    /// Whether the host is an IP literal (no SNI then, and the certificate must name the address).
    public var hostIsIPAddress: Bool {
        host.contains(":") || host.split(separator: ".").allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// The `Host` header value: the port only when it is not the scheme's default.
    public var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == (scheme == .https ? 443 : 80) ? name : "\(name):\(port)"
    }

    /// Scheme, host and port: what connections are pooled by and redirects must keep.
    public var origin: String { "\(scheme.rawValue)://\(host.contains(":") ? "[\(host)]" : host):\(port)" }

    public var description: String { "\(scheme.rawValue)://\(hostHeader)\(target)" }

    /// The URL a `Location` header names, absolute or relative to this one (RFC 3986 §5 for the
    /// common forms: absolute, scheme-relative, absolute path, relative path, query only).
    public func resolving(_ location: String) throws(HTTPClientError) -> HTTPClientURL {
        if let colon = location.firstIndex(of: ":"), location[colon...].hasPrefix("://") { return try HTTPClientURL(location) }
        if location.hasPrefix("//") { return try HTTPClientURL(scheme.rawValue + ":" + location) }
        let base = "\(scheme.rawValue)://\(hostHeader)"
        if location.hasPrefix("/") { return try HTTPClientURL(base + location) }
        let path = target.prefix { $0 != "?" }
        if location.hasPrefix("?") { return try HTTPClientURL(base + path + location) }
        let directory = path[...(path.lastIndex(of: "/") ?? path.startIndex)]
        return try HTTPClientURL(base + directory + location)
    }
}
