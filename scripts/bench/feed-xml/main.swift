// Compiled by scripts/bench/feed-xml.sh together with the server's FeedXML.swift and
// FeedEncoding.swift: the hand-written reader and FoundationXML's XMLParser (libxml2) build the
// same tree from the same bytes, in the same process, alternating; then XMLParser is shown the
// documents the hand-written reader refuses (entity bombs, external entities).
import FoundationXML
import Foundation

/// Builds a `FeedXML.Element` tree from XMLParser's events, as the hand-written reader does.
final class TreeBuilder: NSObject, XMLParserDelegate {
    var stack: [FeedXML.Element] = []
    var root: FeedXML.Element?
    var textBytes = 0

    func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                attributes: [String: String] = [:]) {
        let attributes = attributes.map { FeedXML.Attribute(localName: $0.key, namespace: nil, value: $0.value) }
        stack.append(FeedXML.Element(localName: name, namespace: namespaceURI, attributes: attributes, children: []))
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        let element = stack.removeLast()
        if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(.element(element)) }
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        textBytes += string.utf8.count
        if !stack.isEmpty { stack[stack.count - 1].children.append(.text(string)) }
    }

    func parser(_ parser: XMLParser, foundCDATA block: Data) {
        self.parser(parser, foundCharacters: String(decoding: block, as: UTF8.self))
    }
}

func parseWithFoundation(_ bytes: [UInt8]) -> (ok: Bool, tree: TreeBuilder) {
    let parser = XMLParser(data: Data(bytes))
    parser.shouldProcessNamespaces = true
    let builder = TreeBuilder()
    parser.delegate = builder
    return (parser.parse(), builder)
}

func count(_ e: FeedXML.Element) -> Int {
    1 + e.children.reduce(0) { if case let .element(c) = $1 { $0 + count(c) } else { $0 } }
}

func nanoseconds() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func median(_ xs: [UInt64]) -> Double { Double(xs.sorted()[xs.count / 2]) }

let arguments = CommandLine.arguments
guard arguments.count >= 2, let feed = FileManager.default.contents(atPath: arguments[1]) else {
    FileHandle.standardError.write("usage: feed-xml FEED.xml [ROUNDS]\n".data(using: .utf8)!)
    exit(2)
}
let bytes = [UInt8](feed)
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 15 : 15

// Both must see the same document before either is timed.
let hand = try FeedXML.parse(bytes)
let foundation = parseWithFoundation(bytes)
guard foundation.ok, let foundationRoot = foundation.tree.root, count(foundationRoot) == count(hand) else {
    print("ERROR: the two parsers disagree on the document (\(count(hand)) elements by hand)")
    exit(1)
}

var handTimes: [UInt64] = []
var foundationTimes: [UInt64] = []
for _ in 0..<rounds {
    var t = nanoseconds()
    _ = try FeedXML.parse(bytes)
    handTimes.append(nanoseconds() - t)
    t = nanoseconds()
    _ = parseWithFoundation(bytes)
    foundationTimes.append(nanoseconds() - t)
}
let handMs = median(handTimes) / 1e6
let foundationMs = median(foundationTimes) / 1e6
print(String(format: "document: %d bytes, %d elements", bytes.count, count(hand)))
print(String(format: "hand-written FeedXML: %.2f ms (median of %d)", handMs, rounds))
print(String(format: "FoundationXML XMLParser: %.2f ms (median of %d)", foundationMs, rounds))
print(String(format: "ratio FoundationXML / hand-written: %.2f", foundationMs / handMs))

// What XMLParser does with the documents the hand-written reader refuses outright.
let laughs = """
    <?xml version="1.0"?><!DOCTYPE rss [<!ENTITY a "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">
    <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
    <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;"><!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;"><!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">]>
    <rss><channel><title>&g;</title></channel></rss>
    """
let secretPath = NSTemporaryDirectory() + "feed-xml-secret.txt"
try "SECRET-FROM-DISK".write(toFile: secretPath, atomically: true, encoding: .utf8)
let external = """
    <?xml version="1.0"?><!DOCTYPE rss [<!ENTITY x SYSTEM "file://\(secretPath)">]>
    <rss><channel><title>&x;</title></channel></rss>
    """
for (name, document) in [("entity bomb (100 MB if expanded)", laughs), ("external entity (file on disk)", external)] {
    let t = nanoseconds()
    let result = parseWithFoundation(Array(document.utf8))
    let ms = Double(nanoseconds() - t) / 1e6
    let leaked = name.hasPrefix("external") && result.tree.textBytes > 0
    let handSays: String
    do { _ = try FeedXML.parse(Array(document.utf8)); handSays = "accepted" } catch { handSays = "refused: \(error.message)" }
    print(String(format: "%@: XMLParser %@ in %.1f ms, %d bytes of text%@; FeedXML %@", name, result.ok ? "accepted" : "failed",
                 ms, result.tree.textBytes, leaked ? " (THE FILE WAS READ)" : "", handSays))
}
