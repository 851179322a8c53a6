import SGEMSupport
import SGEMTestSupport
import Testing

/// The console's page and its web app manifest carry the company's name, escaped, with an ETag
/// that changes with it; before an admin names the company they say "Company console".
@Suite struct ConsoleCompanyNameTests {
    func page(_ office: Office, _ path: String, etag: String? = nil) async throws -> WireResponse {
        try await httpCall(port: office.port, "GET", path, headers: etag.map { [("If-None-Match", $0)] } ?? [])
    }

    @Test func pageAndManifestFollowTheCompanysName() async throws {
        try await Office.with([]) { office in
            // Unnamed: a neutral name, and the page's application-name left empty for the console.
            let before = try await page(office, "/")
            #expect(before.status == 200)
            #expect(before.text.contains("<title>Company console</title>"))
            #expect(before.text.contains(#"<meta name="application-name" content="">"#))
            #expect(!before.text.contains("{{"))
            let manifestBefore = try await page(office, "/manifest.webmanifest")
            #expect(manifestBefore.header("Content-Type") == "application/manifest+json")
            #expect(manifestBefore.header("Cache-Control") == "no-cache")
            let unnamed = try manifestBefore.json()
            #expect(unnamed["name"]?.stringValue == "Company console")
            #expect(unnamed["short_name"]?.stringValue == "Console")
            #expect(unnamed["start_url"]?.stringValue == "/#/home")
            let pageTag = try #require(before.header("ETag"))
            let manifestTag = try #require(manifestBefore.header("ETag"))
            #expect(try await page(office, "/", etag: pageTag).status == 304)

            // A name that is markup and quotes stays text in the page and a string in the manifest.
            let name = #"Acme <b>"Tools"</b> & Sons"#
            try await office.expect(200, "PUT", "/admin/company", as: "boss", ["name": .string(name)])
            let after = try await page(office, "/", etag: pageTag)
            #expect(after.status == 200, "the old ETag must not keep the old name")
            let escaped = "Acme &lt;b&gt;&quot;Tools&quot;&lt;/b&gt; &amp; Sons"
            #expect(after.text.contains("<title>\(escaped)</title>"))
            #expect(after.text.contains(#"<meta name="application-name" content="\#(escaped)">"#))
            #expect(after.text.contains(#"<span id="brand-name">\#(escaped)</span>"#))
            #expect(!after.text.contains("<b>"))
            let setup = try await page(office, "/setup")
            #expect(setup.text.contains("<title>\(escaped)</title>"))
            let manifestAfter = try await page(office, "/manifest.webmanifest", etag: manifestTag)
            #expect(manifestAfter.status == 200)
            let named = try manifestAfter.json()
            #expect(named["name"]?.stringValue == name)
            #expect(named["short_name"]?.stringValue == "Acme")
            #expect(named["icons"]?.arrayValue?.count == 3)
            let newTag = try #require(manifestAfter.header("ETag"))
            #expect(newTag != manifestTag)
            #expect(try await page(office, "/manifest.webmanifest", etag: newTag).status == 304)

            // A short name is the short name; clearing it brings the neutral one back.
            try await office.expect(200, "PUT", "/admin/company", as: "boss", ["name": "Bravo SL"])
            #expect(try await page(office, "/manifest.webmanifest").json()["short_name"]?.stringValue == "Bravo SL")
            try await office.expect(200, "PUT", "/admin/company", as: "boss", ["name": .null])
            #expect(try await page(office, "/manifest.webmanifest").json()["name"]?.stringValue == "Company console")
        }
    }

    /// Under an icon: the whole name when short, else its first word, else its first 12 characters.
    @Test func shortNames() async throws {
        try await Office.with([]) { office in
            for (name, short) in [("Acme", "Acme"), ("Acme Holdings International", "Acme"),
                                  ("Supercalifragilistic Ltd", "Supercalifra"), ("Nombre Muy Largo", "Nombre")] {
                try await office.expect(200, "PUT", "/admin/company", as: "boss", ["name": .string(name)])
                #expect(try await page(office, "/manifest.webmanifest").json()["short_name"]?.stringValue == short, "\(name)")
            }
        }
    }
}
