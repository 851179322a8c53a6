import SGEMHTTP
import SGEMSupport

/// One entry of a feed as kept: plain-text title, a safe link or none, a date or none, and the
/// key that identifies it within its feed.
struct FeedEntry: Sendable, Equatable {
    var key: String
    var title: String
    var url: String?
    var publishedAt: Timestamp?
}

/// A feed read from its document: its own title and its newest entries.
struct ParsedFeed: Sendable, Equatable {
    var title: String?
    var entries: [FeedEntry]
}

/// Reads RSS 2.0 (and 0.9x), RSS 1.0 (RDF) and Atom 1.0 documents into `ParsedFeed`s: titles as
/// plain text, links only when absolute http(s), dates from RFC 822 or RFC 3339. Never keeps any
/// of the feed's markup.
enum FeedParser {
    static let atom = "http://www.w3.org/2005/Atom"
    static let rss1 = "http://purl.org/rss/1.0/"
    static let rss090 = "http://my.netscape.com/rdf/simple/0.9/"
    static let rdf = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
    static let dublinCore = "http://purl.org/dc/elements/1.1/"
    static let mediaRSS = "http://search.yahoo.com/mrss/"
    /// Namespaces RSS 2.0 has been given as a default (`<rss xmlns="…">`); its elements are the same.
    static let rss2Namespaces: Set<String> = ["http://backend.userland.com/rss2", "http://backend.userland.com/rss",
                                              "http://blogs.law.harvard.edu/tech/rss"]

    /// Longest title kept, in characters.
    static let maxTitle = 300
    /// Longest title made from the start of an untitled post's text, in characters.
    static let maxExcerpt = 140
    /// Most bytes of a title's source (markup included) looked at.
    static let maxRawTitle = 16 * 1024
    /// Longest link kept, in bytes.
    static let maxURL = 2048
    /// Longest entry key kept, in bytes.
    static let maxKey = 512

    /// Parses `bytes` fetched from `base` and keeps the newest `maxEntries` entries.
    /// `charset` is the HTTP `Content-Type`'s, when the server named one.
    static func parse(_ bytes: [UInt8], base: HTTPClientURL? = nil, charset: String? = nil, maxEntries: Int = 20,
                      limits: FeedXML.Limits = FeedXML.Limits()) throws(FeedError) -> ParsedFeed {
        let root = try FeedXML.parse(bytes, charset: charset, limits: limits)
        var feed: ParsedFeed
        switch (root.localName, root.namespace) {
        case let ("rss", ns) where ns.map(rss2Namespaces.contains) ?? true:
            guard let channel = root.child("channel", ns) else { throw FeedError(.notAFeed, "the RSS feed has no <channel>") }
            // Some generators close the channel before their items; feedparser reads those too.
            let items = channel.elements("item", ns) + root.elements("item", ns)
            feed = ParsedFeed(title: rssText(channel.child("title", ns)),
                              entries: items.compactMap { rssItem($0, namespace: ns, base: base) })
        case ("RDF", rdf):
            let ns = root.child("channel", rss1) != nil || !root.elements("item", rss1).isEmpty ? rss1 : rss090
            feed = ParsedFeed(title: rssText(root.child("channel", ns)?.child("title", ns)),
                              entries: root.elements("item", ns).compactMap { rssItem($0, namespace: ns, base: base) })
        case ("feed", atom):
            feed = ParsedFeed(title: atomText(root.child("title", atom)),
                              entries: root.elements("entry", atom).compactMap { atomEntry($0, base: base) })
        default:
            throw FeedError(.notAFeed, "the document is not an RSS or Atom feed (its root element is <\(root.localName.prefix(40))>)")
        }
        if feed.title?.isEmpty == true { feed.title = nil }
        var seen = Set<String>()
        feed.entries = feed.entries.filter { seen.insert($0.key).inserted }
        // Feeds list newest first as a rule; when every entry is dated, the dates decide.
        if feed.entries.allSatisfy({ $0.publishedAt != nil }) {
            feed.entries = feed.entries.enumerated().sorted {
                ($0.element.publishedAt!, -$0.offset) > ($1.element.publishedAt!, -$1.offset)
            }.map(\.element)
        }
        feed.entries = Array(feed.entries.prefix(maxEntries))
        return feed
    }

    private static func rssItem(_ item: FeedXML.Element, namespace ns: String?, base: HTTPClientURL?) -> FeedEntry? {
        let guid = item.child("guid", ns)
        // A permalink guid stands in for a missing link (RSS 2.0 says it is one unless told not).
        let permalink = guid.flatMap { $0.attribute("isPermaLink") == "false" ? nil : $0.text }
        let link = item.child("link", ns).map(\.text).flatMap { $0.trimmingWhitespace().isEmpty ? nil : $0 } ?? permalink
        let date = item.child("pubDate", ns)?.text ?? item.child("date", dublinCore)?.text
        // Posts without a title (a Mastodon account's) are named by the start of their text.
        let title = nonEmpty(rssText(item.child("title", ns))) ?? extensionTitle(item)
            ?? item.child("description", ns).map { plainText($0.text, html: true, maxLength: maxExcerpt) }
        return entry(title: title, link: link, date: date, id: guid?.text ?? item.attribute("about", rdf), base: base)
    }

    private static func atomEntry(_ entry: FeedXML.Element, base: HTTPClientURL?) -> FeedEntry? {
        // The alternate link is the entry's page; enclosures, "related" and "self" links are not.
        // An entry with none is often identified by its permalink, which feedparser then uses.
        let alternates = entry.elements("link", atom).filter { ($0.attribute("rel") ?? "alternate") == "alternate" }
        let alternate = alternates.first { $0.attribute("type").map(isHTMLType) ?? true } ?? alternates.first
        let id = entry.child("id", atom)?.text
        let link = alternate?.attribute("href") ?? id.flatMap { isHTTP($0) ? $0 : nil }
        let date = entry.child("published", atom)?.text ?? entry.child("updated", atom)?.text
        let title = nonEmpty(atomText(entry.child("title", atom))) ?? extensionTitle(entry)
            ?? atomText(entry.child("summary", atom) ?? entry.child("content", atom), maxLength: maxExcerpt)
        return self.entry(title: title, link: link, date: date, id: id, base: base)
    }

    /// A title from an extension when the item has none of its own: Dublin Core's, then Media
    /// RSS's (on the item, in its `media:group` or on its first `media:content`).
    private static func extensionTitle(_ item: FeedXML.Element) -> String? {
        if let title = nonEmpty(rssText(item.child("title", dublinCore))) { return title }
        let group = item.child("group", mediaRSS)
        let holders = [item, group, item.child("content", mediaRSS), group?.child("content", mediaRSS)].compactMap { $0 }
        for holder in holders {
            guard let title = holder.child("title", mediaRSS) else { continue }
            // Media RSS says plain unless type="html".
            if let text = nonEmpty(plainText(title.text, html: title.attribute("type") == "html")) { return text }
        }
        return nil
    }

    private static func nonEmpty(_ text: String?) -> String? {
        text.flatMap { $0.isEmpty ? nil : $0 }
    }

    private static func isHTTP(_ link: String) -> Bool {
        ["http", "https"].contains(scheme(of: link.trimmingWhitespace()))
    }

    private static func isHTMLType(_ type: String) -> Bool {
        ["text/html", "application/xhtml+xml", "html", "xhtml"].contains(type.lowercased())
    }

    private static func entry(title: String?, link: String?, date: String?, id: String?, base: HTTPClientURL?) -> FeedEntry? {
        let url = link.flatMap { safeLink($0, base: base) }
        let title = title.flatMap { $0.isEmpty ? nil : $0 } ?? url
        guard let title else { return nil }
        let id = id.map { $0.trimmingWhitespace() }.flatMap { $0.isEmpty ? nil : $0 }
        let key = id ?? link?.trimmingWhitespace() ?? title
        return FeedEntry(key: String(key.utf8.prefix(maxKey)) ?? String(key.prefix(maxKey / 4)), title: title, url: url,
                         publishedAt: date.flatMap(parseDate))
    }

    /// An Atom text construct as plain text: `html` is unescaped markup, `xhtml` child elements
    /// (whose text is already plain: its `&lt;` was text, not a tag), `text` (the default) plain.
    private static func atomText(_ element: FeedXML.Element?, maxLength: Int = maxTitle) -> String? {
        guard let element else { return nil }
        let type = element.attribute("type")?.lowercased()
        return plainText(element.text, html: type == "html" || type == "text/html", maxLength: maxLength)
    }

    /// An RSS title as plain text. RSS never says whether a title is markup, so it is read as
    /// HTML only when it looks like it (feedparser's test): a closing tag or a character
    /// reference. "History of the <blink> tag" keeps its words; "<b>New</b> office" loses its tags.
    private static func rssText(_ element: FeedXML.Element?) -> String? {
        element.map { plainText($0.text, html: looksLikeHTML($0.text)) }
    }

    /// Whether `text` holds a closing tag (`</b>`) or a character reference (`&amp;`, `&#233;`).
    static func looksLikeHTML(_ text: String) -> Bool {
        let b = Array(text.utf8.prefix(maxRawTitle))
        for (n, c) in b.enumerated() where c == 0x3C || c == 0x26 {
            var j = n + 1
            if c == 0x3C {
                guard j < b.count, b[j] == 0x2F else { continue }
                j += 1
            } else if j < b.count, b[j] == 0x23 {
                j += 1
            }
            let start = j
            while j < b.count, j - start < 32, isWordByte(b[j]) { j += 1 }
            if j > start, j < b.count, b[j] == (c == 0x3C ? 0x3E : 0x3B) { return true }
        }
        return false
    }

    private static func isWordByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
    }

    // MARK: Plain text

    /// `raw` as one line of plain text: markup (when `html`) stripped with script and style
    /// content, HTML entities decoded, control characters dropped, whitespace collapsed, capped.
    static func plainText(_ raw: String, html: Bool, maxLength: Int = maxTitle) -> String {
        // A title longer than this is not a title; the cap also bounds the markup work below.
        let capped = raw.utf8.count > maxRawTitle ? String(decoding: raw.utf8.prefix(maxRawTitle), as: UTF8.self) : raw
        let text = html ? decodeHTMLEntities(stripTags(capped)) : capped
        var out = ""
        var pendingSpace = false
        var count = 0
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace || scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                pendingSpace = !out.isEmpty
                continue
            }
            // Bidirectional overrides and zero-width controls could disguise a title.
            if (0x202A...0x202E).contains(scalar.value) || (0x2066...0x2069).contains(scalar.value) || scalar.value == 0xFEFF { continue }
            if pendingSpace { out.unicodeScalars.append(" "); pendingSpace = false; count += 1 }
            out.unicodeScalars.append(scalar)
            count += 1
            if count >= maxLength * 2 { break }
        }
        if out.count > maxLength { out = String(out.prefix(maxLength - 1)) + "…" }
        return out
    }

    /// `html` without its tags; the content of `script` and `style` elements goes with them.
    static func stripTags(_ html: String) -> String {
        var out = ""
        var rest = Substring(html)
        while let lt = rest.firstIndex(of: "<") {
            out += rest[..<lt]
            let after = rest[rest.index(after: lt)...]
            guard let first = after.first, first.isLetter || first == "/" || first == "!" || first == "?" else {
                out += "<"
                rest = after
                continue
            }
            // No '>' anywhere after: no later '<' can start a tag either.
            guard let gt = after.firstIndex(of: ">") else {
                out += rest[lt...]
                return out
            }
            let tag = after[..<gt].lowercased()
            rest = after[after.index(after: gt)...]
            // Block boundaries separate words ("<p>one</p><p>two</p>"); inline tags do not.
            let name = tag.drop { $0 == "/" }.prefix { $0.isLetter || $0.isNumber }
            if blockTags.contains(String(name)) { out += " " }
            guard let hidden = ["script", "style"].first(where: { tag == $0 || tag.hasPrefix($0 + " ") || tag.hasPrefix($0 + "\t") || tag.hasPrefix($0 + "\n") }) else {
                continue
            }
            // Skip to the end of the matching close tag; an unclosed one hides the rest.
            var search = rest
            rest = ""
            while let open = search.firstIndex(of: "<") {
                let candidate = search[search.index(after: open)...]
                if candidate.prefix(hidden.count + 1).lowercased() == "/" + hidden {
                    rest = candidate.firstIndex(of: ">").map { candidate[candidate.index(after: $0)...] } ?? ""
                    break
                }
                search = candidate
            }
        }
        out += rest
        return out
    }

    static let blockTags: Set<String> = ["p", "br", "div", "li", "ul", "ol", "h1", "h2", "h3", "h4", "h5", "h6", "blockquote",
                                         "tr", "td", "th", "pre", "hr", "section", "article", "header", "footer", "dd", "dt"]

    /// HTML character references decoded once (unknown names stay as written).
    static func decodeHTMLEntities(_ text: String) -> String {
        guard text.contains("&") else { return text }
        var out = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            out += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(10).firstIndex(of: ";") {
                let name = String(after[..<semicolon])
                var value: String?
                if name.hasPrefix("#x") || name.hasPrefix("#X") {
                    value = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init).map { String($0) }
                } else if name.hasPrefix("#") {
                    value = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init).map { String($0) }
                } else {
                    value = FeedXML.htmlEntities[name]
                }
                if let value {
                    out += value
                    rest = after[after.index(after: semicolon)...]
                    continue
                }
            }
            out += "&"
            rest = after
        }
        out += rest
        return out
    }

    // MARK: Links

    /// `raw` as an absolute http(s) URL, a relative reference resolved against `base` (the
    /// feed's address, RFC 3986 §5.2, as feedparser resolves them); nil for anything else
    /// (`javascript:`, `data:`, user info, spaces, …).
    static func safeLink(_ raw: String, base: HTTPClientURL?) -> String? {
        let link = raw.trimmingWhitespace()
        guard !link.isEmpty, link.utf8.count <= maxURL else { return nil }
        var candidate = link
        if let scheme = scheme(of: link) {
            guard scheme == "http" || scheme == "https" else { return nil }
        } else {
            guard let base else { return nil }
            candidate = link.hasPrefix("//") ? base.scheme.rawValue + ":" + link : resolve(link, against: base)
        }
        guard candidate.utf8.count <= maxURL, (try? HTTPClientURL(candidate)) != nil else { return nil }
        return candidate
    }

    /// The lower-cased scheme of `link` (`letter *(letter / digit / + / - / .)` before a ':'), if any.
    private static func scheme(of link: String) -> String? {
        let name = link.prefix { $0 != ":" && $0 != "/" && $0 != "?" && $0 != "#" }
        guard name.endIndex < link.endIndex, link[name.endIndex] == ":", let first = name.first, first.isASCII, first.isLetter,
              name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "+-.".contains($0)) }) else { return nil }
        return name.lowercased()
    }

    /// A relative reference without a scheme or authority resolved against `base`.
    static func resolve(_ link: String, against base: HTTPClientURL) -> String {
        let root = base.scheme.rawValue + "://" + base.hostHeader
        let basePath = base.target.prefix { $0 != "?" && $0 != "#" }
        if link.hasPrefix("#") { return root + base.target.prefix { $0 != "#" } + link }
        if link.hasPrefix("?") { return root + basePath + link }
        let path = link.prefix { $0 != "?" && $0 != "#" }
        // A relative path replaces the base's last segment.
        let directory = basePath.lastIndex(of: "/").map { basePath[...$0] } ?? "/"
        let merged = path.hasPrefix("/") ? String(path) : String(directory) + path
        return root + removingDotSegments(merged) + link[path.endIndex...]
    }

    /// `path` with its `.` and `..` segments applied (RFC 3986 §5.2.4); `..` stops at the root.
    static func removingDotSegments(_ path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        var out: [Substring] = []
        for (n, segment) in segments.enumerated() {
            let last = n == segments.count - 1
            if segment == ".." {
                if out.count > 1 { out.removeLast() }
            } else if segment != "." {
                out.append(segment)
                continue
            }
            // A trailing "." or ".." names a directory: keep its slash.
            if last { out.append("") }
        }
        return out.joined(separator: "/")
    }

    // MARK: Dates

    /// A date in RFC 3339 (Atom, Dublin Core; also a bare `YYYY-MM-DD`) or RFC 822 (RSS) form;
    /// nil when it is neither.
    static func parseDate(_ raw: String) -> Timestamp? {
        let text = raw.trimmingWhitespace()
        guard !text.isEmpty, text.utf8.count <= 64 else { return nil }
        let stamp = Timestamp(rfc3339: text.uppercased()) ?? rfc3339WithoutSeconds(text) ?? looseISO(text) ?? rfc822(text)
        guard let stamp, stamp.seconds >= 0, stamp.seconds < 253_402_300_800 else { return nil }
        return stamp
    }

    /// `YYYY-MM-DD` and `YYYY-MM-DDTHH:MM(Z|±HH:MM)` (W3C date-time profiles Dublin Core uses).
    private static func rfc3339WithoutSeconds(_ text: String) -> Timestamp? {
        let t = text.uppercased()
        if t.utf8.count == 10 { return Timestamp(rfc3339: t + "T00:00:00Z") }
        let b = Array(t.utf8)
        guard b.count >= 17, b[10] == 0x54, b[13] == 0x3A, b[16] != 0x3A else { return nil }
        return Timestamp(rfc3339: String(t.prefix(16)) + ":00" + t.dropFirst(16))
    }

    /// `2025-12-02 10:30:00[+01:00]` and zoneless `2025-12-02T10:30:00`, which feedparser reads
    /// (a missing zone as UTC).
    private static func looseISO(_ text: String) -> Timestamp? {
        var b = Array(text.uppercased().utf8)
        guard b.count >= 16, b[4] == 0x2D, b[7] == 0x2D, b[10] == 0x20 || b[10] == 0x54 else { return nil }
        b[10] = 0x54
        let zoned = b[11...].contains { $0 == 0x5A || $0 == 0x2B || $0 == 0x2D }
        let t = String(decoding: b, as: UTF8.self) + (zoned ? "" : "Z")
        return Timestamp(rfc3339: t) ?? rfc3339WithoutSeconds(t)
    }

    static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    static let zones: [String: Int] = [
        "GMT": 0, "UT": 0, "UTC": 0, "Z": 0, "EST": -5, "EDT": -4, "CST": -6, "CDT": -5, "MST": -7, "MDT": -6, "PST": -8, "PDT": -7,
    ]

    /// `[Wed,] 02 Oct 2002 13:00[:00] (GMT|+0200|EST|…)`; a missing zone reads as UTC.
    static func rfc822(_ text: String) -> Timestamp? {
        var words = text.replacingOccurrences(of: ",", with: " ").split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        if let first = words.first, first.allSatisfy(\.isLetter) { words.removeFirst() }
        guard words.count == 4 || words.count == 5,
              let day = Int(words[0]), (1...31).contains(day),
              let month = months.firstIndex(of: String(words[1].lowercased().prefix(3))).map({ $0 + 1 }),
              words[1].count >= 3, words[2].allSatisfy(\.isNumber), var year = Int(words[2]) else { return nil }
        if words[2].count == 2 { year += year < 50 ? 2000 : 1900 } else if words[2].count != 4 { return nil }
        guard day <= CivilTime.daysIn(month: month, year: year) else { return nil }
        let clock = words[3].split(separator: ":").map { Int($0) }
        guard clock.count == 2 || clock.count == 3, clock.allSatisfy({ $0 != nil }),
              let hour = clock[0], let minute = clock[1], hour < 24, minute < 60 else { return nil }
        let second = clock.count == 3 ? clock[2]! : 0
        guard second < 61 else { return nil }
        var offset = 0
        if words.count == 5 {
            let zone = words[4].uppercased()
            if let hours = zones[zone] {
                offset = hours * 3600
            } else {
                let digits = zone.dropFirst().filter { $0 != ":" }
                guard let sign = zone.first, sign == "+" || sign == "-", digits.count == 4, digits.allSatisfy(\.isNumber),
                      let hh = Int(digits.prefix(2)), let mm = Int(digits.suffix(2)), hh < 24, mm < 60 else { return nil }
                offset = (hh * 3600 + mm * 60) * (sign == "-" ? -1 : 1)
            }
        }
        let days = CivilTime.daysFromCivil(year: year, month: month, day: day)
        return Timestamp(seconds: Int64(days) * 86400 + Int64(hour * 3600 + minute * 60 + min(second, 59) - offset))
    }
}
