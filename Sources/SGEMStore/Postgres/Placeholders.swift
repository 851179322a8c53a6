/// Turns the store's `?` placeholders into PostgreSQL's `$N`: a bare `?` takes the next number,
/// `?N` keeps its number (`?2` → `$2`, as SQLite numbers them). Text inside quotes ('…', "…"),
/// dollar quotes and comments is left alone, so a literal question mark stays one.
enum Placeholders {
    static func postgres(_ sql: String) -> String {
        let bytes = Array(sql.utf8)
        // Most statements of the hot path have no quotes or comments: one pass, one output buffer.
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 8)
        var next = 1
        var i = 0
        func isDigit(_ b: UInt8) -> Bool { b >= 0x30 && b <= 0x39 }
        while i < bytes.count {
            let b = bytes[i]
            switch b {
            case UInt8(ascii: "'"), UInt8(ascii: "\""):
                // Up to the closing quote; a doubled quote is an escaped one and stays inside.
                out.append(b)
                i += 1
                while i < bytes.count {
                    out.append(bytes[i])
                    if bytes[i] == b {
                        if i + 1 < bytes.count && bytes[i + 1] == b {
                            out.append(b)
                            i += 2
                            continue
                        }
                        i += 1
                        break
                    }
                    i += 1
                }
            case UInt8(ascii: "-") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "-"):
                while i < bytes.count && bytes[i] != 0x0A { out.append(bytes[i]); i += 1 }
            case UInt8(ascii: "/") where i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "*"):
                out.append(contentsOf: [bytes[i], bytes[i + 1]])
                i += 2
                while i < bytes.count {
                    if bytes[i] == UInt8(ascii: "*") && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "/") {
                        out.append(contentsOf: [bytes[i], bytes[i + 1]])
                        i += 2
                        break
                    }
                    out.append(bytes[i])
                    i += 1
                }
            case UInt8(ascii: "$") where i + 1 < bytes.count && !isDigit(bytes[i + 1]):
                // A dollar quote: $$…$$ or $tag$…$tag$.
                var end = i + 1
                while end < bytes.count && bytes[end] != UInt8(ascii: "$") && (bytes[end] == 0x5F || isDigit(bytes[end])
                        || (bytes[end] | 0x20 >= 0x61 && bytes[end] | 0x20 <= 0x7A)) { end += 1 }
                guard end < bytes.count && bytes[end] == UInt8(ascii: "$") else { out.append(b); i += 1; continue }
                let tag = Array(bytes[i...end])
                out.append(contentsOf: tag)
                i = end + 1
                while i < bytes.count {
                    if bytes[i] == UInt8(ascii: "$") && i + tag.count <= bytes.count && Array(bytes[i..<i + tag.count]) == tag {
                        out.append(contentsOf: tag)
                        i += tag.count
                        break
                    }
                    out.append(bytes[i])
                    i += 1
                }
            case UInt8(ascii: "?"):
                var end = i + 1
                while end < bytes.count && isDigit(bytes[end]) { end += 1 }
                out.append(UInt8(ascii: "$"))
                if end > i + 1 {
                    let number = bytes[(i + 1)..<end]
                    out.append(contentsOf: number)
                    if let n = Int(String(decoding: number, as: UTF8.self)) { next = max(next, n + 1) }
                } else {
                    out.append(contentsOf: Array(String(next).utf8))
                    next += 1
                }
                i = end
            default:
                out.append(b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
