#if canImport(Glibc)
import Glibc
#endif

/// An IPv4 or IPv6 address as 16 bytes, IPv4 in its IPv4-mapped form (`::ffff:a.b.c.d`), so one
/// comparison and one CIDR test serve both families.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    public let bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == 16)
        self.bytes = bytes
    }

    /// Parses a numeric address strictly (`inet_pton`: dotted quad or RFC 4291 text).
    public init?(_ text: some StringProtocol) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self.init(ipv4: withUnsafeBytes(of: &v4) { Array($0) })
        } else if inet_pton(AF_INET6, String(text), &v6) == 1 {
            self.init(bytes: withUnsafeBytes(of: &v6) { Array($0) })
        } else {
            return nil
        }
    }

    /// The address in a resolver's `sockaddr`; nil for families other than IPv4 and IPv6.
    init?(_ address: UnsafePointer<sockaddr>) {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            let v4 = UnsafeRawPointer(address).load(as: sockaddr_in.self).sin_addr
            self.init(ipv4: withUnsafeBytes(of: v4) { Array($0) })
        case AF_INET6:
            let v6 = UnsafeRawPointer(address).load(as: sockaddr_in6.self).sin6_addr
            self.init(bytes: withUnsafeBytes(of: v6) { Array($0) })
        default:
            return nil
        }
    }

    init(ipv4: [UInt8]) { self.init(bytes: Array(repeating: 0, count: 10) + [0xFF, 0xFF] + ipv4) }

    /// The four bytes of an IPv4 address (written as IPv4 or IPv4-mapped), else nil.
    public var ipv4: [UInt8]? {
        bytes[0..<10].allSatisfy { $0 == 0 } && bytes[10] == 0xFF && bytes[11] == 0xFF ? Array(bytes[12...]) : nil
    }

    public var description: String {
        if let v4 = ipv4 { return v4.map(String.init).joined(separator: ".") }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        var v6 = in6_addr()
        withUnsafeMutableBytes(of: &v6) { $0.copyBytes(from: bytes) }
        return inet_ntop(AF_INET6, &v6, &text, socklen_t(text.count)) != nil ? String(cString: text) : "?"
    }

    /// Whether the first `prefix` bits equal `other`'s.
    func sharesPrefix(_ prefix: Int, with other: IPAddress) -> Bool {
        for i in 0..<16 {
            let bits = min(8, max(0, prefix - i * 8))
            if bits == 0 { return true }
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[i] & mask != other.bytes[i] & mask { return false }
        }
        return true
    }
}

/// A CIDR block (`10.0.0.0/8`, `fc00::/7`); an IPv4 block's prefix counts from the mapped
/// form's bit 96.
public struct IPBlock: Sendable, Hashable {
    public let base: IPAddress
    /// Leading bits that must match, 0–128.
    public let prefix: Int

    /// `text` as `ADDRESS` or `ADDRESS/BITS` (0–32 for IPv4, 0–128 for IPv6), else nil.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard let base = IPAddress(parts[0]) else { return nil }
        // Written as IPv6 (even `::ffff:a.b.c.d`), the prefix counts all 128 bits.
        let width = parts[0].contains(":") ? 128 : 32
        var bits = width
        if parts.count == 2 {
            guard parts[1].count <= 3, parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int(parts[1]), (0...width).contains(value) else { return nil }
            bits = value
        }
        self.base = base
        self.prefix = bits + (128 - width)
    }

    public func contains(_ address: IPAddress) -> Bool { address.sharesPrefix(prefix, with: base) }
}
