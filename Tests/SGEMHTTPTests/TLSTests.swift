#if canImport(Glibc)
import Glibc
#endif
import Testing
import SGEMSupport
import SGEMTestSupport
@testable import SGEMHTTP

/// HTTPS with a self-signed certificate made by the `openssl` CLI; clients are `openssl s_client`
/// and Python's `ssl` module run as subprocesses.
@Suite("HTTPS", .serialized)
struct TLSTests {
    struct Fixture {
        let directory: String
        var certificate: String { directory + "/cert.pem" }
        var key: String { directory + "/key.pem" }

        static func make() throws -> Fixture {
            let fixture = Fixture(directory: try makeTemporaryDirectory())
            let made = runCommand("openssl req -x509 -newkey rsa:2048 -nodes -keyout \(fixture.key) -out \(fixture.certificate) -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost")
            guard made.status == 0 else { throw TestFailure("openssl req failed: \(made.output)") }
            return fixture
        }

        func remove() { _ = runCommand("rm -rf \(directory)") }
    }

    static func startSecure(_ fixture: Fixture) throws -> TestServer {
        try TestServer.start({ $0.tls = TLSConfiguration(certificatePath: fixture.certificate, keyPath: fixture.key) }, routes: { router in
            router.group("").get("/secure") { request, _ in .text("secure=\(request.isSecure)") }
        })
    }

    /// A verifying Python client: two pipelined requests, the second closing; prints the TLS version and the bytes.
    static func pythonClient(port: Int, certificate: String) -> (status: Int32, output: String) {
        let script = """
        import socket, ssl
        ctx = ssl.create_default_context(cafile='\(certificate)')
        s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', \(port)), timeout=5), server_hostname='localhost')
        s.sendall(b'GET /hello/tls HTTP/1.1\\r\\nHost: x\\r\\n\\r\\nGET /secure HTTP/1.1\\r\\nHost: x\\r\\nConnection: close\\r\\n\\r\\n')
        data = b''
        while True:
            chunk = s.recv(65536)
            if not chunk: break
            data += chunk
        print(s.version())
        print(data.decode())
        """
        let path = certificate + ".client.py"
        guard let file = fopen(path, "w") else { return (-1, "cannot write \(path)") }
        fputs(script, file)
        fclose(file)
        return runCommand("python3 \(path)")
    }

    @Test func roundTripOverTLS() async throws {
        let fixture = try Fixture.make()
        defer { fixture.remove() }
        let t = try Self.startSecure(fixture)
        let result = Self.pythonClient(port: t.port, certificate: fixture.certificate)
        #expect(result.status == 0, "\(result.output)")
        let lines = result.output.split(whereSeparator: { $0.isNewline }).map(String.init)
        #expect(lines.first == "TLSv1.3" || lines.first == "TLSv1.2")
        #expect(result.output.contains("\r\n\r\nhello tls"))
        #expect(result.output.hasSuffix("\r\n\r\nsecure=true\n"))
        #expect(result.output.split(separator: "HTTP/1.1 200 OK", omittingEmptySubsequences: false).count == 3)
        #expect(await eventually { t.server.openConnections == 0 })
        await t.server.shutdown()
    }

    @Test func tls11IsRefusedAndTls12Accepted() async throws {
        let fixture = try Fixture.make()
        defer { fixture.remove() }
        let t = try Self.startSecure(fixture)
        // SECLEVEL=0 lets the client offer TLS 1.1 at all, so a failure is the server's refusal.
        let old = runCommand("echo | timeout 10 openssl s_client -connect 127.0.0.1:\(t.port) -tls1_1 -cipher DEFAULT@SECLEVEL=0")
        #expect(old.status != 0)
        #expect(!old.output.contains("no protocols available"), "the client itself must be able to offer TLS 1.1")
        #expect(old.output.contains("alert protocol version"), "\(old.output)")
        let current = runCommand("echo | timeout 10 openssl s_client -connect 127.0.0.1:\(t.port) -tls1_2")
        #expect(current.output.contains("Protocol  : TLSv1.2"), "\(current.output)")
        #expect(await eventually { t.server.openConnections == 0 })
        await t.server.shutdown()
    }

    @Test func plainHTTPToAnHTTPSServerIsClosedCleanly() async throws {
        let fixture = try Fixture.make()
        defer { fixture.remove() }
        let t = try Self.startSecure(fixture)
        let client = try t.client()
        try client.send("GET /hello/plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.waitForClose())
        let junk = try t.client()
        try junk.send((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(junk.waitForClose())
        #expect(await eventually { t.server.openConnections == 0 })
        // And the server still serves real TLS clients.
        let result = Self.pythonClient(port: t.port, certificate: fixture.certificate)
        #expect(result.output.contains("hello tls"), "\(result.output)")
        await t.server.shutdown()
    }

    @Test func aConnectionWithoutTLSStateIsClosedNeverServedInPlaintext() async throws {
        let fixture = try Fixture.make()
        defer { fixture.remove() }
        let t = try Self.startSecure(fixture)
        let tls = try #require(t.server.core?.tls)
        tls.injectedStreamFailures.store(1, ordering: .relaxed)
        let client = try t.client()
        try client.send("GET /hello/plain HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.waitForClose())
        #expect(client.bufferedCount == 0, "not one byte, least of all a plaintext answer")
        #expect(t.metrics.counter("sgem_http_tls_setup_failures_total", help: "").value() == 1)
        #expect(await eventually { t.server.openConnections == 0 })
        // The next connection gets its TLS state and is served.
        let result = Self.pythonClient(port: t.port, certificate: fixture.certificate)
        #expect(result.output.contains("hello tls"), "\(result.output)")
        await t.server.shutdown()
    }

    @Test func missingCertificateFailsToStart() throws {
        var configuration = HTTPServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.tls = TLSConfiguration(certificatePath: "/nonexistent/cert.pem", keyPath: "/nonexistent/key.pem")
        let server = HTTPServer(configuration: configuration, router: Router(), logger: Logger(label: "t"), metrics: MetricsRegistry())
        do {
            _ = try server.start()
            Issue.record("started without a certificate")
        } catch let error as HTTPServerError {
            #expect(error.code == .tls)
            #expect(error.message.contains("/nonexistent/cert.pem"))
        }
    }
}
