import SGEMCore
import SGEMHTTP
import SGEMSupport

/// Serves the web console: `/`, `/setup` (the first-run form), `/join` (sign-up), `/assets/*`, and what makes it
/// installable on a phone (`/manifest.webmanifest`, the service worker `/sw.js` at the root
/// scope), all from bytes compiled into the binary, with ETag revalidation, gzip when the client
/// accepts it, and the security headers (CSP and friends).
public struct ConsoleModule: Module {
    public let id: ModuleID = "console"
    let pages: [ConsolePage]

    /// - Parameter pages: the console pages every module registered.
    public init(pages: [ConsolePage]) { self.pages = pages }

    /// The Content-Security-Policy of every console response: nothing from outside, no inline
    /// script or style, no framing.
    public static let contentSecurityPolicy =
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; " +
        "font-src 'self'; manifest-src 'self'; worker-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; " +
        "frame-ancestors 'none'"

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        ConsoleRuntime(pages: pages, services: context.services)
    }
}

/// The console's routes: the page, its assets and the list of screens.
struct ConsoleRuntime: ModuleRuntime {
    let pages: [ConsolePage]
    /// Where the company's name is found (looked up per request: the company module may boot later).
    let services: ServiceRegistry

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let console = root.group("", middleware: [SecurityHeaders()])
        let services = self.services
        console.get("/", doc: RouteDoc(summary: "The web console", tags: ["console"],
                                       responses: [ResponseDoc(status: 200, description: "The console's page", contentType: "text/html")])) { request, _ in
            ConsoleModule.serveIndex(request, companyName: await ConsoleModule.companyName(services))
        }
        // The first-run link (`/setup#token=…`) opens the same page; the console reads the fragment.
        console.get("/setup", doc: RouteDoc(summary: "The console's first-run page: create the first administrator", tags: ["console"],
                                            responses: [ResponseDoc(status: 200, description: "The console's page", contentType: "text/html")])) { request, _ in
            ConsoleModule.serveIndex(request, companyName: await ConsoleModule.companyName(services))
        }
        // An invitation link (`/join#invite=…`) opens the same page at the sign-up screen.
        console.get("/join", doc: RouteDoc(summary: "The console's sign-up page (invitation links open it)", tags: ["console"],
                                           responses: [ResponseDoc(status: 200, description: "The console's page", contentType: "text/html")])) { request, _ in
            ConsoleModule.serveIndex(request, companyName: await ConsoleModule.companyName(services))
        }
        console.get("/manifest.webmanifest", doc: RouteDoc(summary: "The web app manifest (install the console on a phone), named after the company", tags: ["console"],
                                                           responses: [ResponseDoc(status: 200, description: "The manifest",
                                                                                   schema: ["type": "object"], contentType: "application/manifest+json")])) { request, _ in
            ConsoleModule.serveManifest(request, companyName: await ConsoleModule.companyName(services))
        }
        // At the root so its scope is the whole console; it caches the shell, never /api/.
        console.get("/sw.js", doc: RouteDoc(summary: "The console's service worker (offline page, cached shell)", tags: ["console"],
                                            responses: [ResponseDoc(status: 200, description: "The script", contentType: "text/javascript")])) { request, _ in
            ConsoleModule.serve("sw.js", request)
        }
        console.get("/assets/{path*}", doc: RouteDoc(summary: "Console assets (CSS, JS, images)", tags: ["console"],
                                                     responses: [ResponseDoc(status: 200, description: "The file", contentType: "application/octet-stream")])) { request, _ in
            ConsoleModule.serve(request.parameters["path"] ?? "", request)
        }
        let pages = self.pages
        routes.get("/console/pages", doc: RouteDoc(summary: "The console screens the modules registered, in navigation order", tags: ["console"],
                                                   responses: [ResponseDoc(status: 200, description: "The pages", schema: ["type": "object"])])) { _, _ in
            let items: [JSONValue] = pages.map { p in
                ["id": .string(p.id), "title": .string(p.title), "titleES": .string(p.titleES), "route": .string(p.route),
                 "script": .string("/assets/" + p.script), "order": .number(Double(p.order)), "adminOnly": .bool(p.adminOnly),
                 "inNavigation": .bool(p.inNavigation)]
            }
            return .json(["items": .array(items)] as JSONValue)
        }
    }
}

extension ConsoleModule {
    /// The response for one embedded file: 304 when the ETag matches, gzip when accepted.
    static func serve(_ name: String, _ request: Request) -> Response {
        // The page itself is a template: it is served only through `serveIndex`, filled in.
        guard !name.contains(".."), name != "index.html", let asset = embeddedAssets[name] else {
            return .error(APIError.notFound("no such console file"))
        }
        var headers = HTTPHeaders()
        headers.set("ETag", asset.etag)
        headers.set("Cache-Control", "no-cache")
        headers.set("Vary", "Accept-Encoding")
        if request.headers.ifNoneMatchMatches(asset.etag) {
            return Response(status: 304, headers: headers)
        }
        headers.set("Content-Type", asset.contentType)
        if let gz = asset.gzipped, acceptsGzip(request.headers["Accept-Encoding"]) {
            headers.set("Content-Encoding", "gzip")
            return Response(status: 200, headers: headers, body: gz)
        }
        return Response(status: 200, headers: headers, body: asset.bytes)
    }

    /// True when `Accept-Encoding` lists gzip (or `*`) without `q=0`.
    static func acceptsGzip(_ header: String?) -> Bool {
        guard let header else { return false }
        for item in header.lowercased().split(separator: ",") {
            let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: " \t") }
            guard let coding = parts.first, coding == "gzip" || coding == "*" else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return q > 0
        }
        return false
    }
}

/// Adds the console's security headers to every response it wraps.
public struct SecurityHeaders: Middleware {
    public init() {}

    public func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        var response = try await next(request, context)
        response.headers.set("Content-Security-Policy", ConsoleModule.contentSecurityPolicy)
        response.headers.set("X-Content-Type-Options", "nosniff")
        response.headers.set("X-Frame-Options", "DENY")
        response.headers.set("Referrer-Policy", "same-origin")
        response.headers.set("Cross-Origin-Opener-Policy", "same-origin")
        response.headers.set("Permissions-Policy", "camera=(), microphone=(), geolocation=()")
        return response
    }
}

