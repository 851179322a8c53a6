#if canImport(Glibc)
import Glibc
#endif
@testable import SGEMApp
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite(.serialized) struct SetupLinkTests {
    @Test func aFirstRunPrintsAOneTimeSetupLinkWithTheRealPort() async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (server, port) = try startServer(dir, extra: ["--log-level", "notice"])
        let out = try server.waitForOutput("data: ")
        let lines = out.split(separator: "\n").map(String.init)
        let listening = try #require(lines.firstIndex { $0.contains("listening on http://127.0.0.1:\(port)/") })
        let setup = try #require(lines.firstIndex { $0.contains("/setup#token=") }, "\(out)")
        #expect(setup == listening + 1, "the link follows the listening line")
        let marker = "http://127.0.0.1:\(port)/setup#token="
        let line = lines[setup]
        let url = try #require(line.split(separator: " ").first { $0.hasPrefix("http") }.map(String.init))
        #expect(url.hasPrefix(marker), "the link names the bound host and the real port: \(line)")
        let token = String(url.dropFirst(marker.count))
        #expect(token.count == 43, "32 random bytes in base64url")
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        #expect(token.allSatisfy { alphabet.contains($0) })
        // Logged too.
        _ = try server.waitForOutput("create the first admin")
        #expect(await eventually { server.stderr.contains("first-run setup link") && server.stderr.contains(token) })

        let body = Array(#"{"token":"\#(token)","username":"owner","email":"owner@example.com","password":"a long first password"}"#.utf8)
        let created = try httpRequest(port: port, method: "POST", path: "/api/v1/auth/setup",
                                      headers: [("Content-Type", "application/json")], body: body)
        #expect(created.status == 201, "\(created.text)")
        #expect(try created.json()["user"]?["role"] == "admin")
        let again = try httpRequest(port: port, method: "POST", path: "/api/v1/auth/setup",
                                    headers: [("Content-Type", "application/json")], body: body)
        #expect(again.status == 403)
        #expect(again.errorCode == "setup_closed")
        server.signal(SIGTERM)
        #expect(try server.wait(seconds: 20) == 0)

        // With an admin, a restart prints no link.
        let (second, _) = try startServer(dir)
        let banner = try second.waitForOutput("data: ")
        #expect(!banner.contains("setup#token="))
        second.signal(SIGTERM)
        #expect(try second.wait(seconds: 20) == 0)
    }
}

@Suite struct SetupURLTests {
    @Test func theLinkNamesAHostAClientCanReach() {
        #expect(Server.setupURL(scheme: "http", host: "127.0.0.1", port: 8080, token: "t") == "http://127.0.0.1:8080/setup#token=t")
        #expect(Server.setupURL(scheme: "https", host: "::1", port: 443, token: "t") == "https://[::1]:443/setup#token=t")
        #expect(Server.setupURL(scheme: "http", host: "intranet.example", port: 1, token: "t") == "http://intranet.example:1/setup#token=t")
        for any in ["0.0.0.0", "::"] {
            let url = Server.setupURL(scheme: "http", host: any, port: 8080, token: "t")
            #expect(!url.contains("0.0.0.0") && !url.contains("[::]"), "never the wildcard address: \(url)")
            #expect(url.hasSuffix(":8080/setup#token=t"))
        }
    }
}

