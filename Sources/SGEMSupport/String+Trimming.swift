/// Small text helpers every layer needs without Foundation.
extension StringProtocol {
    /// The text without leading and trailing characters that appear in `set`.
    public func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }

    /// The text without leading and trailing whitespace and newlines.
    public func trimmingWhitespace() -> String {
        var s = Substring(self)
        while let f = s.first, f.isWhitespace { s = s.dropFirst() }
        while let l = s.last, l.isWhitespace { s = s.dropLast() }
        return String(s)
    }

    /// The text with every occurrence of `target` replaced by `replacement`.
    public func replacingOccurrences(of target: String, with replacement: String) -> String {
        let text = String(self)
        guard !target.isEmpty else { return text }
        let t = Array(target.utf8)
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if i + t.count <= bytes.count && bytes[i] == t[0] && Array(bytes[i..<(i + t.count)]) == t {
                out.append(contentsOf: replacement.utf8)
                i += t.count
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
