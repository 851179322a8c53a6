import SGEMCore
import SGEMHTTP
import SGEMSupport
import Testing
@testable import SGEMCompany

/// One feed of the corpus in Fixtures/feeds and what a reader should take from it
/// (corpus.json; scripts/check-feeds.py holds feedparser to the same expectations).
struct CorpusFeed: Sendable, CustomTestStringConvertible {
    struct Entry: Sendable, Equatable, CustomStringConvertible {
        var title: String
        var link: String?
        var date: String?
        var description: String { "\(title) | \(link ?? "-") | \(date ?? "-")" }
    }

    var file: String
    /// Where the feed was fetched from, when its links are relative.
    var url: String?
    var contentType: String?
    var title: String
    var entries: [Entry]
    var testDescription: String { file }

    /// Beside this file in the source tree (test targets here carry no resource bundle).
    static let directory = "/" + "\(#filePath)".split(separator: "/").dropLast().joined(separator: "/") + "/Fixtures/feeds"

    /// Every feed listed in corpus.json; a corpus that cannot be read is an empty list, which
    /// `FeedCorpusTests.corpusIsThere` reports.
    static let all: [CorpusFeed] = {
        guard let bytes = readFileBytes(directory + "/corpus.json", limit: 1 << 20),
              let json = try? JSONValue.parse(bytes) else { return [] }
        return (json["feeds"]?.arrayValue ?? []).compactMap { feed in
            guard let file = feed["file"]?.stringValue, let title = feed["title"]?.stringValue else { return nil }
            let entries = (feed["entries"]?.arrayValue ?? []).map {
                Entry(title: $0["title"]?.stringValue ?? "", link: $0["link"]?.stringValue, date: $0["date"]?.stringValue)
            }
            return CorpusFeed(file: file, url: feed["url"]?.stringValue, contentType: feed["contentType"]?.stringValue, title: title, entries: entries)
        }
    }()
}

@Suite("Feed corpus: real-world shapes read as feedparser reads them")
struct FeedCorpusTests {
    @Test("the corpus is there and covers every shape the issue names")
    func corpusIsThere() {
        let files = Set(CorpusFeed.all.map(\.file))
        #expect(files.count == 14, "\(files.sorted())")
        for shape in ["rss2-userland-namespace.xml", "rss1-rdf.xml", "atom10.xml", "rss2-dc-title.xml", "rss2-media-title.xml",
                      "rss2-iso-8859-1.xml", "rss2-windows-1252.xml", "atom-utf-16le-bom.xml", "atom-utf-16be-no-bom.xml"] {
            #expect(files.contains(shape), "\(shape) is missing from corpus.json")
        }
    }

    @Test("each feed gives the expected title, and entries with their titles, links and dates", arguments: CorpusFeed.all)
    func feed(_ expected: CorpusFeed) throws {
        let bytes = try #require(readFileBytes(CorpusFeed.directory + "/" + expected.file, limit: 1 << 20))
        let charset = expected.contentType.flatMap(FeedEncoding.charset(ofContentType:))
        let feed = try FeedParser.parse(bytes, base: try expected.url.map(HTTPClientURL.init), charset: charset)
        #expect(feed.title == expected.title)
        let entries = feed.entries.map { CorpusFeed.Entry(title: $0.title, link: $0.url, date: $0.publishedAt?.rfc3339()) }
        #expect(entries == expected.entries)
    }
}
