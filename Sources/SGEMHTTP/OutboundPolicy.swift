#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMSupport

/// Which destinations outbound calls may reach: nothing inside the network or on this machine
/// (loopback, private, link-local, carrier-grade NAT, multicast, unspecified and reserved
/// addresses, their IPv4-mapped, -compatible, NAT64 and 6to4 forms, and this machine's own
/// interface addresses) unless an exception names it. The client checks every address the
/// resolver returns and connects only to the ones that pass.
public struct OutboundPolicy: Sendable, Equatable {
    /// One deliberate exception: a host name (as written in URLs) or an address block, on any
    /// port or one.
    public struct Exception: Sendable, Equatable {
        public enum Target: Sendable, Equatable {
            case host(String)
            case block(IPBlock)
        }

        public let target: Target
        public let port: Int?
    }

    /// Why an `--outbound-allow` list cannot be read, in words.
    public struct ParseError: Error, Sendable, Equatable {
        public let message: String
    }

    public let exceptions: [Exception]

    /// Refuses every internal destination.
    public init(exceptions: [Exception] = []) { self.exceptions = exceptions }

    /// Parses a comma-separated list of `HOST`, `ADDRESS` or `ADDRESS/BITS`, each with an
    /// optional `:PORT` (an IPv6 address in brackets then: `[::1]:5000`).
    public init(allowing list: String) throws(ParseError) {
        var exceptions: [Exception] = []
        for entry in list.split(separator: ",") {
            let trimmed = entry.trimmingCharacters(in: " \t")
            if trimmed.isEmpty { continue }
            exceptions.append(try Self.exception(trimmed))
        }
        self.init(exceptions: exceptions)
    }

    /// Why `address` (what `host` resolved to) may not be reached on `port`, or nil when it may.
    /// `localAddresses` are this machine's own (asked for only when the address is otherwise public).
    public func refusal(host: String, address: IPAddress, port: Int, localAddresses: @autoclosure () -> [IPAddress]) -> String? {
        if allows(host: host, address: address, port: port) { return nil }
        if let kind = Self.kind(of: address) { return "\(address) is a \(kind) address" }
        if localAddresses().contains(address) { return "\(address) is this server's own address" }
        return nil
    }

    /// Why `url` may not be reached when its host is an address, however spelled (`127.1`,
    /// `0x7f000001`: parsed as the resolver does, without a lookup); nil for a name or an
    /// address that may be reached.
    func refusal(literal url: HTTPClientURL) -> String? {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(url.host, String(url.port), &hints, &list) == 0, let list else { return nil }
        defer { freeaddrinfo(list) }
        guard let sa = list.pointee.ai_addr, let address = IPAddress(UnsafePointer(sa)) else { return nil }
        return refusal(host: url.host, address: address, port: url.port, localAddresses: Self.localAddresses())
    }

    func allows(host: String, address: IPAddress, port: Int) -> Bool {
        exceptions.contains { exception in
            guard exception.port == nil || exception.port == port else { return false }
            switch exception.target {
            case .host(let name): return name == host
            case .block(let block): return block.contains(address)
            }
        }
    }

    // MARK: Address kinds

    /// What makes `address` internal ("loopback", "private", …), or nil for a public address.
    public static func kind(of address: IPAddress) -> String? {
        let b = address.bytes
        if b.allSatisfy({ $0 == 0 }) { return "unspecified" }
        if b[0..<15].allSatisfy({ $0 == 0 }) && b[15] == 1 { return "loopback" }
        if let v4 = embeddedIPv4(address) { return kind(ipv4: v4) }
        if b[0] & 0xFE == 0xFC { return "private" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0x80 { return "link-local" }
        if b[0] == 0xFE && b[1] & 0xC0 == 0xC0 { return "private" } // deprecated site-local
        if b[0] == 0xFF { return "multicast" }
        if b[0..<6] == [0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01] { return "private" } // local-use NAT64 (RFC 8215)
        return nil
    }

    /// The IPv4 address an IPv6 form carries: mapped `::ffff:0:0/96`, compatible `::/96`,
    /// NAT64 `64:ff9b::/96`, 6to4 `2002::/16`.
    static func embeddedIPv4(_ address: IPAddress) -> [UInt8]? {
        let b = address.bytes
        if let v4 = address.ipv4 { return v4 }
        if b[0..<12].allSatisfy({ $0 == 0 }) { return Array(b[12...]) }
        if b[0..<4] == [0x00, 0x64, 0xFF, 0x9B] && b[4..<12].allSatisfy({ $0 == 0 }) { return Array(b[12...]) }
        if b[0] == 0x20 && b[1] == 0x02 { return Array(b[2..<6]) }
        return nil
    }

    static func kind(ipv4 a: [UInt8]) -> String? {
        switch (a[0], a[1]) {
        case (0, _): return "unspecified"
        case (10, _), (172, 16...31), (192, 168): return "private"
        case (100, 64...127): return "carrier-grade NAT"
        case (127, _): return "loopback"
        case (169, 254): return "link-local"
        case (224...239, _): return "multicast"
        case (240...255, _): return "reserved"
        default: return nil
        }
    }

    // MARK: This machine

    /// The addresses of this machine's interfaces: whatever the server listens on is among them.
    public static func localAddresses() -> [IPAddress] {
        var list: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&list) == 0, let list else { return [] }
        defer { freeifaddrs(list) }
        var addresses: [IPAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = list
        while let entry = cursor {
            cursor = entry.pointee.ifa_next
            if let sa = entry.pointee.ifa_addr, let address = IPAddress(UnsafePointer(sa)) { addresses.append(address) }
        }
        return addresses
    }

    // MARK: Parsing

    static func exception(_ entry: String) throws(ParseError) -> Exception {
        let bad = ParseError(message: "entry '\(entry.prefix(100))' is not a host, an address or a CIDR block with an optional :port")
        var body = Substring(entry.lowercased())
        var portText: Substring?
        if body.first == "[" {
            guard let close = body.firstIndex(of: "]") else { throw bad }
            let after = body[body.index(after: close)...]
            if !after.isEmpty {
                guard after.first == ":" else { throw bad }
                portText = after.dropFirst()
            }
            body = body[body.index(after: body.startIndex)..<close]
            guard body.contains(":") else { throw bad }
        } else if body.filter({ $0 == ":" }).count == 1, let colon = body.firstIndex(of: ":") {
            portText = body[body.index(after: colon)...]
            body = body[..<colon]
        }
        var port: Int?
        if let portText {
            guard (1...5).contains(portText.count), portText.allSatisfy({ $0.isASCII && $0.isNumber }),
                  let value = Int(portText), (1...65535).contains(value) else { throw bad }
            port = value
        }
        if let block = IPBlock(body) { return Exception(target: .block(block), port: port) }
        guard isHostName(body) else { throw bad }
        return Exception(target: .host(String(body)), port: port)
    }

    /// A DNS name whose last label starts with a letter: `127.1` or `0x7f000001` are spellings
    /// of addresses, not names.
    static func isHostName(_ text: Substring) -> Bool {
        let labels = text.split(separator: ".", omittingEmptySubsequences: false)
        guard text.utf8.count <= 253, let last = labels.last, last.first?.isLetter == true else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
                && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        }
    }
}
