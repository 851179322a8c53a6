import SGEMHTTP
import SGEMSupport
import Testing
@testable import SGEMCompany

/// Sample documents shared by the parser and fetcher tests.
enum FeedSamples {
    static let rss2 = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:atom="http://www.w3.org/2005/Atom">
          <channel>
            <title>Acme &amp; Co blog</title>
            <link>https://acme.example/</link>
            <atom:link href="https://acme.example/feed.xml" rel="self"/>
            <item>
              <title>Older post</title>
              <link>https://acme.example/older</link>
              <guid isPermaLink="false">post-1</guid>
              <pubDate>Mon, 01 Dec 2025 09:00:00 GMT</pubDate>
            </item>
            <item>
              <title><![CDATA[New <b>office</b> opens]]></title>
              <link>/news/office</link>
              <guid>post-2</guid>
              <pubDate>Tue, 02 Dec 2025 10:30:00 +0100</pubDate>
            </item>
          </channel>
        </rss>
        """

    static let atom = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom">
          <title type="text">Acme news</title>
          <id>urn:uuid:feed</id>
          <entry>
            <title type="html">Q4 &lt;em&gt;results&lt;/em&gt;</title>
            <link rel="alternate" type="text/html" href="https://news.acme.example/q4"/>
            <link rel="enclosure" href="https://news.acme.example/q4.pdf"/>
            <id>urn:uuid:q4</id>
            <updated>2025-12-03T08:00:00Z</updated>
          </entry>
          <entry>
            <title>Welcome</title>
            <link href="https://news.acme.example/welcome"/>
            <id>urn:uuid:welcome</id>
            <published>2025-11-30T12:00:00+02:00</published>
          </entry>
        </feed>
        """

    static let rss1 = """
        <?xml version="1.0"?>
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
                 xmlns:dc="http://purl.org/dc/elements/1.1/">
          <channel rdf:about="https://rdf.example/"><title>RDF site</title><link>https://rdf.example/</link></channel>
          <item rdf:about="https://rdf.example/a"><title>First</title><link>https://rdf.example/a</link><dc:date>2025-10-01T10:00Z</dc:date></item>
          <item rdf:about="https://rdf.example/b"><title>Second</title><link>https://rdf.example/b</link><dc:date>2025-10-02</dc:date></item>
        </rdf:RDF>
        """

    /// A feed whose titles and links try to run script.
    static let hostile = """
        <rss version="2.0"><channel><title>Evil &lt;script&gt;alert(1)&lt;/script&gt;feed</title>
          <item><title>&lt;script&gt;alert("x")&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;Hello</title>
            <link>javascript:alert(3)</link><guid>h1</guid></item>
          <item><title>Data link</title><link>data:text/html,&lt;script&gt;alert(4)&lt;/script&gt;</link><guid>h2</guid></item>
          <item><title>With user</title><link>https://user:pw@evil.example/</link><guid>h3</guid></item>
        </channel></rss>
        """

    static func rss(items: Int, title: String = "Generated") -> String {
        var s = "<rss version=\"2.0\"><channel><title>\(title)</title>"
        for n in 0..<items {
            let day = String(n % 28 + 1).leftPadded(2)
            s += "<item><title>Item \(n)</title><link>https://gen.example/\(n)</link><pubDate>\(day) Nov 2025 10:00:00 GMT</pubDate></item>"
        }
        return s + "</channel></rss>"
    }
}

extension String {
    func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

@Suite("Feed parser")
struct FeedParserTests {
    let base = try! HTTPClientURL("https://acme.example/feed.xml")

    @Test("RSS 2.0: title with entities, CDATA markup as text, relative link resolved, dated entries newest first")
    func rss2() throws {
        let feed = try FeedParser.parse(Array(FeedSamples.rss2.utf8), base: base)
        #expect(feed.title == "Acme & Co blog")
        #expect(feed.entries.map(\.title) == ["New office opens", "Older post"])
        #expect(feed.entries.map(\.url) == ["https://acme.example/news/office", "https://acme.example/older"])
        #expect(feed.entries.map(\.key) == ["post-2", "post-1"])
        #expect(feed.entries[0].publishedAt?.rfc3339() == "2025-12-02T09:30:00Z")
        #expect(feed.entries[1].publishedAt?.rfc3339() == "2025-12-01T09:00:00Z")
    }

    @Test("Atom 1.0: html titles become text, the alternate link, published or updated dates")
    func atom() throws {
        let feed = try FeedParser.parse(Array(FeedSamples.atom.utf8), base: base)
        #expect(feed.title == "Acme news")
        #expect(feed.entries.map(\.title) == ["Q4 results", "Welcome"])
        #expect(feed.entries.map(\.url) == ["https://news.acme.example/q4", "https://news.acme.example/welcome"])
        #expect(feed.entries.map(\.key) == ["urn:uuid:q4", "urn:uuid:welcome"])
        #expect(feed.entries[1].publishedAt?.rfc3339() == "2025-11-30T10:00:00Z")
    }

    @Test("RSS 1.0 (RDF): items beside the channel, Dublin Core dates, rdf:about keys")
    func rss1() throws {
        let feed = try FeedParser.parse(Array(FeedSamples.rss1.utf8), base: nil)
        #expect(feed.title == "RDF site")
        #expect(feed.entries.map(\.title) == ["Second", "First"])
        #expect(feed.entries.map(\.key) == ["https://rdf.example/b", "https://rdf.example/a"])
        #expect(feed.entries.map { $0.publishedAt?.rfc3339() } == ["2025-10-02T00:00:00Z", "2025-10-01T10:00:00Z"])
    }

    @Test("script and markup in titles become text; javascript:, data: and user-info links are dropped")
    func hostile() throws {
        let feed = try FeedParser.parse(Array(FeedSamples.hostile.utf8), base: base)
        #expect(feed.title == "Evil feed")
        #expect(feed.entries.map(\.title) == ["Hello", "Data link", "With user"])
        #expect(feed.entries.map(\.url) == [nil, nil, nil])
        for entry in feed.entries { #expect(!entry.title.contains("<") && !entry.title.contains("alert")) }
    }

    @Test("untitled posts (a Mastodon account's) are named by the start of their text; a permalink guid is the link")
    func untitled() throws {
        let mastodon = """
            <rss version="2.0"><channel><title>Acme (@acme@social.example)</title>
              <item><guid isPermaLink="true">https://social.example/@acme/1</guid><pubDate>Tue, 02 Dec 2025 10:00:00 +0000</pubDate>
                <description>&lt;p&gt;We are &lt;a href="https://social.example/tags/hiring"&gt;#hiring&lt;/a&gt; in Seville!&lt;/p&gt;&lt;p&gt;\(String(repeating: "More words. ", count: 30))&lt;/p&gt;</description></item>
              <item><guid isPermaLink="false">2</guid><description>No link here</description></item>
            </channel></rss>
            """
        let feed = try FeedParser.parse(Array(mastodon.utf8))
        #expect(feed.entries.map(\.url) == ["https://social.example/@acme/1", nil])
        #expect(feed.entries[0].title.hasPrefix("We are #hiring in Seville! More words."))
        #expect(feed.entries[0].title.count == FeedParser.maxExcerpt && feed.entries[0].title.hasSuffix("…"))
        #expect(feed.entries[1].title == "No link here")
        let atom = "<feed xmlns='http://www.w3.org/2005/Atom'><entry><id>a</id><summary type='html'>&lt;b&gt;Short&lt;/b&gt; note</summary></entry></feed>"
        #expect(try FeedParser.parse(Array(atom.utf8)).entries.map(\.title) == ["Short note"])
    }

    @Test("only the newest entries are kept, and keys repeated in one document are folded")
    func bounds() throws {
        let feed = try FeedParser.parse(Array(FeedSamples.rss(items: 45).utf8), maxEntries: 20)
        #expect(feed.entries.count == 20)
        let dates = feed.entries.compactMap(\.publishedAt)
        #expect(dates == dates.sorted(by: >))
        let repeated = "<rss><channel><item><title>A</title><guid>x</guid></item><item><title>B</title><guid>x</guid></item></channel></rss>"
        #expect(try FeedParser.parse(Array(repeated.utf8)).entries.map(\.title) == ["A"])
    }

    @Test("whitespace is collapsed, controls dropped, long titles capped")
    func plainText() throws {
        #expect(FeedParser.plainText("  a\n\t b\u{7}  c \u{202E}d ", html: false) == "a b c d")
        let long = FeedParser.plainText(String(repeating: "x", count: 5000), html: false)
        #expect(long.count == FeedParser.maxTitle && long.hasSuffix("…"))
        #expect(FeedParser.plainText("a &lt; b &amp;amp; <style>p{}</style><p>c</p> &eacute; &bogus;", html: true) == "a < b &amp; c é &bogus;")
    }

    @Test("links: absolute http(s) kept, relative references resolved against the feed's address, anything else dropped",
          arguments: [
              ("https://x.example/a?b=c#d", "https://x.example/a?b=c#d"),
              ("HTTP://x.example/", "HTTP://x.example/"),
              ("/path", "https://acme.example/path"),
              ("//cdn.example/p", "https://cdn.example/p"),
              ("relative/page.html", "https://acme.example/relative/page.html"),
              ("../../up/./page", "https://acme.example/up/page"),
              ("?page=2#top", "https://acme.example/feed.xml?page=2#top"),
              ("/a/b/../c/.", "https://acme.example/a/c/"),
              ("mailto:news@acme.example", nil),
              ("data:text/html,x", nil),
              ("javascript:alert(1)", nil),
              (" JavaScript:alert(1)", nil),
              ("vbscript:x", nil),
              ("ftp://x.example/", nil),
              ("https://x.example/with space", nil),
              ("https://a:b@x.example/", nil),
          ] as [(String, String?)])
    func links(_ raw: String, _ expected: String?) {
        #expect(FeedParser.safeLink(raw, base: base) == expected)
    }

    @Test("dates in RFC 822 and RFC 3339 forms; anything else is no date",
          arguments: [
              ("Wed, 02 Oct 2002 13:00:00 GMT", "2002-10-02T13:00:00Z"),
              ("Wed, 02 Oct 2002 15:00:00 +0200", "2002-10-02T13:00:00Z"),
              ("2 Oct 2002 08:00 EST", "2002-10-02T13:00:00Z"),
              ("Wed, 02 Oct 02 13:00:00 Z", "2002-10-02T13:00:00Z"),
              ("2002-10-02T13:00:00Z", "2002-10-02T13:00:00Z"),
              ("2002-10-02t15:00:00.250+02:00", "2002-10-02T13:00:00Z"),
              ("2002-10-02", "2002-10-02T00:00:00Z"),
              ("2002-10-02T13:00:00", "2002-10-02T13:00:00Z"),
              ("2002-10-02 13:00:00", "2002-10-02T13:00:00Z"),
              ("2002-10-02 15:00:00+02:00", "2002-10-02T13:00:00Z"),
              ("2002-10-02 13:00", "2002-10-02T13:00:00Z"),
              ("Wed, 02 Oct 2002 13:00:00 +00:00", "2002-10-02T13:00:00Z"),
              ("2002-10-02 25:00:00", nil),
              ("yesterday", nil),
              ("31 Feb 2002 10:00:00 GMT", nil),
              ("Wed, 02 Oct 2002 25:00:00 GMT", nil),
              ("", nil),
          ] as [(String, String?)])
    func dates(_ raw: String, _ expected: String?) {
        #expect(FeedParser.parseDate(raw)?.rfc3339() == expected)
    }

    @Test("refused documents say why in words",
          arguments: [
              ("<?xml version=\"1.0\"?><!DOCTYPE rss [<!ENTITY x \"boom\">]><rss><channel/></rss>", FeedError.Code.refused, "DOCTYPE"),
              ("<rss><channel><title>&x;</title></channel></rss>", .malformed, "not defined"),
              ("<rss><channel><title>Open</channel></rss>", .malformed, "does not match"),
              ("<rss><channel>", .malformed, "ends before"),
              ("<rss a=1/>", .malformed, "not quoted"),
              ("<rss/><rss/>", .malformed, "more than one root"),
              ("hello", .malformed, "does not start with an element"),
              ("<html><body>Not a feed</body></html>", .notAFeed, "not an RSS or Atom feed"),
              ("<x:rss><channel/></x:rss>", .malformed, "not declared"),
              ("<rss><channel><title>&#0;</title></channel></rss>", .malformed, "not allowed"),
              ("<rss>\u{1}</rss>", .malformed, "control character"),
              ("<rss/>", .notAFeed, "no <channel>"),
              // The DTD a DOCTYPE names is never fetched, so the entities it would define stay undefined.
              ("<!DOCTYPE rss SYSTEM \"http://dtd.example/rss.dtd\"><rss><channel><title>&custom;</title></channel></rss>", .malformed, "not defined"),
              ("<!DOCTYPE rss PUBLIC \"a>b\" \"c\" [<!ENTITY x 'y'>]><rss/>", .refused, "DOCTYPE declares entities"),
              ("<!DOCTYPE rss", .malformed, "DOCTYPE is not closed"),
              ("<rss><!DOCTYPE rss></rss>", .malformed, "starts no comment"),
          ] as [(String, FeedError.Code, String)])
    func refused(_ document: String, _ code: FeedError.Code, _ words: String) {
        do {
            _ = try FeedParser.parse(Array(document.utf8))
            Issue.record("accepted \(document)")
        } catch {
            #expect(error.code == code)
            #expect(error.message.contains(words), "\(error.message)")
        }
    }

    @Test("nesting deeper than the limit and too many elements are refused, without recursion")
    func limits() {
        let deep = String(repeating: "<a>", count: 100_000) + String(repeating: "</a>", count: 100_000)
        #expect(throws: FeedError.self) { try FeedXML.parse(Array(deep.utf8)) }
        do { _ = try FeedXML.parse(Array(deep.utf8)) } catch { #expect(error.message.contains("nested more than 48 deep")) }
        let wide = "<rss>" + String(repeating: "<i/>", count: 50_000) + "</rss>"
        do { _ = try FeedXML.parse(Array(wide.utf8)); Issue.record("accepted 50,000 elements") } catch {
            #expect(error.message.contains("more than 40000 elements"))
        }
    }

    @Test("pathological 2 MiB documents are read in linear time: unclosed tags in a title, text split by comments")
    func pathological() throws {
        // Speed is measured by scripts/bench/feed-xml.sh; here a quadratic pass would not finish.
        let tags = "<rss><channel><title><![CDATA[" + String(repeating: "<a", count: 1_000_000) + "]]></title></channel></rss>"
        #expect(try FeedParser.parse(Array(tags.utf8)).title?.count == FeedParser.maxTitle)
        let pieces = "<rss><channel><title>" + String(repeating: "x<!---->", count: 260_000) + "</title></channel></rss>"
        #expect(try FeedParser.parse(Array(pieces.utf8)).title?.count == FeedParser.maxTitle)
        let entities = "<rss><channel><title>" + String(repeating: "&amp;lt;b", count: 230_000) + "</title></channel></rss>"
        #expect(try FeedParser.parse(Array(entities.utf8)).title?.hasPrefix("<b<b") == true)
    }

    @Test("encodings: a UTF-8 BOM is fine, ISO-8859-1 is transcoded, invalid UTF-8 and a truncated UTF-16 document are refused")
    func encodings() throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF] + Array("<rss><channel><title>BOM</title></channel></rss>".utf8)
        #expect(try FeedParser.parse(bom).title == "BOM")
        let latin1: [UInt8] = Array("<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel><title>Espa".utf8) + [0xF1]
            + Array("a</title></channel></rss>".utf8)
        #expect(try FeedParser.parse(latin1).title == "España")
        let broken: [UInt8] = Array("<rss><channel><title>".utf8) + [0xC3, 0x28] + Array("</title></channel></rss>".utf8)
        #expect(throws: FeedError(.encoding, "the feed is not valid UTF-8 text")) { try FeedParser.parse(broken) }
        #expect(throws: FeedError.self) { try FeedParser.parse([0xFF, 0xFE, 0x3C, 0x00]) }
    }
}

@Suite("Feed parser: encodings, titles and links as feedparser reads them")
struct FeedReadingTests {
    static func latin1(_ text: String) -> [UInt8] { text.unicodeScalars.map { UInt8($0.value) } }
    static func utf16(_ text: String, bigEndian: Bool) -> [UInt8] {
        text.utf16.flatMap { bigEndian ? [UInt8($0 >> 8), UInt8($0 & 0xFF)] : [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
    }
    static func rss(title: String, declaring encoding: String? = nil) -> String {
        (encoding.map { "<?xml version=\"1.0\" encoding=\"\($0)\"?>" } ?? "") + "<rss><channel><title>\(title)</title></channel></rss>"
    }

    @Test("the bytes' own mark beats the HTTP charset, which beats the declaration, unless it does not decode",
          arguments: [
              ("a UTF-16LE mark over an ISO-8859-1 charset", [0xFF, 0xFE] + utf16(rss(title: "Ωmega"), bigEndian: false), "ISO-8859-1", "Ωmega"),
              ("UTF-16BE without a mark", utf16(rss(title: "Ωmega", declaring: "UTF-16BE"), bigEndian: true), nil, "Ωmega"),
              ("only the HTTP charset says ISO-8859-1", latin1(rss(title: "España")), "iso-8859-1", "España"),
              ("HTTP says UTF-8 over a Latin-1 declaration, and the bytes are UTF-8", Array(rss(title: "España", declaring: "ISO-8859-1").utf8), "utf-8", "España"),
              ("HTTP says UTF-8, the bytes are not: the declaration decodes", latin1(rss(title: "España", declaring: "ISO-8859-1")), "utf-8", "España"),
              ("Windows-1252 quotes and euro", latin1(rss(title: "\u{93}9\u{80}\u{94}", declaring: "windows-1252")), nil, "“9€”"),
              ("ISO-8859-1 read as Windows-1252", latin1(rss(title: "\u{91}ok\u{92}", declaring: "ISO-8859-1")), nil, "‘ok’"),
              ("ISO-8859-15's euro", latin1(rss(title: "5\u{A4}", declaring: "ISO-8859-15")), nil, "5€"),
          ] as [(String, [UInt8], String?, String)])
    func encodings(_ shape: String, _ bytes: [UInt8], _ charset: String?, _ title: String) throws {
        #expect(try FeedParser.parse(bytes, charset: charset).title == title, "\(shape)")
    }

    @Test("encodings that cannot be read are refused in words",
          arguments: [
              (Array(rss(title: "x", declaring: "KOI8-R").utf8), nil, "encoded in KOI8-R, which is not supported"),
              (Array(rss(title: "x").utf8), "shift_jis", "encoded in shift_jis, which is not supported"),
              ([0xFF, 0xFE] + utf16(rss(title: "x"), bigEndian: false) + [0x3C], nil, "not valid UTF-16LE text"),
              ([0xFE, 0xFF] + utf16("<rss><channel><title>", bigEndian: true) + [0xD8, 0x00] + utf16("</title></channel></rss>", bigEndian: true), nil,
               "not valid UTF-16BE text"),
          ] as [([UInt8], String?, String)])
    func encodingRefused(_ bytes: [UInt8], _ charset: String?, _ words: String) {
        #expect(throws: FeedError(.encoding, "the feed is \(words)")) { try FeedParser.parse(bytes, charset: charset) }
    }

    @Test("a bare '&' is itself and HTML's named entities are read, as feedparser reads them; other names are refused")
    func ampersands() throws {
        let document = "<rss><channel><title>Q&A: caf&eacute;&nbsp;&mdash; R & D</title><item><title>x</title>"
            + "<link>https://a.example/?q=1&page=2</link><guid>g</guid></item></channel></rss>"
        let feed = try FeedParser.parse(Array(document.utf8))
        #expect(feed.title == "Q&A: café — R & D")
        #expect(feed.entries.map(\.url) == ["https://a.example/?q=1&page=2"])
    }

    @Test("the charset of a Content-Type",
          arguments: [
              ("text/xml; charset=\"ISO-8859-1\"", "ISO-8859-1"),
              ("application/rss+xml;charset=utf-8", "utf-8"),
              ("text/xml; boundary=x; Charset = UTF-16", "UTF-16"),
              ("application/xml", nil),
              ("text/xml; charset=", nil),
          ] as [(String, String?)])
    func contentTypeCharset(_ value: String, _ charset: String?) {
        #expect(FeedEncoding.charset(ofContentType: value) == charset)
    }

    @Test("an RSS title is HTML only when it has a closing tag or a character reference (feedparser's test)",
          arguments: [
              ("History of the <blink> tag", false, "History of the <blink> tag"),
              ("Our <b>new</b> loaf", true, "Our new loaf"),
              ("AT&amp;T", true, "AT&T"),
              ("Fish & Chips", false, "Fish & Chips"),
              ("caf&#233;", true, "café"),
              ("a </ b> c", false, "a </ b> c"),
              ("x < y > z", false, "x < y > z"),
          ])
    func rssTitles(_ title: String, _ html: Bool, _ shown: String) throws {
        #expect(FeedParser.looksLikeHTML(title) == html)
        let document = "<rss><channel><item><title><![CDATA[\(title)]]></title><guid>g</guid></item></channel></rss>"
        #expect(try FeedParser.parse(Array(document.utf8)).entries.map(\.title) == [shown])
    }

    @Test("an Atom entry's link: the HTML alternate, else its id when that is http(s); never an enclosure or a related page",
          arguments: [
              ("<link rel='enclosure' href='https://a.example/e.mp3'/><link href='https://a.example/page'/>", "urn:x", "https://a.example/page"),
              ("<link rel='alternate' type='application/pdf' href='https://a.example/p.pdf'/><link rel='alternate' type='text/html' href='https://a.example/p'/>",
               "urn:x", "https://a.example/p"),
              ("<link rel='enclosure' href='https://a.example/e.mp3'/>", "https://a.example/posts/1", "https://a.example/posts/1"),
              ("<link rel='enclosure' href='https://a.example/e.mp3'/><link rel='related' href='https://b.example/'/>", "tag:a.example,2025:1", nil),
              ("", "urn:uuid:1", nil),
          ] as [(String, String, String?)])
    func atomLinks(_ links: String, _ id: String, _ url: String?) throws {
        let document = "<feed xmlns='http://www.w3.org/2005/Atom'><entry><title>T</title>\(links)<id>\(id)</id></entry></feed>"
        let entry = try #require(try FeedParser.parse(Array(document.utf8)).entries.first)
        #expect(entry.url == url)
        #expect(entry.key == id)
    }

    @Test("an untitled item takes dc:title, then media:title from the item, its group or its content, before its description",
          arguments: [
              ("<dc:title>Dublin</dc:title><media:title>Media</media:title>", "Dublin"),
              ("<media:group><media:content url='https://v.example/a.mp4'><media:title>Deep</media:title></media:content></media:group>", "Deep"),
              ("<media:title type='html'>&lt;b&gt;Bold&lt;/b&gt; clip</media:title>", "Bold clip"),
              ("<title></title><dc:title>Empty title skipped</dc:title>", "Empty title skipped"),
              ("<description>Only words</description>", "Only words"),
          ])
    func extensionTitles(_ children: String, _ title: String) throws {
        let document = """
            <rss xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:media="http://search.yahoo.com/mrss/"><channel>
            <item>\(children)<guid>g</guid></item></channel></rss>
            """
        #expect(try FeedParser.parse(Array(document.utf8)).entries.map(\.title) == [title])
    }
}
