/// The character encodings feeds arrive in; each document is transcoded to UTF-8 before the XML
/// reader sees it.
///
/// Which encoding a document is in, first match wins:
/// 1. a byte order mark (UTF-8, UTF-16 LE/BE), or a UTF-16 `<` with no mark (XML 1.0 appendix F):
///    the bytes themselves cannot lie, so this beats every label (RFC 7303 §3 says the same);
/// 2. the HTTP `Content-Type` charset: feedparser and RFC 3023/7303 put the transport's word
///    above the document's own;
/// 3. the `encoding` of the XML declaration;
/// 4. UTF-8.
/// A label whose decoding fails (servers stamp `charset=utf-8` on Latin-1 files) gives way to the
/// next, as feedparser's list does; unlike feedparser, no guess is made past the labels (its last
/// resort, Windows-1252 over a document labelled UTF-8, turns every accented letter into two), so
/// invalid UTF-8 is refused in words.
enum FeedEncoding: Sendable, Equatable {
    case utf8
    case utf16LittleEndian
    case utf16BigEndian
    /// Also read for ISO-8859-1 and US-ASCII labels, as browsers do (WHATWG Encoding): the two
    /// differ only in 0x80–0x9F, control characters in ISO-8859-1 that no feed means.
    case windows1252
    /// ISO-8859-15: ISO-8859-1 with the euro sign and seven letters in place of symbols.
    case latin9

    /// The encoding a charset label names; nil for one not supported.
    init?(label: String) {
        switch label.lowercased() {
        case "utf-8", "utf8", "unicode-1-1-utf-8": self = .utf8
        case "utf-16le", "utf16le": self = .utf16LittleEndian
        case "utf-16be", "utf16be": self = .utf16BigEndian
        // Without a mark, WHATWG reads a bare "utf-16" as little-endian (Windows writes it so).
        case "utf-16", "utf16", "ucs-2", "iso-10646-ucs-2": self = .utf16LittleEndian
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "latin-1", "l1", "cp819", "ibm819",
             "windows-1252", "cp1252", "x-cp1252", "us-ascii", "ascii": self = .windows1252
        case "iso-8859-15", "iso8859-15", "iso_8859-15", "latin9", "latin-9", "l9": self = .latin9
        default: return nil
        }
    }

    /// `bytes` as UTF-8 with any byte order mark removed; `charset` is the HTTP `Content-Type`'s.
    static func utf8(_ bytes: [UInt8], charset: String? = nil) throws(FeedError) -> [UInt8] {
        if let (encoding, markLength) = sniff(bytes) {
            guard let out = encoding.decode(bytes[markLength...]) else {
                throw FeedError(.encoding, "the feed is not valid \(encoding.name) text")
            }
            return out
        }
        var labels: [String] = []
        if let charset, !charset.isEmpty { labels.append(charset) }
        if let declared = declaredEncoding(bytes) { labels.append(declared) }
        var tried: [FeedEncoding] = []
        for label in labels {
            guard let encoding = FeedEncoding(label: label) else {
                throw FeedError(.encoding, "the feed is encoded in \(label.prefix(40)), which is not supported")
            }
            guard !tried.contains(encoding) else { continue }
            tried.append(encoding)
            if let out = encoding.decode(bytes[...]) { return out }
        }
        if !tried.contains(.utf8), let out = FeedEncoding.utf8.decode(bytes[...]) { return out }
        throw FeedError(.encoding, "the feed is not valid \((tried.first ?? .utf8).name) text")
    }

    /// The charset parameter of a `Content-Type` value (`text/xml; charset="ISO-8859-1"`).
    static func charset(ofContentType value: String) -> String? {
        for parameter in value.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingWhitespace().lowercased() == "charset" else { continue }
            let name = pair[1].trimmingWhitespace().filter { $0 != "\"" && $0 != "'" }
            return name.isEmpty || name.utf8.count > 40 ? nil : name
        }
        return nil
    }

    var name: String {
        switch self {
        case .utf8: "UTF-8"
        case .utf16LittleEndian: "UTF-16LE"
        case .utf16BigEndian: "UTF-16BE"
        case .windows1252: "Windows-1252"
        case .latin9: "ISO-8859-15"
        }
    }

    /// What the first bytes say for themselves: a byte order mark (and its length) or a UTF-16 `<`.
    static func sniff(_ bytes: [UInt8]) -> (FeedEncoding, Int)? {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { return (.utf8, 3) }
        if bytes.starts(with: [0xFF, 0xFE]) { return (.utf16LittleEndian, 2) }
        if bytes.starts(with: [0xFE, 0xFF]) { return (.utf16BigEndian, 2) }
        // XML never holds a NUL, so a zero byte beside the opening '<' can only be UTF-16.
        if bytes.starts(with: [0x3C, 0x00]) { return (.utf16LittleEndian, 0) }
        if bytes.starts(with: [0x00, 0x3C]) { return (.utf16BigEndian, 0) }
        return nil
    }

    /// The `encoding` pseudo-attribute of an XML declaration in an ASCII-compatible document.
    static func declaredEncoding(_ bytes: [UInt8]) -> String? {
        guard bytes.starts(with: Array("<?xml".utf8)), let end = bytes.prefix(512).firstRange(of: Array("?>".utf8)) else { return nil }
        let declaration = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        guard let range = declaration.firstRange(of: "encoding") else { return nil }
        let rest = declaration[range.upperBound...].drop { $0 == " " || $0 == "=" || $0 == "\"" || $0 == "'" || $0 == "\t" }
        let name = String(rest.prefix { $0 != "\"" && $0 != "'" && $0 != " " && $0 != "?" })
        return name.isEmpty ? nil : name
    }

    /// `bytes` in this encoding as UTF-8; nil when they are not valid in it.
    func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        switch self {
        case .utf8:
            return String(validating: bytes, as: UTF8.self) == nil ? nil : Array(bytes)
        case .utf16LittleEndian, .utf16BigEndian:
            guard bytes.count % 2 == 0 else { return nil }
            var units: [UInt16] = []
            units.reserveCapacity(bytes.count / 2)
            var j = bytes.startIndex
            while j < bytes.endIndex {
                let (a, b) = (UInt16(bytes[j]), UInt16(bytes[j + 1]))
                units.append(self == .utf16LittleEndian ? a | b << 8 : a << 8 | b)
                j += 2
            }
            return String(validating: units, as: UTF16.self).map { Array($0.utf8) }
        case .windows1252, .latin9:
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + bytes.count / 8)
            for b in bytes {
                if b < 0x80 { out.append(b); continue }
                let scalar = (self == .windows1252 ? FeedEncoding.windows1252High : FeedEncoding.latin9High)[b] ?? Unicode.Scalar(b)
                out.append(contentsOf: String(scalar).utf8)
            }
            return out
        }
    }

    /// Where Windows-1252 departs from ISO-8859-1 (its five unassigned bytes stay as they are).
    static let windows1252High: [UInt8: Unicode.Scalar] = [
        0x80: "\u{20AC}", 0x82: "\u{201A}", 0x83: "\u{0192}", 0x84: "\u{201E}", 0x85: "\u{2026}", 0x86: "\u{2020}",
        0x87: "\u{2021}", 0x88: "\u{02C6}", 0x89: "\u{2030}", 0x8A: "\u{0160}", 0x8B: "\u{2039}", 0x8C: "\u{0152}",
        0x8E: "\u{017D}", 0x91: "\u{2018}", 0x92: "\u{2019}", 0x93: "\u{201C}", 0x94: "\u{201D}", 0x95: "\u{2022}",
        0x96: "\u{2013}", 0x97: "\u{2014}", 0x98: "\u{02DC}", 0x99: "\u{2122}", 0x9A: "\u{0161}", 0x9B: "\u{203A}",
        0x9C: "\u{0153}", 0x9E: "\u{017E}", 0x9F: "\u{0178}",
    ]

    /// Where ISO-8859-15 departs from ISO-8859-1.
    static let latin9High: [UInt8: Unicode.Scalar] = [
        0xA4: "\u{20AC}", 0xA6: "\u{0160}", 0xA8: "\u{0161}", 0xB4: "\u{017D}", 0xB8: "\u{017E}", 0xBC: "\u{0152}",
        0xBD: "\u{0153}", 0xBE: "\u{0178}",
    ]
}
