import SGEMSupport

/// A libpq connection URI (`postgresql://USER[:PASSWORD]@HOST[:PORT]/DB?…`, a Unix socket with
/// `?host=/dir`), kept whole for libpq and shown only with its password masked.
public struct PostgresURL: Sendable, CustomStringConvertible {
    /// The URI as given; holds the password. Never log it: use `description`.
    let raw: String

    /// Accepts `postgresql://` and `postgres://` URIs (libpq checks the rest when connecting).
    public init?(_ url: String) {
        guard url.hasPrefix("postgresql://") || url.hasPrefix("postgres://") else { return nil }
        raw = url
    }

    /// The URI with any password replaced by `***`: safe for logs and error messages.
    public var description: String { redact(raw) }

    /// The password texts to scrub from messages: as written and percent-decoded.
    var secrets: [String] {
        var found: [String] = []
        let afterScheme = raw.split(separator: "://", maxSplits: 1).last.map(String.init) ?? ""
        let authority = afterScheme.prefix { $0 != "/" && $0 != "?" }
        if let at = authority.lastIndex(of: "@") {
            let userinfo = authority[..<at]
            if let colon = userinfo.firstIndex(of: ":") {
                found.append(String(userinfo[userinfo.index(after: colon)...]))
            }
        }
        if let query = raw.split(separator: "?", maxSplits: 1).dropFirst().first {
            for pair in query.split(separator: "&") where pair.hasPrefix("password=") {
                found.append(String(pair.dropFirst("password=".count)))
            }
        }
        let decoded = found.compactMap(Self.percentDecoded)
        return (found + decoded).filter { !$0.isEmpty }
    }

    /// `text` with every password form replaced by `***`.
    func redact(_ text: String) -> String {
        // Longest first, so a decoded form that is a prefix of the raw one leaves no tail behind.
        secrets.sorted { $0.count > $1.count }.reduce(text) { $0.replacingOccurrences(of: $1, with: "***") }
    }

    static func percentDecoded(_ text: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                      let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16) else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
