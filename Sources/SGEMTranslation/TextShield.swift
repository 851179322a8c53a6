/// Keeps what must not be translated out of the provider's hands: `@mentions`, links and code
/// (`inline` and ``` fenced ```). Each is replaced by a numbered placeholder `[[n]]` before the
/// call and put back after it; providers leave such tokens alone. A placeholder the provider
/// lost is appended at the end, so nothing protected ever disappears from a translation.
struct TextShield: Sendable, Equatable {
    /// The text with placeholders, as the provider gets it.
    let masked: String
    /// The protected pieces, in placeholder order.
    let pieces: [String]
    /// Whether anything is left to translate once the protected pieces are out: a letter.
    let hasWords: Bool

    init(_ text: String) {
        // Most messages hold nothing to protect: one pass over the bytes says so.
        if !TextShield.mayProtect(text) {
            masked = text
            pieces = []
            hasWords = text.unicodeScalars.contains { $0.properties.isAlphabetic }
            return
        }
        let chars = Array(text)
        var out = ""
        var pieces: [String] = []
        var hasWords = false
        var i = 0
        func protect(_ end: Int) {
            out += "[[\(pieces.count)]]"
            pieces.append(String(chars[i..<end]))
            i = end
        }
        while i < chars.count {
            let c = chars[i]
            let atWordStart = i == 0 || chars[i - 1].isWhitespace || "([{\"'".contains(chars[i - 1])
            if c == "`" {
                let fence = i + 2 < chars.count && chars[i + 1] == "`" && chars[i + 2] == "`"
                let marker = fence ? 3 : 1
                var j = i + marker
                while j < chars.count {
                    if chars[j] == "`", !fence || (j + 2 < chars.count && chars[j + 1] == "`" && chars[j + 2] == "`") { break }
                    if !fence, chars[j] == "\n" { break }
                    j += 1
                }
                if j < chars.count, chars[j] == "`" {
                    protect(j + marker)
                    continue
                }
                if fence { protect(chars.count); continue }
            } else if c == "@", atWordStart, i + 1 < chars.count, TextShield.isNameCharacter(chars[i + 1]) {
                var j = i + 1
                while j < chars.count, TextShield.isNameCharacter(chars[j]) { j += 1 }
                while j > i + 1, chars[j - 1] == "." || chars[j - 1] == "-" { j -= 1 }
                protect(j)
                continue
            } else if atWordStart, TextShield.startsLink(chars, at: i) {
                var j = i
                while j < chars.count, !chars[j].isWhitespace { j += 1 }
                while j > i, ".,;:!?)]}\"'".contains(chars[j - 1]) { j -= 1 }
                protect(j)
                continue
            }
            out.append(c)
            if c.isLetter { hasWords = true }
            i += 1
        }
        self.masked = out
        self.pieces = pieces
        self.hasWords = hasWords
    }

    /// `translated` with every placeholder replaced by its piece (spaces a provider put inside
    /// the brackets are tolerated); pieces whose placeholder went missing are appended.
    func restore(_ translated: String) -> String {
        guard !pieces.isEmpty else { return translated }
        let chars = Array(translated)
        var out = ""
        var used = Set<Int>()
        var i = 0
        while i < chars.count {
            if chars[i] == "[", i + 1 < chars.count, chars[i + 1] == "[" {
                var j = i + 2
                while j < chars.count, chars[j] == " " { j += 1 }
                var digits = ""
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { digits.append(chars[j]); j += 1 }
                while j < chars.count, chars[j] == " " { j += 1 }
                if let n = Int(digits), n < pieces.count, j + 1 < chars.count, chars[j] == "]", chars[j + 1] == "]" {
                    out += pieces[n]
                    used.insert(n)
                    i = j + 2
                    continue
                }
            }
            out.append(chars[i])
            i += 1
        }
        for n in pieces.indices where !used.contains(n) { out += " " + pieces[n] }
        return out
    }

    /// False when `text` has no backtick, no `@` and no `http`/`www` (any case): nothing to protect.
    static func mayProtect(_ text: String) -> Bool {
        var previous: UInt8 = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "`"), UInt8(ascii: "@"): return true
            case UInt8(ascii: "t"), UInt8(ascii: "T"):
                if previous | 0x20 == UInt8(ascii: "h") { return true }
            case UInt8(ascii: "w"), UInt8(ascii: "W"):
                if previous | 0x20 == UInt8(ascii: "w") { return true }
            default: break
            }
            previous = byte
        }
        return false
    }

    static func isNameCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "_" || c == "." || c == "-")
    }

    static func startsLink(_ chars: [Character], at i: Int) -> Bool {
        guard let first = chars[i].asciiValue, first | 0x20 == UInt8(ascii: "h") || first | 0x20 == UInt8(ascii: "w") else { return false }
        for prefix in TextShield.linkPrefixes where i + prefix.count < chars.count {
            var matches = true
            for (k, expected) in prefix.enumerated() where chars[i + k].asciiValue.map({ $0 | 0x20 }) != expected {
                matches = false
                break
            }
            if matches { return true }
        }
        return false
    }

    static let linkPrefixes: [[UInt8]] = [Array("https://".utf8), Array("http://".utf8), Array("www.".utf8)]
}
