import COpenSSL

/// Small cryptographic helpers over OpenSSL: CSPRNG bytes, digests, encodings.
public enum Crypto {
    /// `count` bytes from OpenSSL's CSPRNG. Traps if the generator fails: continuing without
    /// randomness would be worse than stopping.
    public static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        let ok = bytes.withUnsafeMutableBytes { RAND_bytes($0.baseAddress!.assumingMemoryBound(to: UInt8.self), Int32(count)) }
        precondition(ok == 1, "RAND_bytes failed")
        return bytes
    }

    public static func sha256<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 32)
        let input = Array(data)
        input.withUnsafeBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in _ = SHA256(inp.baseAddress, inp.count, o.baseAddress) }
        }
        return out
    }

    public static func sha1<C: Collection>(_ data: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 20)
        let input = Array(data)
        input.withUnsafeBufferPointer { inp in
            out.withUnsafeMutableBufferPointer { o in _ = SHA1(inp.baseAddress, inp.count, o.baseAddress) }
        }
        return out
    }

    public static func hex<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Standard base64 with padding (RFC 4648 §4).
    public static func base64<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        base64(Array(bytes), alphabet: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8), pad: true)
    }

    /// URL-safe base64 without padding (RFC 4648 §5), for tokens.
    public static func base64URL<C: Collection>(_ bytes: C) -> String where C.Element == UInt8 {
        base64(Array(bytes), alphabet: Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8), pad: false)
    }

    static func base64(_ b: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity((b.count + 2) / 3 * 4)
        var i = 0
        while i + 2 < b.count {
            let n = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8 | UInt32(b[i + 2])
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)], alphabet[Int(n & 63)]]
            i += 3
        }
        let rest = b.count - i
        if rest == 1 {
            let n = UInt32(b[i]) << 16
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
            if pad { out += [61, 61] }
        } else if rest == 2 {
            let n = UInt32(b[i]) << 16 | UInt32(b[i + 1]) << 8
            out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
            if pad { out += [61] }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
