import SGEMSupport
import SGEMTestSupport
import Testing
@testable import SGEMHTTP

/// The outbound policy: internal destinations refused however they are spelled, checked on what
/// the real resolver returns, on redirects, and never connected to; `--outbound-allow` parsed.
@Suite("Outbound policy")
struct OutboundPolicyTests {
    /// A client allowing `list` (nothing by default).
    static func client(allowing list: String = "") throws -> HTTPClient {
        let policy = try OutboundPolicy(allowing: list)
        return try HTTPClientTests.client { $0.outboundPolicy = policy }
    }

    /// Waits until `stub` counted `count` accepted connections: a refused call that had connected
    /// would have been counted before the allowed one that follows it.
    static func acceptsOnlyTheAllowedCall(_ stub: StubHTTPServer) async throws {
        let allowed = try client(allowing: "127.0.0.1")
        defer { allowed.shutdown() }
        #expect(try await allowed.send(HTTPClientRequest(url: stub.url("/"))).status == 200)
        #expect(await eventually(10) { stub.accepted >= 1 })
        #expect(stub.accepted == 1, "only the allowed call reached the stub")
    }

    @Test("the six spellings of 127.0.0.1 and the IPv6 internal forms are refused, nothing connected",
          arguments: ["2130706433", "0x7f000001", "127.1", "0", "localhost", "[::ffff:127.0.0.1]", "[::1]", "[fe80::1]", "[fc00::1]",
                      "[::ffff:10.0.0.1]", "[64:ff9b::7f00:1]"])
    func refusedSpellings(host: String) async throws {
        let stub = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "<rss/>"), close: false) }
        defer { stub.stop() }
        let client = try Self.client()
        defer { client.shutdown() }
        let error = await HTTPClientTests.failure { _ = try await client.send(HTTPClientRequest(url: "http://\(host):\(stub.port)/metrics")) }
        #expect(error?.code == .refusedDestination, "\(String(describing: error))")
        try await Self.acceptsOnlyTheAllowedCall(stub)
    }

    @Test("a refused closed port and a refused open port fail alike")
    func closedAndOpenAlike() async throws {
        let open = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "up"), close: false) }
        let closed = try StubHTTPServer { _ in .hang }
        closed.stop()
        defer { open.stop() }
        let client = try Self.client()
        defer { client.shutdown() }
        let a = await HTTPClientTests.failure { _ = try await client.send(HTTPClientRequest(url: open.url("/"))) }
        let b = await HTTPClientTests.failure { _ = try await client.send(HTTPClientRequest(url: closed.url("/"))) }
        #expect(a?.code == .refusedDestination && b?.code == .refusedDestination)
        #expect(a?.message == b?.message, "nothing in the error tells the ports apart")
    }

    @Test("an allowed host's redirect to a refused address or port is refused without connecting")
    func redirectToRefused() async throws {
        let target = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "secret"), close: false) }
        defer { target.stop() }
        let source = try StubHTTPServer { request in
            switch request.path {
            case "/port": .bytes(StubHTTPServer.response(302, headers: ["Location: http://127.0.0.1:\(target.port)/"]), close: false)
            case "/address": .bytes(StubHTTPServer.response(302, headers: ["Location: http://127.0.0.2:\(target.port)/"]), close: false)
            case "/same": .bytes(StubHTTPServer.response(302, headers: ["Location: /here"]), close: false)
            default: .bytes(StubHTTPServer.response(200, "here"), close: false)
            }
        }
        defer { source.stop() }
        let client = try Self.client(allowing: "127.0.0.1:\(source.port)")
        defer { client.shutdown() }
        #expect(try await client.send(HTTPClientRequest(url: source.url("/same"))).text == "here", "the allowed origin is reached")
        for path in ["/port", "/address"] {
            let error = await HTTPClientTests.failure { _ = try await client.send(HTTPClientRequest(url: source.url(path))) }
            #expect(error?.code == .refusedDestination, "\(path): \(String(describing: error))")
        }
        try await Self.acceptsOnlyTheAllowedCall(target)
    }

    @Test("an exception lets through what it names: the address on its port, a host name, a block")
    func exceptionsAllow() async throws {
        let stub = try StubHTTPServer { _ in .bytes(StubHTTPServer.response(200, "ok"), close: false) }
        defer { stub.stop() }
        for list in ["127.0.0.1:\(stub.port)", "localhost", "127.0.0.0/8", "[::ffff:127.0.0.0/104]"] {
            let client = try Self.client(allowing: list)
            defer { client.shutdown() }
            let url = list == "localhost" ? "http://localhost:\(stub.port)/" : stub.url("/")
            #expect(try await client.send(HTTPClientRequest(url: url)).text == "ok", "\(list)")
        }
        let otherPort = try Self.client(allowing: "127.0.0.1:\(stub.port == 65535 ? 1 : stub.port + 1)")
        defer { otherPort.shutdown() }
        let error = await HTTPClientTests.failure { _ = try await otherPort.send(HTTPClientRequest(url: stub.url("/"))) }
        #expect(error?.code == .refusedDestination, "an exception for another port does not cover this one")
    }

    @Test("address kinds: internal ones named, public ones (and their NAT64 forms) not", arguments: [
        ("127.0.0.1", "loopback"), ("0.0.0.0", "unspecified"), ("10.1.2.3", "private"), ("172.16.0.1", "private"),
        ("172.31.255.255", "private"), ("192.168.1.1", "private"), ("100.64.0.1", "carrier-grade NAT"),
        ("169.254.169.254", "link-local"), ("224.0.0.1", "multicast"), ("255.255.255.255", "reserved"),
        ("::", "unspecified"), ("::1", "loopback"), ("fe80::1", "link-local"), ("fc00::1", "private"), ("fd12::1", "private"),
        ("ff02::1", "multicast"), ("::ffff:192.168.0.1", "private"), ("::7f00:1", "loopback"), ("64:ff9b::a00:1", "private"),
        ("2002:7f00:1::", "loopback"), ("64:ff9b:1::1", "private"),
        ("8.8.8.8", nil), ("172.32.0.1", nil), ("100.128.0.1", nil), ("2606:4700::1111", nil), ("64:ff9b::808:808", nil),
    ] as [(String, String?)])
    func kinds(address: String, kind: String?) throws {
        #expect(OutboundPolicy.kind(of: try #require(IPAddress(address))) == kind)
    }

    @Test("this machine's own public address is refused like loopback")
    func ownAddress() throws {
        let own = try #require(IPAddress("203.0.113.7"))
        let policy = OutboundPolicy()
        #expect(policy.refusal(host: "example.com", address: own, port: 443, localAddresses: [own]) != nil)
        #expect(policy.refusal(host: "example.com", address: own, port: 443, localAddresses: []) == nil)
        #expect(OutboundPolicy.localAddresses().contains(try #require(IPAddress("127.0.0.1"))), "getifaddrs lists the loopback")
    }

    @Test("allow lists: hosts, addresses, blocks, ports, bracketed IPv6", arguments: [
        ("translate.example.com", OutboundPolicy.Exception.Target.host("translate.example.com"), nil),
        ("LibreTranslate.Internal:5000", .host("libretranslate.internal"), 5000),
        ("127.0.0.1", .block(IPBlock("127.0.0.1")!), nil),
        ("127.0.0.1:5000", .block(IPBlock("127.0.0.1/32")!), 5000),
        ("10.0.0.0/8:443", .block(IPBlock("10.0.0.0/8")!), 443),
        ("::1", .block(IPBlock("::1/128")!), nil),
        ("[::1]:5000", .block(IPBlock("::1")!), 5000),
        ("fc00::/7", .block(IPBlock("fc00::/7")!), nil),
        ("[fd00::/8]:80", .block(IPBlock("fd00::/8")!), 80),
    ] as [(String, OutboundPolicy.Exception.Target, Int?)])
    func parses(entry: String, target: OutboundPolicy.Exception.Target, port: Int?) throws {
        let policy = try OutboundPolicy(allowing: " \(entry) , ")
        #expect(policy.exceptions == [OutboundPolicy.Exception(target: target, port: port)])
    }

    @Test("a bad entry is named in one line", arguments: ["127.1", "0x7f000001", "10.0.0.0/33", "::1/129", "host:0", "host:70000",
                                                          "host:+80", "[::1", "[::1]x", "[127.0.0.1]", "a b", "http://x", "host:", ":80",
                                                          "-bad.example", "example..com"])
    func refusesBadEntries(entry: String) {
        #expect(throws: OutboundPolicy.ParseError(message: "entry '\(entry)' is not a host, an address or a CIDR block with an optional :port")) {
            try OutboundPolicy(allowing: "example.com, \(entry)")
        }
    }

    @Test("a block matches by prefix, in both families", arguments: [
        ("172.16.0.0/12", "172.31.0.1", true), ("172.16.0.0/12", "172.32.0.1", false),
        ("172.16.0.0/12", "::ffff:172.20.0.1", true), ("fc00::/7", "fdff::1", true), ("fc00::/7", "fe00::1", false),
        ("0.0.0.0/0", "::1", false), ("::ffff:127.0.0.0/104", "127.9.9.9", true),
    ])
    func blocks(block: String, address: String, inside: Bool) throws {
        #expect(try #require(IPBlock(block)).contains(try #require(IPAddress(address))) == inside)
    }
}
