/// A small, strict, bounded XML reader for feeds: documents in any `FeedEncoding` with one root
/// element, namespaces, CDATA, comments and the five predefined entities plus numeric character
/// references. A DOCTYPE that defines entities is refused (one that only names a DTD is skipped,
/// never fetched), as are documents nested deeper or holding more elements than the limits — nothing a feed server sends can make it expand,
/// recurse or allocate without bound.
struct FeedXML {
    /// The bounds a document must keep.
    struct Limits: Sendable {
        var maxDepth = 48
        var maxElements = 40_000
        var maxAttributes = 32
        var maxNameBytes = 200
    }

    /// One element: its names, attributes and content in document order.
    struct Element: Sendable, Equatable {
        var localName: String
        /// The namespace URI its prefix (or the default namespace) is bound to; nil for none.
        var namespace: String?
        var attributes: [Attribute]
        var children: [Node]

        /// The first child element named `localName` in `namespace`.
        func child(_ localName: String, _ namespace: String?) -> Element? {
            for case let .element(e) in children where e.localName == localName && e.namespace == namespace { return e }
            return nil
        }

        /// Every child element named `localName` in `namespace`.
        func elements(_ localName: String, _ namespace: String?) -> [Element] {
            children.compactMap { if case let .element(e) = $0, e.localName == localName, e.namespace == namespace { e } else { nil } }
        }

        /// An attribute's value by local name (attributes without a prefix have no namespace).
        func attribute(_ localName: String, _ namespace: String? = nil) -> String? {
            attributes.first { $0.localName == localName && $0.namespace == namespace }?.value
        }

        /// The text of the element and its descendants, leaving out `script` and `style` elements.
        var text: String {
            var out = ""
            appendText(to: &out)
            return out
        }

        private func appendText(to out: inout String) {
            for child in children {
                switch child {
                case let .text(t): out += t
                case let .element(e) where e.localName != "script" && e.localName != "style": e.appendText(to: &out)
                case .element: break
                }
            }
        }
    }

    struct Attribute: Sendable, Equatable {
        var localName: String
        var namespace: String?
        var value: String
    }

    enum Node: Sendable, Equatable {
        case element(Element)
        case text(String)
    }

    static let xmlNamespace = "http://www.w3.org/XML/1998/namespace"

    /// HTML's common named entities: feeds use them undeclared, and titles hold escaped HTML.
    static let htmlEntities: [String: String] = [
        "amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "nbsp": " ", "ndash": "–", "mdash": "—",
        "hellip": "…", "lsquo": "‘", "rsquo": "’", "ldquo": "“", "rdquo": "”", "laquo": "«", "raquo": "»",
        "copy": "©", "reg": "®", "trade": "™", "euro": "€", "middot": "·", "bull": "•",
        "aacute": "á", "eacute": "é", "iacute": "í", "oacute": "ó", "uacute": "ú", "ntilde": "ñ", "uuml": "ü",
        "Aacute": "Á", "Eacute": "É", "Iacute": "Í", "Oacute": "Ó", "Uacute": "Ú", "Ntilde": "Ñ", "iexcl": "¡", "iquest": "¿",
    ]

    /// Parses `bytes` into its root element, transcoding them to UTF-8 first (`charset` is the
    /// HTTP `Content-Type`'s; see `FeedEncoding` for who wins); `FeedError` with `.malformed`,
    /// `.refused` or `.encoding` in words otherwise.
    static func parse(_ bytes: [UInt8], charset: String? = nil, limits: Limits = Limits()) throws(FeedError) -> Element {
        var reader = Reader(bytes: try FeedEncoding.utf8(bytes, charset: charset), limits: limits)
        return try reader.document()
    }

    /// The tokenizer and tree builder over validated UTF-8 bytes.
    private struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var i = 0
        var elements = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
        }

        /// An element being read: its qualified name and the namespaces in scope inside it.
        struct Open {
            var qualifiedName: String
            var element: Element
            var scope: [String: String]
        }

        mutating func document() throws(FeedError) -> Element {
            var stack: [Open] = []
            var root: Element?
            let rootScope: [String: String] = ["xml": FeedXML.xmlNamespace]
            while i < bytes.count {
                if bytes[i] == 0x3C { // <
                    if starts("<?") {
                        guard let end = find("?>") else { throw malformed("a processing instruction is not closed") }
                        let target = String(decoding: bytes[(i + 2)..<min(end, i + 6)], as: UTF8.self).lowercased()
                        if i > 0, target == "xml" || target.hasPrefix("xml ") {
                            throw malformed("the XML declaration is not at the start")
                        }
                        i = end + 2
                    } else if starts("<!--") {
                        guard let end = find("-->", from: i + 4) else { throw malformed("a comment is not closed") }
                        i = end + 3
                    } else if starts("<![CDATA[") {
                        guard !stack.isEmpty else { throw malformed("character data outside the root element") }
                        guard let end = find("]]>", from: i + 9) else { throw malformed("a CDATA section is not closed") }
                        try appendText(String(decoding: bytes[(i + 9)..<end], as: UTF8.self), to: &stack)
                        i = end + 3
                    } else if starts("<!DOCTYPE"), root == nil, stack.isEmpty {
                        try skipDoctype()
                    } else if starts("<!") {
                        throw malformed("a '<!' that starts no comment, CDATA section or DOCTYPE")
                    } else if starts("</") {
                        i += 2
                        let name = try readName()
                        skipSpace()
                        guard i < bytes.count, bytes[i] == 0x3E else { throw malformed("the end tag </\(name)> is not closed") }
                        i += 1
                        guard let open = stack.popLast() else { throw malformed("the end tag </\(name)> has no start tag") }
                        guard open.qualifiedName == name else {
                            throw malformed("the end tag </\(name)> does not match <\(open.qualifiedName)>")
                        }
                        if stack.isEmpty { root = open.element } else { stack[stack.count - 1].element.children.append(.element(open.element)) }
                    } else {
                        guard root == nil else { throw malformed("more than one root element") }
                        i += 1
                        let (open, selfClosing) = try readStartTag(scope: stack.last?.scope ?? rootScope)
                        guard stack.count < limits.maxDepth else {
                            throw malformed("elements are nested more than \(limits.maxDepth) deep")
                        }
                        elements += 1
                        guard elements <= limits.maxElements else { throw malformed("the feed has more than \(limits.maxElements) elements") }
                        if selfClosing {
                            if stack.isEmpty { root = open.element } else { stack[stack.count - 1].element.children.append(.element(open.element)) }
                        } else {
                            stack.append(open)
                        }
                    }
                } else {
                    let start = i
                    while i < bytes.count, bytes[i] != 0x3C { i += 1 }
                    let raw = bytes[start..<i]
                    if stack.isEmpty {
                        guard raw.allSatisfy(Reader.isSpace) else {
                            throw malformed(root == nil ? "the document does not start with an element" : "text after the root element")
                        }
                    } else {
                        try appendText(try decode(raw, attribute: false), to: &stack)
                    }
                }
            }
            if let open = stack.last { throw malformed("the document ends before <\(open.qualifiedName)> is closed") }
            guard let root else { throw malformed("the document has no root element") }
            return root
        }

        /// Steps over a DOCTYPE that only names a DTD (RSS 0.91 feeds carry Netscape's); the DTD
        /// is never fetched. One with an internal subset is refused: that is where entities, and
        /// so entity bombs, are defined.
        private mutating func skipDoctype() throws(FeedError) {
            var j = i + 9
            var quote: UInt8?
            while j < bytes.count, j - i < 1024 {
                let b = bytes[j]
                if let q = quote {
                    if b == q { quote = nil }
                } else if b == 0x22 || b == 0x27 {
                    quote = b
                } else if b == 0x5B { // [
                    throw FeedError(.refused, "the feed's DOCTYPE declares entities, which is refused")
                } else if b == 0x3E {
                    i = j + 1
                    return
                }
                j += 1
            }
            throw malformed("the DOCTYPE is not closed")
        }

        /// Adds a text node; pieces split by comments or CDATA stay separate nodes (joining them
        /// here would copy the text again for every piece).
        private func appendText(_ text: String, to stack: inout [Open]) throws(FeedError) {
            guard !text.isEmpty else { return }
            stack[stack.count - 1].element.children.append(.text(text))
        }

        /// After `<`: the name, attributes and namespace declarations, up to `>` or `/>`.
        private mutating func readStartTag(scope outer: [String: String]) throws(FeedError) -> (Open, Bool) {
            let name = try readName()
            var raw: [(String, String)] = []
            var selfClosing = false
            while true {
                let hadSpace = skipSpace()
                guard i < bytes.count else { throw malformed("the start tag <\(name)> is not closed") }
                if bytes[i] == 0x3E { i += 1; break }
                if bytes[i] == 0x2F {
                    guard i + 1 < bytes.count, bytes[i + 1] == 0x3E else { throw malformed("a stray '/' in <\(name)>") }
                    i += 2
                    selfClosing = true
                    break
                }
                guard hadSpace else { throw malformed("attributes of <\(name)> are not separated by spaces") }
                let attribute = try readName()
                skipSpace()
                guard i < bytes.count, bytes[i] == 0x3D else { throw malformed("the attribute \(attribute) of <\(name)> has no value") }
                i += 1
                skipSpace()
                guard i < bytes.count, bytes[i] == 0x22 || bytes[i] == 0x27 else {
                    throw malformed("the value of \(attribute) in <\(name)> is not quoted")
                }
                let quote = bytes[i]
                i += 1
                let start = i
                while i < bytes.count, bytes[i] != quote {
                    guard bytes[i] != 0x3C else { throw malformed("a '<' in the value of \(attribute) in <\(name)>") }
                    i += 1
                }
                guard i < bytes.count else { throw malformed("the value of \(attribute) in <\(name)> is not closed") }
                let value = try decode(bytes[start..<i], attribute: true)
                i += 1
                guard !raw.contains(where: { $0.0 == attribute }) else { throw malformed("the attribute \(attribute) appears twice in <\(name)>") }
                raw.append((attribute, value))
                guard raw.count <= limits.maxAttributes else { throw malformed("<\(name)> has more than \(limits.maxAttributes) attributes") }
            }
            var scope = outer
            for (attribute, value) in raw {
                if attribute == "xmlns" { scope[""] = value.isEmpty ? nil : value }
                else if attribute.hasPrefix("xmlns:") {
                    let prefix = String(attribute.dropFirst(6))
                    guard !value.isEmpty, prefix != "xmlns", prefix != "xml" else { throw malformed("the namespace declaration \(attribute) is invalid") }
                    scope[prefix] = value
                }
            }
            func split(_ qualified: String, isAttribute: Bool) throws(FeedError) -> (String, String?) {
                guard let colon = qualified.firstIndex(of: ":") else { return (qualified, isAttribute ? nil : scope[""]) }
                let prefix = String(qualified[..<colon])
                let local = String(qualified[qualified.index(after: colon)...])
                guard !prefix.isEmpty, !local.isEmpty, !local.contains(":") else { throw malformed("the name \(qualified) is not a valid qualified name") }
                guard let uri = scope[prefix] else { throw malformed("the namespace prefix \(prefix) is not declared") }
                return (local, uri)
            }
            let (local, namespace) = try split(name, isAttribute: false)
            var attributes: [Attribute] = []
            for (attribute, value) in raw where attribute != "xmlns" && !attribute.hasPrefix("xmlns:") {
                let (l, ns) = try split(attribute, isAttribute: true)
                attributes.append(Attribute(localName: l, namespace: ns, value: value))
            }
            let element = Element(localName: local, namespace: namespace, attributes: attributes, children: [])
            return (Open(qualifiedName: name, element: element, scope: scope), selfClosing)
        }

        /// A name: letters, digits, `_ - . :` and any non-ASCII byte, not starting with a digit,
        /// `-` or `.`.
        private mutating func readName() throws(FeedError) -> String {
            let start = i
            while i < bytes.count {
                let b = bytes[i]
                let ok = b >= 0x80 || (b >= 0x61 && b <= 0x7A) || (b >= 0x41 && b <= 0x5A) || b == 0x5F || b == 0x3A
                    || (i > start && ((b >= 0x30 && b <= 0x39) || b == 0x2D || b == 0x2E))
                guard ok else { break }
                i += 1
                guard i - start <= limits.maxNameBytes else { throw malformed("a name is longer than \(limits.maxNameBytes) bytes") }
            }
            guard i > start else { throw malformed("a name was expected at byte \(start)") }
            return String(decoding: bytes[start..<i], as: UTF8.self)
        }

        @discardableResult
        private mutating func skipSpace() -> Bool {
            let start = i
            while i < bytes.count, Reader.isSpace(bytes[i]) { i += 1 }
            return i > start
        }

        static func isSpace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D }

        private func starts(_ s: StaticString) -> Bool {
            matches(s, at: i)
        }

        private func matches(_ s: StaticString, at j: Int) -> Bool {
            let n = s.utf8CodeUnitCount
            guard j + n <= bytes.count else { return false }
            let p = s.utf8Start
            for k in 0..<n where bytes[j + k] != p[k] { return false }
            return true
        }

        /// Where `s` next starts; a plain byte scan (the generic `firstRange(of:)` allocated and
        /// dominated the time of a large feed).
        private func find(_ s: StaticString, from: Int? = nil) -> Int? {
            let first = s.utf8Start.pointee
            var j = from ?? i
            while j < bytes.count {
                if bytes[j] == first, matches(s, at: j) { return j }
                j += 1
            }
            return nil
        }

        /// Text or an attribute value with its references decoded; characters XML forbids and
        /// entities beyond the predefined five are refused.
        private func decode(_ raw: ArraySlice<UInt8>, attribute: Bool) throws(FeedError) -> String {
            var out: [UInt8] = []
            out.reserveCapacity(raw.count)
            var j = raw.startIndex
            while j < raw.endIndex {
                let b = raw[j]
                if b == 0x26 { // &
                    // A '&' that starts no reference ("Q&A", "?a=1&b=2") is the character itself, as
                    // feedparser and browsers read it: the commonest slip in hand-made feeds.
                    guard let semicolon = raw[(j + 1)...].prefix(12).firstIndex(of: 0x3B), semicolon > j + 1,
                          raw[(j + 1)..<semicolon].allSatisfy(Reader.isReferenceByte) else {
                        out.append(0x26)
                        j += 1
                        continue
                    }
                    let name = String(decoding: raw[(j + 1)..<semicolon], as: UTF8.self)
                    let scalar: Unicode.Scalar?
                    switch name {
                    case "lt": scalar = "<"
                    case "gt": scalar = ">"
                    case "amp": scalar = "&"
                    case "quot": scalar = "\""
                    case "apos": scalar = "'"
                    default:
                        if name.hasPrefix("#x") || name.hasPrefix("#X") {
                            scalar = UInt32(name.dropFirst(2), radix: 16).flatMap(Unicode.Scalar.init)
                        } else if name.hasPrefix("#") {
                            scalar = UInt32(name.dropFirst(), radix: 10).flatMap(Unicode.Scalar.init)
                        } else if let html = FeedXML.htmlEntities[name] {
                            // HTML's names (&nbsp;, &eacute;) are used undeclared; each stands for a
                            // character or two, so nothing can grow.
                            out.append(contentsOf: Array(html.utf8))
                            j = semicolon + 1
                            continue
                        } else {
                            throw malformed("the entity &\(name.prefix(20)); is not defined (only XML's five and common HTML ones are)")
                        }
                    }
                    guard let scalar, Reader.isXMLChar(scalar.value) else { throw malformed("the character reference &\(name.prefix(20)); is not allowed") }
                    out.append(contentsOf: Array(String(scalar).utf8))
                    j = semicolon + 1
                    continue
                }
                if b < 0x20 {
                    guard Reader.isSpace(b) else { throw malformed("a control character (\(b)) in the text") }
                    // Attribute-value normalisation turns line breaks and tabs into spaces.
                    out.append(attribute ? 0x20 : (b == 0x0D ? 0x0A : b))
                    if b == 0x0D, j + 1 < raw.endIndex, raw[j + 1] == 0x0A { j += 1 }
                } else {
                    out.append(b)
                }
                j += 1
            }
            return String(decoding: out, as: UTF8.self)
        }

        static func isReferenceByte(_ b: UInt8) -> Bool {
            (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x23
        }

        static func isXMLChar(_ v: UInt32) -> Bool {
            v == 0x9 || v == 0xA || v == 0xD || (0x20...0xD7FF).contains(v) || (0xE000...0xFFFD).contains(v) || (0x10000...0x10FFFF).contains(v)
        }

        private func malformed(_ why: String) -> FeedError {
            // Line numbers help an admin find the problem in the feed's source.
            let line = bytes[..<min(i, bytes.count)].reduce(1) { $0 + ($1 == 0x0A ? 1 : 0) }
            return FeedError(.malformed, "the feed is not well-formed XML (line \(line): \(why))")
        }
    }
}

/// Why a feed could not be read, in words an admin can act on.
struct FeedError: Error, Sendable, Equatable, CustomStringConvertible {
    enum Code: String, Sendable {
        case malformed, refused, encoding
        case notAFeed = "not_a_feed"
        case fetch
    }

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    var description: String { message }
}
