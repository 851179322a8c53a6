import SGEMHTTP

/// Where links the server hands out point: the scheme the server sees (https behind TLS or a
/// trusted proxy saying so) and the request's `Host`, checked so that a forged header cannot put
/// anything but a host and port into a link.
enum LinkOrigin {
    /// `http(s)://HOST[:PORT]` for `request`; nil when its Host header is missing or is not a
    /// host name, an IPv4 address or a bracketed IPv6 address with an optional port.
    static func of(_ request: Request) -> String? {
        let hosts = request.headers.values("Host")
        guard hosts.count == 1, let host = authority(hosts[0]) else { return nil }
        return (request.isSecure ? "https" : "http") + "://" + host
    }

    /// `raw` lowercased when it is `host[:port]` as above; nil otherwise.
    static func authority(_ raw: String) -> String? {
        let text = raw.lowercased()
        guard !text.isEmpty, text.utf8.count <= 261 else { return nil }
        var host = Substring(text)
        var port: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            if !rest.isEmpty {
                guard rest.hasPrefix(":") else { return nil }
                port = rest.dropFirst()
            }
            guard !host.isEmpty, host.utf8.allSatisfy({ isHexDigit($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") }) else { return nil }
        } else {
            if let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                port = text[text.index(after: colon)...]
            }
            guard !host.isEmpty, host.utf8.count <= 253,
                  host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy(isLabel) else { return nil }
        }
        if let port {
            guard (1...5).contains(port.count), port.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                  let n = Int(port), (1...65535).contains(n) else { return nil }
        }
        return text
    }

    /// A DNS label (or an IPv4 part): 1–63 of a-z, 0-9 and inner hyphens.
    private static func isLabel(_ label: Substring) -> Bool {
        guard (1...63).contains(label.utf8.count), label.first != "-", label.last != "-" else { return false }
        return label.utf8.allSatisfy { ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || ($0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9"))
            || $0 == UInt8(ascii: "-") }
    }

    private static func isHexDigit(_ c: UInt8) -> Bool {
        (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f"))
    }

    /// The invitation link for `token` at `origin`.
    static func inviteURL(origin: String, token: String) -> String { origin + "/join#invite=" + token }
}
