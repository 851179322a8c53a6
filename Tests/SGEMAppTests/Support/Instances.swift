#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import SGEMTestSupport
import Synchronization

/// Several real `sgem-server serve` processes on one PostgreSQL database (a fresh one, dropped by
/// `close()`), as a company runs them behind a load balancer: each with a data directory and a
/// port of its own, all with one secret key file. Instance `i`'s PostgreSQL sessions are named
/// `sgem-test-<letter>` (`application_name` in its URL), so a test can find them in
/// `pg_stat_activity`.
final class Instances {
    let dir: TempDir
    /// The test database, as the command line takes it.
    let databaseURL: String
    private(set) var servers: [Subprocess] = []
    private(set) var ports: [Int] = []
    /// What each instance printed on standard output up to its `data:` line.
    private(set) var banners: [String] = []

    private static let letters = ["a", "b", "c", "d", "e", "f"]

    init() throws {
        dir = TempDir()
        databaseURL = try dir.postgresURL()
    }

    var secretKeyFile: String { dir.path + "/secret.key" }

    /// The name instance `i`'s sessions carry in `pg_stat_activity`.
    func applicationName(_ i: Int) -> String { "sgem-test-" + Self.letters[i] }

    /// What the command-line verbs run with: the database, the shared key file, a directory of their own.
    var commandFlags: [String] {
        ["--data-dir", dir.path + "/cli", "--database-url", databaseURL, "--secret-key-file", secretKeyFile, "--log-level", "warning"]
    }

    /// The schema and the admin `boss` through the command line, as an operator seeds a company.
    func seed(bossPassword: String) throws {
        let migrated = try runBinary(["migrate"] + commandFlags)
        guard migrated.code == 0 else { throw TestFailure("migrate failed: \(migrated.err)") }
        let boss = try runBinary(["admin", "create-user", "--username", "boss", "--email", "boss@example.com", "--name", "Boss",
                                  "--role", "admin", "--password-stdin", "--password-hash-log-n", "10"] + commandFlags,
                                 input: bossPassword + "\n")
        guard boss.code == 0 else { throw TestFailure("create-user boss failed: \(boss.err)") }
    }

    /// Starts `count` instances together and waits until each has printed its `data:` line.
    func start(_ count: Int) throws {
        for i in 0..<count {
            let url = databaseURL + (databaseURL.contains("?") ? "&" : "?") + "application_name=" + applicationName(i)
            servers.append(try Subprocess(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dir.path + "/" + Self.letters[i],
                                           "--database-url", url, "--secret-key-file", secretKeyFile,
                                           "--password-hash-log-n", "10", "--log-level", "warning"]))
        }
        let marker = "listening on http://127.0.0.1:"
        for server in servers {
            let out = try server.waitForOutput("\ndata: ", seconds: 60)
            guard let line = out.split(separator: "\n").first(where: { $0.contains(marker) }),
                  let port = Int(line.split(separator: ":").last?.prefix { $0.isNumber } ?? "") else {
                throw TestFailure("no port in \(out)")
            }
            ports.append(port)
            banners.append(out)
        }
    }

    /// `kill -9` of instance `i`; returns once it is gone.
    func kill(_ i: Int) throws -> Int32 {
        servers[i].signal(SIGKILL)
        return try servers[i].wait(seconds: 20)
    }

    /// SIGTERM to every instance still running; their exit codes (nil for those already gone).
    func stop() throws -> [Int32?] {
        let running = servers.map { !$0.hasExited() }
        for (server, live) in zip(servers, running) where live { server.signal(SIGTERM) }
        return try zip(servers, running).map { server, live in live ? try server.wait(seconds: 30) : nil }
    }

    /// Kills whatever still runs and drops the database.
    func close() {
        for server in servers where !server.hasExited() {
            server.signal(SIGKILL)
            _ = try? server.wait(seconds: 10)
        }
        dir.cleanup()
    }
}

/// A company on `Instances`: the admin `boss` seeded through the command line, `people` made and
/// logged in over the JSON API, and one group holding them all.
struct InstancesCompany {
    static let bossPassword = "boss password of the instances"
    let tokens: [String: String]
    let chatID: Int64

    /// Seeds the database, starts `count` instances and makes the company through the first.
    static func start(_ instances: Instances, count: Int = 3, people: [String]) async throws -> InstancesCompany {
        try instances.seed(bossPassword: bossPassword)
        try instances.start(count)
        let port = instances.ports[0]
        let boss = try await apiLogin(port: port, "boss", bossPassword)
        var tokens = ["boss": boss.token]
        var ids: [Int64] = []
        for name in people {
            let person = try await apiCreateUser(port: port, name, displayName: name.capitalized, role: "employee", as: boss)
            tokens[name] = person.token
            ids.append(person.userID)
        }
        let group = try await httpCall(port: port, "POST", "/api/v1/chats", token: boss.token,
                                       json: ["name": "Everyone", "memberIds": .array(ids.map { .number(Double($0)) })])
        guard group.status == 201, let chatID = try group.json()["id"]?.numberValue else { throw TestFailure("creating the group: \(group.text)") }
        return InstancesCompany(tokens: tokens, chatID: Int64(chatID))
    }

    subscript(_ name: String) -> String { tokens[name]! }

    /// The id of every text message of the chat (not its system lines), read page by page through the
    /// instance on `port`.
    func storedMessageIDs(port: Int) async throws -> [Int64] {
        var ids: [Int64] = []
        var last: Int64 = 0
        while true {
            let page = try await httpCall(port: port, "GET", "/api/v1/chats/\(chatID)/messages?after=\(last)&limit=200", token: self["boss"])
            guard page.status == 200, let items = try page.json()["items"]?.arrayValue else { throw TestFailure("history: \(page.text)") }
            if items.isEmpty { return ids }
            last = items.last?["id"]?.numberValue.map { Int64($0) } ?? last
            ids += items.filter { $0["kind"] != "system" }.compactMap { $0["id"]?.numberValue.map { Int64($0) } }
        }
    }
}

/// One realtime stream read on a thread of its own: its frames in arrival order until the server
/// closes it or `stop()` is called.
final class StreamRecorder: Sendable {
    /// One event frame: its id, its type and, for `message.created` of a text message (not a
    /// system line), the message's id.
    struct Frame: Sendable, Equatable {
        let id: Int64
        let type: String
        let messageID: Int64?
    }

    let label: String
    private let client: WebSocketClient
    private let state = Mutex(State())

    private struct State {
        var frames: [Frame] = []
        var ready = false
        var ended = false
        var stopping = false
        var problems: [String] = []
    }

    private init(label: String, client: WebSocketClient) {
        self.label = label
        self.client = client
    }

    /// Opens `GET /api/v1/realtime?token=…[&since=…]` on `port` and returns once the server has
    /// answered a ping: the stream is subscribed, every later event reaches it.
    static func open(_ label: String, port: Int, token: String, since: Int64? = nil) async throws -> StreamRecorder {
        let client = try WebSocketClient(port: port, timeout: 2)
        let path = "/api/v1/realtime?token=\(token)" + (since.map { "&since=\($0)" } ?? "")
        let (status, body) = try client.upgrade(path)
        guard status == 101 else { throw TestFailure("\(label): the upgrade answered \(status) \(body)") }
        try client.send(text: #"{"type":"ping"}"#)
        let recorder = StreamRecorder(label: label, client: client)
        try startThread(name: "test-stream") { recorder.read() }
        guard await eventually(20, { recorder.isReady || recorder.hasEnded }), recorder.isReady else {
            recorder.stop()
            throw TestFailure("\(label): no pong: \(recorder.problems)")
        }
        return recorder
    }

    private func read() {
        while true {
            do {
                guard let text = try client.readText() else { break }
                record(text)
            } catch {
                // The socket's receive timeout only bounds each wait: a quiet stream is not an end.
                if "\(error)".contains("timed out") && !state.withLock({ $0.stopping }) { continue }
                if !state.withLock({ $0.stopping }) { state.withLock { $0.problems.append("read failed: \(error)") } }
                break
            }
        }
        // Marked ended under the lock before the descriptor closes: `stop()` shuts it down only
        // while it is still this stream's.
        state.withLock { $0.ended = true }
        client.close()
    }

    private func record(_ text: String) {
        guard let frame = try? JSONValue.parse(Array(text.utf8)), let type = frame["type"]?.stringValue else {
            state.withLock { $0.problems.append("not an event: \(text)") }
            return
        }
        state.withLock { s in
            if type == "pong" {
                s.ready = true
            } else if let id = frame["id"]?.numberValue {
                let message = frame["data"]?["message"]
                let text = type == "message.created" && message?["kind"] != "system" ? message?["id"]?.numberValue.map { Int64($0) } : nil
                s.frames.append(Frame(id: Int64(id), type: type, messageID: text))
            } else {
                s.problems.append("unexpected frame: \(text)")
            }
        }
    }

    /// Ends the stream from this side (a no-op once it has ended).
    func stop() {
        state.withLock { s in
            s.stopping = true
            if !s.ended { _ = shutdown(client.fd, Int32(SHUT_RDWR)) }
        }
    }

    var isReady: Bool { state.withLock { $0.ready } }
    var hasEnded: Bool { state.withLock { $0.ended } }
    var frames: [Frame] { state.withLock { $0.frames } }
    var problems: [String] { state.withLock { $0.problems } }
    /// The id of the last event received; nil before the first.
    var lastID: Int64? { state.withLock { $0.frames.last?.id } }
    /// The `message.created` frames of text messages, in arrival order. (A stream opened without
    /// `since` starts where its instance's hub is, so it may also get the group's system line,
    /// committed on another instance just before.)
    var messages: [Frame] { frames.filter { $0.messageID != nil } }
}

/// What is wrong with a stream's frames as one stream: an id not above the one before it (a
/// repeat, or an event out of order).
func orderProblems(_ frames: [StreamRecorder.Frame]) -> [String] {
    zip(frames, frames.dropFirst()).compactMap { before, after in
        after.id > before.id ? nil : "event \(after.id) (\(after.type)) after \(before.id)"
    }
}

/// Messages posted into one chat through one instance from a thread of its own until `limit`,
/// `stop()`, or a request that fails (the instance is gone); each 201's message id is kept.
final class MessageWriter: Sendable {
    let label: String
    let port: Int
    private let state = Mutex(State())

    private struct State {
        var acknowledged: [Int64] = []
        var failures: [String] = []
        var stopping = false
        var done = false
    }

    /// Starts posting as `token` on `pool` (one of its threads for as long as it writes).
    init(_ label: String, port: Int, token: String, chatID: Int64, limit: Int = .max, on pool: BlockingPool) {
        self.label = label
        self.port = port
        let queued = pool.execute { [self] in
            write(token: token, chatID: chatID, limit: limit)
            state.withLock { $0.done = true }
        }
        if !queued { state.withLock { $0.done = true; $0.failures.append("the writers' pool is shut down") } }
    }

    private func write(token: String, chatID: Int64, limit: Int) {
        let headers = [("Authorization", "Bearer \(token)"), ("Content-Type", "application/json")]
        for n in 0..<limit {
            if state.withLock({ $0.stopping }) { return }
            let body: JSONValue = ["body": .string("\(label) #\(n)"), "clientId": .string("\(label)-\(n)")]
            do {
                let answer = try httpRequest(port: port, method: "POST", path: "/api/v1/chats/\(chatID)/messages", headers: headers,
                                             body: body.serializedBytes(), timeout: 10)
                guard answer.status == 201, let id = try answer.json()["id"]?.numberValue else {
                    state.withLock { $0.failures.append("\(label) #\(n): \(answer.status) \(answer.text)") }
                    return
                }
                state.withLock { $0.acknowledged.append(Int64(id)) }
            } catch {
                state.withLock { $0.failures.append("\(label) #\(n): \(error)") }
                return
            }
        }
    }

    func stop() { state.withLock { $0.stopping = true } }
    var acknowledged: [Int64] { state.withLock { $0.acknowledged } }
    var failures: [String] { state.withLock { $0.failures } }
    var isDone: Bool { state.withLock { $0.done } }
}

/// A counter or gauge without labels from the `/metrics` of the server on `port`.
func metricValue(_ name: String, port: Int) throws -> Double? {
    let text = try httpRequest(port: port, path: "/metrics").text
    return text.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Double($0.split(separator: " ").last ?? "") }
}
