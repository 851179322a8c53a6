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

    /// Decodes standard base64 (RFC 4648 §4); padding is optional and, with `skippingNewlines`,
    /// line breaks are ignored. Nil on any other character or an impossible length.
    public static func base64Decode<S: StringProtocol>(_ text: S, skippingNewlines: Bool = false) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3 / 4)
        var buffer: UInt32 = 0
        var bits = 0
        var digits = 0
        var padding = 0
        for c in text.utf8 {
            let v: UInt32
            switch c {
            case 0x41...0x5A: v = UInt32(c - 0x41)
            case 0x61...0x7A: v = UInt32(c - 0x61 + 26)
            case 0x30...0x39: v = UInt32(c - 0x30 + 52)
            case 0x2B: v = 62
            case 0x2F: v = 63
            case 0x3D:
                padding += 1
                continue
            case 0x0A where skippingNewlines, 0x0D where skippingNewlines: continue
            default: return nil
            }
            guard padding == 0 else { return nil } // nothing may follow the padding
            digits += 1
            buffer = buffer << 6 | v
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        // A lone trailing digit carries no whole byte; padding must complete a quantum.
        guard digits % 4 != 1, padding == 0 || (digits + padding) % 4 == 0, padding <= 2 else { return nil }
        return out
    }

    /// Every error in this thread's OpenSSL queue, oldest first, as text; empties the queue.
    public static func openSSLErrors() -> [String] {
        var messages: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }

    /// Compares two byte strings in time that depends only on their lengths.
    public static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var diff: UInt8 = 0
        for i in 0..<a.count { diff |= a[i] ^ b[i] }
        return diff == 0
    }
}
