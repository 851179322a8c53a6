#if canImport(Glibc)
import Glibc
#endif
@_exported import SGEMTestPolling
import SGEMSupport

// Shared by the end-to-end test targets: a blocking HTTP/1.1 client, temporary directories and
// a failure type. Used only by tests.

/// A test's own failure, with what went wrong.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Monotonic seconds, for deadlines in tests.
public func now() -> Double { Double(MonotonicClock.nanoseconds()) / 1e9 }

/// A fresh temporary directory; `cleanup` removes it with everything inside.
public struct TempDir: Sendable {
    public let path: String

    public init(prefix: String = "sgem-test") {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        path = String(cString: made)
    }

    /// Removes the directory, and the test's PostgreSQL database when the run made one.
    public func cleanup() {
        removeTree(path)
        if testDatabaseURL != nil { dropPostgresDatabase() }
    }
}

/// Removes a file or a directory tree (no symlinks are followed).
public func removeTree(_ path: String) {
    var st = stat()
    guard lstat(path, &st) == 0 else { return }
    if (st.st_mode & S_IFMT) == S_IFDIR, let dir = opendir(path) {
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
            if name != "." && name != ".." { names.append(name) }
        }
        closedir(dir)
        for name in names { removeTree(path + "/" + name) }
        rmdir(path)
    } else {
        unlink(path)
    }
}

/// A response as read off the wire.
public struct WireResponse: Sendable {
    public let status: Int
    public let headers: [(String, String)]
    public let body: [UInt8]

    public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
    public var text: String { String(decoding: body, as: UTF8.self) }
    public func json() throws -> JSONValue { try JSONValue.parse(body) }
    /// `error.code` of a contract-shaped error body.
    public var errorCode: String? { (try? json())?["error"]?["code"]?.stringValue }
}

/// A blocking TCP connection to 127.0.0.1:`port` whose reads give up after `timeout` seconds;
/// `receiveBuffer` shrinks the kernel's buffer (set before connecting, so it holds). The caller
/// closes it.
public func connectLoopback(port: Int, timeout: Int = 20, receiveBuffer: Int32? = nil) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw TestFailure("socket failed") }
    if var size = receiveBuffer { setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size)) }
    var tv = timeval(tv_sec: timeout, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard ok == 0 else {
        let code = errno
        close(fd)
        throw TestFailure("connect to \(port) failed: errno \(code)")
    }
    return fd
}

/// One blocking HTTP/1.1 exchange with 127.0.0.1:`port` over a new connection
/// (`Connection: close`), with a receive timeout. A server that answers early (413) and closes
/// before the whole body is sent still yields its response.
public func httpRequest(port: Int, method: String = "GET", path: String, headers: [(String, String)] = [],
                        body: [UInt8] = [], timeout: Int = 20) throws -> WireResponse {
    let fd = try connectLoopback(port: port, timeout: timeout)
    defer { close(fd) }
    let request = requestHead(port: port, method: method, path: path, headers: headers, bodyCount: body.count) + body
    var sent = 0
    while sent < request.count {
        let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if n < 0 && errno == EINTR { continue }
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
    return try parseResponse(data, headRequest: method == "HEAD")
}

/// The head `httpRequest` sends: `Host` (unless given), `Connection: close`, the headers, and
/// `Content-Length` when there is a body or the method expects one.
func requestHead(port: Int, method: String, path: String, headers: [(String, String)], bodyCount: Int) -> [UInt8] {
    var head = "\(method) \(path) HTTP/1.1\r\n"
    if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: 127.0.0.1:\(port)\r\n" }
    head += "Connection: close\r\n"
    for (k, v) in headers { head += "\(k): \(v)\r\n" }
    if bodyCount > 0 || ["POST", "PUT", "PATCH"].contains(method) { head += "Content-Length: \(bodyCount)\r\n" }
    head += "\r\n"
    return Array(head.utf8)
}

/// Parses a whole HTTP/1.1 response; the body is cut to Content-Length when there is one.
public func parseResponse(_ data: [UInt8], headRequest: Bool = false) throws -> WireResponse {
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
        var value = Substring(line[line.index(after: colon)...])
        while value.first == " " || value.first == "\t" { value = value.dropFirst() }
        while value.last == " " || value.last == "\t" { value = value.dropLast() }
        return (String(line[..<colon]), String(value))
    }
    var body = Array(data[(end + 4)...])
    if !headRequest, let cl = headers.first(where: { $0.0.lowercased() == "content-length" }), let n = Int(cl.1) {
        body = Array(body.prefix(n))
    }
    return WireResponse(status: status, headers: headers, body: body)
}

/// Blocking socket I/O of `httpCall` runs on these threads, never on the cooperative pool that
/// an in-process server's handlers need.
public let httpClientThreads = BlockingPool(name: "test-http-client", threads: 8)

/// One HTTP exchange with 127.0.0.1:`port`, with a bearer `token`, a `json` body (or `raw`
/// bytes, sent as `application/octet-stream` unless `headers` say otherwise).
/// Always over a socket; feature suites call through `TestClient`, which may skip it.
public func httpCall(port: Int, _ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil, raw: [UInt8]? = nil,
                     headers: [(String, String)] = []) async throws -> WireResponse {
    try await TestClient(port: port).call(method, path, token: token, json: json, raw: raw, headers: headers)
}

/// The answer to a login, registration or first-run setup: the session it opened.
public struct LoggedIn: Sendable {
    public let token: String
    public let csrf: String
    public let userID: Int64

    /// Reads a session answer; one without its token, CSRF token, user or session cookie fails.
    public init(_ r: WireResponse) throws {
        let v = try r.json()
        guard let token = v["token"]?.stringValue, let csrf = v["csrfToken"]?.stringValue,
              let id = v["user"]?["id"]?.numberValue, r.header("Set-Cookie") != nil else {
            throw TestFailure("not a session answer: \(r.text)")
        }
        self.token = token
        self.csrf = csrf
        self.userID = Int64(id)
    }

    /// The `Cookie` header a browser would send back.
    public var cookieHeader: (String, String) { ("Cookie", "sgem_session=\(token)") }
}

/// Logs `login` in over the API of the server on `port`.
public func apiLogin(port: Int, _ login: String, _ password: String) async throws -> LoggedIn {
    try await apiLogin(TestClient(port: port), login, password)
}

/// Logs `login` in over the API that `client` reaches.
public func apiLogin(_ client: TestClient, _ login: String, _ password: String) async throws -> LoggedIn {
    let r = try await client.call("POST", "/api/v1/auth/login", json: ["login": .string(login), "password": .string(password)])
    guard r.status == 200 else { throw TestFailure("login \(login) answered \(r.status): \(r.text)") }
    return try LoggedIn(r)
}

/// Creates a user (`username@example.com`, password `password-of-<username>`) as `admin` over
/// the API of the server on `port`, then logs them in.
public func apiCreateUser(port: Int, _ username: String, displayName: String, role: String, as admin: LoggedIn) async throws -> LoggedIn {
    try await apiCreateUser(TestClient(port: port), username, displayName: displayName, role: role, as: admin)
}

/// Creates a user as `admin` over the API that `client` reaches, then logs them in.
public func apiCreateUser(_ client: TestClient, _ username: String, displayName: String, role: String, as admin: LoggedIn) async throws -> LoggedIn {
    let r = try await client.call("POST", "/api/v1/admin/users", token: admin.token, json: [
        "username": .string(username), "email": .string("\(username)@example.com"),
        "displayName": .string(displayName), "role": .string(role), "password": .string("password-of-\(username)"),
    ])
    guard r.status == 201 else { throw TestFailure("creating \(username) answered \(r.status): \(r.text)") }
    return try await apiLogin(client, username, "password-of-\(username)")
}
