#if canImport(Glibc)
import Glibc
#endif
import SGEMAccounts
import SGEMApp
import SGEMCompany
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport
import Synchronization
import Testing

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// A fresh temporary directory, removed by `cleanup`.
struct TempDir: Sendable {
    let path: String
    init() {
        var template = Array("/tmp/sgem-accounts-test-XXXXXX".utf8CString)
        path = String(cString: mkdtemp(&template)!)
    }

    func cleanup() {
        guard let dir = opendir(path) else { return }
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { unlink(path + "/" + name) }
        }
        closedir(dir)
        rmdir(path)
    }
}

/// The settings every test server uses: loopback, port 0, cheap hashes.
func testSettings(_ dir: TempDir) -> [String: String] {
    ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning"]
}

let adminPassword = "correct horse battery"

/// `sgem-server admin …` in-process on `dir`; returns the exit code and the captured I/O.
@discardableResult
func admin(_ dir: TempDir, _ words: [String], input: [String] = []) async -> (code: Int32, io: MemoryIO) {
    let io = MemoryIO(input: input)
    let code = await Application.main(["admin"] + words + ["--data-dir", dir.path, "--password-hash-log-n", "10", "--log-level", "error"],
                                      environment: [:], io: io, configureLogging: false)
    return (code, io)
}

/// A full server (every module) started in-process on a fresh data directory with one admin,
/// `boss`, whose password is `adminPassword`.
final class TestServer: Sendable {
    let dir: TempDir
    let running: RunningServer
    var port: Int { running.port }

    private init(dir: TempDir, running: RunningServer) {
        self.dir = dir
        self.running = running
    }

    static func start(dir: TempDir = TempDir(), seedAdmin: Bool = true) async throws -> TestServer {
        if seedAdmin {
            let (code, io) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--name", "The Boss",
                                               "--role", "admin", "--password-stdin"], input: [adminPassword])
            guard code == 0 else { throw TestFailure("seeding the admin failed: \(io.errors)") }
        }
        let running = try await RunningServer.start(configuration: Configuration(overrides: testSettings(dir)))
        return TestServer(dir: dir, running: running)
    }

    func stop(removing: Bool = true) async {
        await running.stop()
        if removing { dir.cleanup() }
    }

    func call(_ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil, raw: [UInt8]? = nil,
              headers: [(String, String)] = []) async throws -> WireResponse {
        try await httpCall(port: port, method, path, token: token, json: json, raw: raw, headers: headers)
    }

    func login(_ login: String = "boss", _ password: String = adminPassword) async throws -> LoggedIn {
        let r = try await call("POST", "/api/v1/auth/login", json: ["login": .string(login), "password": .string(password)])
        guard r.status == 200 else { throw TestFailure("login \(login) answered \(r.status): \(r.text)") }
        return try LoggedIn(r)
    }

    /// Creates an employee (or admin) through the API and logs them in.
    func createUser(_ username: String, name: String? = nil, role: String = "employee", as admin: LoggedIn) async throws -> LoggedIn {
        let r = try await call("POST", "/api/v1/admin/users", token: admin.token, json: [
            "username": .string(username), "email": .string("\(username)@example.com"),
            "displayName": .string(name ?? username.capitalized), "role": .string(role), "password": .string("password-of-\(username)"),
        ])
        guard r.status == 201 else { throw TestFailure("creating \(username) answered \(r.status): \(r.text)") }
        return try await login(username, "password-of-\(username)")
    }
}

extension String {
    var capitalized: String { prefix(1).uppercased() + dropFirst() }
}

/// The answer to a login or registration.
struct LoggedIn: Sendable {
    let token: String
    let csrf: String
    let userID: Int64
    let setCookie: String

    init(_ r: WireResponse) throws {
        let v = try r.json()
        guard let token = v["token"]?.stringValue, let csrf = v["csrfToken"]?.stringValue,
              let id = v["user"]?["id"]?.numberValue, let cookie = r.header("Set-Cookie") else {
            throw TestFailure("not a session answer: \(r.text)")
        }
        self.token = token
        self.csrf = csrf
        self.userID = Int64(id)
        self.setCookie = cookie
    }

    /// The `Cookie` header a browser would send back.
    var cookieHeader: (String, String) { ("Cookie", "sgem_session=\(token)") }
}

/// A response as read off the wire.
struct WireResponse: Sendable {
    let status: Int
    let headers: [(String, String)]
    let body: [UInt8]
    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    var text: String { String(decoding: body, as: UTF8.self) }
    func json() throws -> JSONValue { try JSONValue.parse(body) }
    var errorCode: String? { (try? json())?["error"]?["code"]?.stringValue }
}

/// Blocking socket I/O runs on these threads, never on the cooperative pool that the in-process
/// server's handlers need.
let clientThreads = BlockingPool(name: "test-client", threads: 8)

func httpCall(port: Int, _ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil, raw: [UInt8]? = nil,
              headers: [(String, String)] = []) async throws -> WireResponse {
    var all = headers
    if let token { all.append(("Authorization", "Bearer \(token)")) }
    var body: [UInt8] = []
    if let json {
        body = Array(json.serialized().utf8)
        all.append(("Content-Type", "application/json"))
    } else if let raw {
        body = raw
        if !all.contains(where: { $0.0 == "Content-Type" }) { all.append(("Content-Type", "application/octet-stream")) }
    }
    let finalHeaders = all
    let finalBody = body
    return try await clientThreads.run { try blockingRequest(port: port, method: method, path: path, headers: finalHeaders, body: finalBody) }
}

/// One HTTP/1.1 exchange over a new connection (`Connection: close`), with a timeout.
func blockingRequest(port: Int, method: String, path: String, headers: [(String, String)], body: [UInt8], timeout: Int = 20) throws -> WireResponse {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    defer { close(fd) }
    var tv = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard ok == 0 else { throw TestFailure("connect to \(port) failed: errno \(errno)") }
    var head = "\(method) \(path) HTTP/1.1\r\n"
    if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: 127.0.0.1:\(port)\r\n" }
    head += "Connection: close\r\n"
    for (k, v) in headers { head += "\(k): \(v)\r\n" }
    if !body.isEmpty || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(body.count)\r\n" }
    head += "\r\n"
    let request = Array(head.utf8) + body
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n < 0 && errno == EINTR { continue }
        // The server may answer (413) and close before the whole body is sent.
        if n <= 0 { break }
        sent += n
    }
    var data: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n < 0 {
            if errno == EINTR { continue }
            if errno == ECONNRESET, !data.isEmpty { break }
            throw TestFailure("recv failed or timed out: errno \(errno)")
        }
        if n == 0 { break }
        data += chunk[0..<n]
    }
    return try parseResponse(data)
}

func parseResponse(_ data: [UInt8]) throws -> WireResponse {
    var end: Int?
    if data.count >= 4 {
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 { end = i; break }
    }
    guard let end else { throw TestFailure("no complete response head: \(String(decoding: data, as: UTF8.self))") }
    let lines = String(decoding: data[0..<end], as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false).map(String.init)
    let parts = lines[0].split(separator: " ")
    guard parts.count >= 2, let status = Int(parts[1]) else { throw TestFailure("bad status line \(lines[0])") }
    let headers = lines.dropFirst().compactMap { line -> (String, String)? in
        guard let colon = line.firstIndex(of: ":") else { return nil }
        return (String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: " "))
    }
    var body = Array(data[(end + 4)...])
    if let cl = headers.first(where: { $0.0.lowercased() == "content-length" }), let n = Int(cl.1) { body = Array(body.prefix(n)) }
    return WireResponse(status: status, headers: headers, body: body)
}

extension String {
    func trimmingCharacters(in set: String) -> String {
        var s = Substring(self)
        while let f = s.first, set.contains(f) { s = s.dropFirst() }
        while let l = s.last, set.contains(l) { s = s.dropLast() }
        return String(s)
    }
}

/// A clock the throttle tests move by hand.
final class ManualClock: Sendable {
    private let seconds = Atomic<Int64>(1_000_000)
    var now: Int64 { seconds.load(ordering: .relaxed) }
    func advance(_ by: Int64) { seconds.add(by, ordering: .relaxed) }
}

/// Only the company and accounts modules, booted by hand so the test chooses the throttle
/// policy; otherwise the same wiring as `RunningServer.start`.
final class ModuleServer: Sendable {
    let dir: TempDir
    let store: Store
    let server: HTTPServer
    let modules: [any Module]
    let context: ModuleContext
    var port: Int { server.port }

    init(throttle: ThrottlePolicy) async throws {
        dir = TempDir()
        let (code, io) = await admin(dir, ["create-user", "--username", "boss", "--email", "boss@example.com", "--role", "admin",
                                           "--password-stdin"], input: [adminPassword])
        guard code == 0 else { throw TestFailure("seeding failed: \(io.errors)") }
        let configuration = Configuration(overrides: testSettings(dir))
        modules = [CompanyModule(), AccountsModule(throttle: throttle)]
        var migrations = MigrationList()
        for m in modules { m.registerMigrations(&migrations) }
        store = try Store(path: configuration.databasePath, logger: Logger(label: "store"))
        _ = try await store.migrate(migrations)
        let router = Router()
        context = ModuleContext(configuration: configuration, store: store, services: ServiceRegistry(), events: EventBus(),
                                metrics: MetricsRegistry(), logger: Logger(label: "test"), router: router)
        for m in modules { try await m.boot(context) }
        for m in modules { m.registerRoutes(router.group("/api/v1"), root: router.group(""), context: context) }
        var http = HTTPServerConfiguration()
        http.host = "127.0.0.1"
        http.port = 0
        server = HTTPServer(configuration: http, router: router, logger: Logger(label: "http"))
        _ = try server.start()
    }

    func stop() async {
        await server.shutdown()
        for m in modules.reversed() { await m.shutdown(context) }
        await store.close()
        dir.cleanup()
    }
}

// MARK: Images

let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 4]
let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0, 0, 16, 0x4A, 0x46, 0x49, 0x46, 0, 1, 9, 9]
let webp: [UInt8] = Array("RIFF".utf8) + [40, 0, 0, 0] + Array("WEBPVP8 ".utf8) + [1, 2, 3, 4]
let gif: [UInt8] = Array("GIF89a".utf8) + [1, 0, 1, 0, 0, 0, 0]
