import Testing
import SGEMSupport
@testable import SGEMHTTP

/// Adds a header naming itself, so tests can see which middleware ran and in what order.
struct TagMiddleware: Middleware {
    let tag: String
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        var response = try await next(request, context)
        response.headers.add("X-Tag", tag)
        return response
    }
}

/// Answers 401 itself unless the request carries a token.
struct GateMiddleware: Middleware {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        guard request.headers["Authorization"] == "Bearer ok" else { throw APIError.unauthenticated() }
        return try await next(request, context)
    }
}

struct Boom: Error {}

@Suite("Router")
struct RouterTests {
    func makeRouter() -> Router {
        let router = Router()
        let root = router.group("")
        root.get("/users/{id}") { request, _ in .text("user \(request.parameters["id"]!)") }
        root.get("/users/me") { _, _ in .text("me") }
        root.get("/users/{id}/posts/{post}") { request, _ in .text("\(request.parameters["id"]!)/\(request.parameters["post"]!)") }
        root.post("/users") { _, _ in Response(status: 201) }
        root.get("/assets/{path*}") { request, _ in .text("asset [\(request.parameters["path"]!)]") }
        return router
    }

    @Test func aClosureWithoutAwaitRunsWithoutATaskUnlessMiddlewareWrapsIt() {
        let router = Router()
        router.group("").get("/plain") { _, _ in .text("plain") }
        router.group("").get("/awaits") { _, _ in
            await Task.yield()
            return .text("awaits")
        }
        router.group("/wrapped", middleware: [TagMiddleware(tag: "t")]).get("/x") { _, _ in .text("x") }
        let table = router.build()
        #expect(table.match(method: .GET, path: "/plain").route?.synchronousHandler != nil)
        #expect(table.match(method: .GET, path: "/awaits").route?.synchronousHandler == nil)
        #expect(table.match(method: .GET, path: "/wrapped/x").route?.synchronousHandler == nil)
        let global = Router()
        global.use(TagMiddleware(tag: "global"))
        global.group("").get("/plain") { _, _ in .text("plain") }
        var request = Request(method: .GET, target: "/plain")
        let globalTable = global.build()
        #expect(globalTable.synchronousHandler(for: globalTable.prepare(&request, instruments: .standard)) == nil)
    }

    @Test("path parameters, static segments win over parameters", arguments: [
        ("/users/42", "user 42"),
        ("/users/me", "me"),
        ("/users/7/posts/9", "7/9"),
        ("/users/caf%C3%A9", "user café"),
        ("/assets/css/site.css", "asset [css/site.css]"),
        ("/assets/a", "asset [a]"),
        ("/assets", "asset []"),
    ])
    func routing(path: String, expected: String) async {
        let response = await makeRouter().respond(to: Request(method: .GET, target: path))
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == expected)
    }

    @Test func unknownPathIsJSON404() async throws {
        let response = await makeRouter().respond(to: Request(method: .GET, target: "/nope"))
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/json")
        let json = try JSONValue.parse(response.body)
        #expect(json["error"]?["code"]?.stringValue == "not_found")
        #expect(json["error"]?["message"]?.stringValue?.isEmpty == false)
    }

    @Test func wrongMethodIs405WithAllow() async throws {
        let response = await makeRouter().respond(to: Request(method: .DELETE, target: "/users"))
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "POST")
        let getOnly = await makeRouter().respond(to: Request(method: .POST, target: "/users/5"))
        #expect(getOnly.status == 405)
        #expect(getOnly.headers["Allow"] == "GET, HEAD")
        #expect(try JSONValue.parse(getOnly.body)["error"]?["code"]?.stringValue == "method_not_allowed")
    }

    @Test func headAnswersFromGetWithoutBody() async {
        let router = makeRouter()
        let get = await router.respond(to: Request(method: .GET, target: "/users/42"))
        let head = await router.respond(to: Request(method: .HEAD, target: "/users/42"))
        #expect(head.status == 200)
        #expect(head.body.isEmpty)
        #expect(head.headers["Content-Length"] == String(get.body.count))
        #expect(head.headers["Content-Type"] == get.headers["Content-Type"])
        #expect(get.body.count == "user 42".utf8.count)
    }

    @Test func groupsNestPrefixesAndMiddleware() async {
        let router = Router()
        router.use(TagMiddleware(tag: "global"))
        let api = router.group("/api/v1", middleware: [TagMiddleware(tag: "api")])
        let admin = api.group("admin", middleware: [GateMiddleware(), TagMiddleware(tag: "admin")])
        api.get("/ping") { _, _ in .text("pong") }
        admin.get("/stats") { _, _ in .text("stats") }

        let ping = await router.respond(to: Request(method: .GET, target: "/api/v1/ping"))
        #expect(String(decoding: ping.body, as: UTF8.self) == "pong")
        #expect(ping.headers.values("X-Tag") == ["api", "global"])

        let denied = await router.respond(to: Request(method: .GET, target: "/api/v1/admin/stats"))
        #expect(denied.status == 401)
        #expect(denied.headers.values("X-Tag") == [], "a thrown error skips the decorating middleware")

        let allowed = await router.respond(to: Request(method: .GET, target: "/api/v1/admin/stats", headers: HTTPHeaders([("Authorization", "Bearer ok")])))
        #expect(allowed.status == 200)
        #expect(allowed.headers.values("X-Tag") == ["admin", "api", "global"])
        #expect(router.routes.map(\.pattern) == ["/api/v1/ping", "/api/v1/admin/stats"])
    }

    @Test func globalMiddlewareRunsFor404() async {
        let router = Router()
        struct Rewrite: Middleware {
            func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
                do { return try await next(request, context) } catch let error as APIError where error.status == 404 {
                    return .text("custom 404 for \(request.path)", status: 404)
                }
            }
        }
        router.use(Rewrite())
        let response = await router.respond(to: Request(method: .GET, target: "/missing"))
        #expect(response.status == 404)
        #expect(String(decoding: response.body, as: UTF8.self) == "custom 404 for /missing")
    }

    @Test func httpErrorsRenderAsContractJSON() async throws {
        let router = Router()
        let root = router.group("")
        root.get("/conflict") { _, _ in throw APIError.conflict("username_taken", "that username is taken") }
        root.get("/invalid") { _, _ in throw APIError.validationFailed(["email": "must contain @"]) }
        root.get("/slow-down") { _, _ in throw APIError.rateLimited(retryAfter: 30) }

        let conflict = await router.respond(to: Request(method: .GET, target: "/conflict"))
        #expect(conflict.status == 409)
        let json = try JSONValue.parse(conflict.body)
        #expect(json["error"]?["code"]?.stringValue == "username_taken")
        #expect(json["error"]?["message"]?.stringValue == "that username is taken")

        let invalid = await router.respond(to: Request(method: .GET, target: "/invalid"))
        #expect(invalid.status == 422)
        #expect(try JSONValue.parse(invalid.body)["error"]?["details"]?["fields"]?["email"]?.stringValue == "must contain @")

        let limited = await router.respond(to: Request(method: .GET, target: "/slow-down"))
        #expect(limited.status == 429)
        #expect(limited.headers["Retry-After"] == "30")
    }

    @Test func unexpectedErrorIsLogged500WithRequestID() async throws {
        let sink = TestLog.sink
        let router = Router()
        router.group("").get("/explode") { _, _ in throw Boom() }
        let response = await router.respond(to: Request(method: .GET, target: "/explode", headers: HTTPHeaders([("X-Request-Id", "boom-request-1")])))
        #expect(response.status == 500)
        let json = try JSONValue.parse(response.body)
        #expect(json["error"]?["code"]?.stringValue == "internal")
        #expect(json["error"]?["message"]?.stringValue == "internal error; request id boom-request-1")
        #expect(!String(decoding: response.body, as: UTF8.self).contains("Boom"), "no internals leak to the client")
        let logged = sink.lines.filter { $0.contains("level=error") && $0.contains("request.id=boom-request-1") }
        #expect(logged.count == 1)
        #expect(logged.first?.contains("Boom") == true)
    }

    @Test("request id: valid client ids are echoed, others replaced", arguments: [
        ("abc-123_X.y", true),
        (String(repeating: "a", count: 64), true),
        (String(repeating: "a", count: 65), false),
        ("has space", false),
        ("semi;colon", false),
        ("", false),
    ])
    func requestID(header: String, echoed: Bool) async {
        let router = makeRouter()
        let response = await router.respond(to: Request(method: .GET, target: "/users/me", headers: HTTPHeaders([("X-Request-Id", header)])))
        let id = response.headers["X-Request-Id"]
        if echoed {
            #expect(id == header)
        } else {
            #expect(id != header)
            #expect(id?.count == 16)
            #expect(id?.allSatisfy(\.isHexDigit) == true)
        }
    }

    @Test func bodyCapsComeFromTheRoute() {
        let router = Router(defaultMaxBodyBytes: 1000)
        let root = router.group("/api")
        root.put("/avatar", maxBody: 2 << 20) { _, _ in .noContent() }
        root.post("/notes") { _, _ in .noContent() }
        #expect(router.maxBodyBytes(method: .PUT, path: "/api/avatar") == 2 << 20)
        #expect(router.maxBodyBytes(method: .POST, path: "/api/notes") == 1000)
        #expect(router.maxBodyBytes(method: .POST, path: "/unknown") == 1000)
        #expect(router.routes.first?.maxBodyBytes == 2 << 20)
    }

    @Test func queryAndPathAreDecoded() async {
        let request = Request(method: .GET, target: "/search/a%20b?q=caf%C3%A9+latte&x=1&x=2&flag")
        #expect(request.path == "/search/a b")
        #expect(request.query["q"] == "café latte")
        #expect(request.query["x"] == "2")
        #expect(request.query["flag"] == "")
        let absolute = Request(method: .GET, target: "http://example.com/p?a=1")
        #expect(absolute.path == "/p")
        #expect(absolute.query["a"] == "1")
    }

    struct Payload: Codable, Equatable { var name: String; var count: Int }

    @Test func decodeChecksMediaTypeAndJSON() throws {
        let good = Request(method: .POST, target: "/", headers: HTTPHeaders([("Content-Type", "application/json; charset=utf-8")]),
                           body: Array(#"{"name":"a","count":2}"#.utf8))
        #expect(try good.decode(Payload.self) == Payload(name: "a", count: 2))

        let wrongType = Request(method: .POST, target: "/", headers: HTTPHeaders([("Content-Type", "text/plain")]), body: Array("{}".utf8))
        #expect(throws: APIError.self) { try wrongType.decode(Payload.self) }
        do { _ = try wrongType.decode(Payload.self) } catch let error as APIError { #expect(error.status == 415); #expect(error.code == "unsupported_media_type") }

        let json = HTTPHeaders([("Content-Type", "application/json")])
        let broken = Request(method: .POST, target: "/", headers: json, body: Array(#"{"name":"a""#.utf8))
        do { _ = try broken.decode(Payload.self); Issue.record("expected a failure") } catch let error as APIError {
            #expect(error.status == 400)
            #expect(error.code == "invalid_json")
        }
        let missing = Request(method: .POST, target: "/", headers: json, body: Array(#"{"name":"a"}"#.utf8))
        do { _ = try missing.decode(Payload.self); Issue.record("expected a failure") } catch let error as APIError {
            #expect(error.code == "invalid_json")
            #expect(error.message.contains("count"))
        }
    }

    @Test func headersAreCaseInsensitive() {
        var headers = HTTPHeaders([("Content-Type", "a"), ("X-Multi", "1")])
        headers.add("x-multi", "2")
        #expect(headers["content-type"] == "a")
        #expect(headers.values("X-MULTI") == ["1", "2"])
        headers.set("X-Multi", "3")
        #expect(headers.values("x-multi") == ["3"])
        headers.remove("CONTENT-TYPE")
        #expect(!headers.contains("Content-Type"))
        #expect(headers.count == 1)
    }
}

@Suite struct ResponseWriterTests {
    /// The server writes the request id itself: one `X-Request-Id` field, after the handler's
    /// own fields, replacing any the handler set (what `HTTPHeaders.set` did before).
    @Test func writesTheRequestIDOnceAfterTheHandlersFields() {
        let response = Response(status: 200, headers: HTTPHeaders([("X-Request-Id", "handler"), ("Content-Type", "text/plain")]),
                                body: Array("hi".utf8))
        let head = RequestHead(method: .GET, target: "/", minorVersion: 1, headers: HTTPHeaders())
        let text = String(decoding: ResponseWriter.serialize(response, head: head, keepAlive: true, upgrade: false, requestID: "rid-1"),
                          as: UTF8.self)
        #expect(text.contains("Content-Type: text/plain\r\nX-Request-Id: rid-1\r\nContent-Length: 2\r\n\r\nhi"))
        #expect(!text.contains("handler"))
    }
}
