/// The directory's search and sort key: case and accents folded away, so "Álvaro Gómez" is
/// stored as "alvaro gomez", sorts among the A's and is found by "gomez".
///
/// Foundation's `decomposedStringWithCanonicalMapping` would bring ICU into the binary, so the
/// fold reads the Unicode data the standard library already carries: a precomposed Latin letter
/// is named "LATIN … LETTER X WITH …", and X is its base; combining marks are dropped; a few
/// letters that are not "X with a mark" (ß, æ, œ, ø…) get their usual ASCII spelling; anything
/// else is lowercased.
enum SearchKey {
    /// `text` folded: lowercased, accents removed, whitespace runs as one space, trimmed.
    static func fold(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var pendingSpace = false
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !out.isEmpty
                continue
            }
            if pendingSpace {
                out.append(" ")
                pendingSpace = false
            }
            append(scalar, to: &out)
        }
        return String(out)
    }

    /// The words a directory search finds a user by: every folded word of `texts` (name,
    /// position) and, for a word with inner punctuation ("garcía-lópez", "o'brien"), its parts
    /// too; plus each of `whole` (username, email) as one word.
    static func words(of texts: [String], whole: [String]) -> Set<String> {
        var out = Set<String>()
        for text in texts {
            for word in fold(text).split(separator: " ") {
                out.insert(String(word))
                let parts = word.split { !$0.isLetter && !$0.isNumber }
                if parts.count > 1 { for part in parts { out.insert(String(part)) } }
            }
        }
        for word in whole where !word.isEmpty { out.insert(fold(word)) }
        return out
    }

    /// The words of a search: folded, at most `limit` of them (a longer query adds nothing a
    /// person would type).
    static func queryWords(_ query: String, limit: Int = 8) -> [String] {
        Array(fold(query).split(separator: " ").prefix(limit).map(String.init))
    }

    /// The smallest string above every string that starts with `prefix` (for `word >= prefix AND
    /// word < upperBound`): SQLite compares text as UTF-8 bytes, and U+10FFFF is the largest scalar.
    static func upperBound(ofPrefix prefix: String) -> String { prefix + "\u{10FFFF}" }

    private static func append(_ scalar: Unicode.Scalar, to out: inout String.UnicodeScalarView) {
        if scalar.isASCII {
            out.append(scalar.properties.isUppercase ? Unicode.Scalar(UInt8(scalar.value) + 0x20) : scalar)
            return
        }
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .spacingMark: return
        default: break
        }
        if let spelled = special[scalar] {
            out.append(contentsOf: spelled.unicodeScalars)
            return
        }
        if let base = latinBase(scalar) {
            out.append(base)
            return
        }
        out.append(contentsOf: scalar.properties.lowercaseMapping.unicodeScalars)
    }

    /// "LATIN CAPITAL LETTER A WITH ACUTE" → "a"; nil for anything that is not a Latin letter X.
    private static func latinBase(_ scalar: Unicode.Scalar) -> Unicode.Scalar? {
        guard let name = scalar.properties.name, name.hasPrefix("LATIN ") else { return nil }
        let words = name.split(separator: " ")
        guard let i = words.firstIndex(of: "LETTER"), i + 1 < words.count, i == 2,
              words[1] == "SMALL" || words[1] == "CAPITAL" else { return nil }
        let letter = words[i + 1]
        guard letter.utf8.count == 1, let byte = letter.utf8.first, byte >= 0x41, byte <= 0x5A else { return nil }
        return Unicode.Scalar(byte + 0x20)
    }

    /// Letters whose usual ASCII spelling is not their base letter.
    private static let special: [Unicode.Scalar: String] = [
        "ß": "ss", "ẞ": "ss", "æ": "ae", "Æ": "ae", "œ": "oe", "Œ": "oe", "þ": "th", "Þ": "th", "ð": "d", "Ð": "d",
        "ı": "i", "ĳ": "ij", "Ĳ": "ij", "ŉ": "n", "ſ": "s",
    ]
}
