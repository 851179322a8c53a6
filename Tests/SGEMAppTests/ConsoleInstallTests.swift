#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import SGEMTestSupport
import Testing

/// The console as an installable app, through the real binary: the first-run page, the web app
/// manifest and its icons, the service worker at the root scope, and the CSP that allows them.
@Suite(.serialized) struct ConsoleInstallTests {
    /// Width and height from a PNG's IHDR chunk, or nil when `bytes` is not a PNG.
    static func pngSize(_ bytes: [UInt8]) -> (Int, Int)? {
        guard bytes.count > 24, bytes.prefix(8) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
              Array(bytes[12..<16]) == Array("IHDR".utf8) else { return nil }
        let be = { (at: Int) in bytes[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        return (be(16), be(20))
    }

    @Test func setupManifestIconsAndServiceWorkerAreServedUnderTheCSP() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (server, port) = try startServer(dir)
        defer { server.signal(SIGKILL) }

        // /setup is the console's own page (the fragment with the token never reaches the server).
        let root = try httpRequest(port: port, path: "/")
        let setup = try httpRequest(port: port, path: "/setup")
        #expect(setup.status == 200)
        #expect(setup.header("Content-Type") == "text/html; charset=utf-8")
        #expect(setup.body == root.body)
        let csp = try #require(setup.header("Content-Security-Policy"))
        #expect(csp.contains("manifest-src 'self'") && csp.contains("worker-src 'self'"))
        #expect(!csp.contains("unsafe-inline"))
        for tag in [#"<link rel="manifest" href="/manifest.webmanifest">"#, #"<meta name="theme-color""#,
                    #"<link rel="apple-touch-icon" href="/assets/icons/apple-touch-icon.png">"#, #"class="skip-link""#] {
            #expect(setup.text.contains(tag), "index.html lacks \(tag)")
        }
        // The page's template is not an asset: its placeholders never reach a browser.
        #expect(!setup.text.contains("{{"))
        #expect(try httpRequest(port: port, path: "/assets/index.html").status == 404)

        let manifestReply = try httpRequest(port: port, path: "/manifest.webmanifest")
        #expect(manifestReply.status == 200)
        #expect(manifestReply.header("Content-Type") == "application/manifest+json")
        let manifest = try JSONValue.parse(manifestReply.body)
        #expect(manifest["start_url"]?.stringValue == "/#/home")
        #expect(manifest["display"]?.stringValue == "standalone")
        #expect(manifest["short_name"]?.stringValue?.isEmpty == false)
        #expect(manifest["theme_color"]?.stringValue?.hasPrefix("#") == true)
        let icons = try #require(manifest["icons"]?.arrayValue)
        var seen: Set<String> = []
        for icon in icons {
            let src = try #require(icon["src"]?.stringValue)
            let sizes = try #require(icon["sizes"]?.stringValue)
            let purpose = icon["purpose"]?.stringValue ?? "any"
            let image = try httpRequest(port: port, path: src)
            #expect(image.status == 200, "\(src)")
            #expect(image.header("Content-Type") == "image/png")
            let size = try #require(Self.pngSize(image.body), "\(src) is not a PNG")
            #expect("\(size.0)x\(size.1)" == sizes, "\(src) is \(size.0)x\(size.1), the manifest says \(sizes)")
            seen.insert("\(sizes) \(purpose)")
        }
        #expect(seen.isSuperset(of: ["192x192 any", "512x512 any", "512x512 maskable"]), "\(seen)")
        let touch = try httpRequest(port: port, path: "/assets/icons/apple-touch-icon.png")
        #expect(Self.pngSize(touch.body).map { "\($0.0)x\($0.1)" } == "180x180")

        // The worker sits at the root so its scope is the whole console; it revalidates like any asset.
        let worker = try httpRequest(port: port, path: "/sw.js")
        #expect(worker.status == 200)
        #expect(worker.header("Content-Type") == "text/javascript; charset=utf-8")
        #expect(worker.text.contains("/assets/offline.html"))
        let etag = try #require(worker.header("ETag"))
        #expect(try httpRequest(port: port, path: "/sw.js", headers: [("If-None-Match", etag)]).status == 304)
        let offline = try httpRequest(port: port, path: "/assets/offline.html")
        #expect(offline.status == 200)
        #expect(offline.text.contains("/assets/app.css") && !offline.text.contains("<script") && !offline.text.contains("style="))

        let openapi = try JSONValue.parse(try httpRequest(port: port, path: "/api/v1/openapi.json").body)
        for path in ["/setup", "/manifest.webmanifest", "/sw.js"] {
            #expect(openapi["paths"]?[path] != nil, "openapi lacks \(path)")
        }
    }
}
