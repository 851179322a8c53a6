#if canImport(Glibc)
import Glibc
#endif
import SGEMApp
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Synchronization

// What the realtime tests share: an in-process server with every module and one admin, logins,
// events appended straight to the journal, a `ChatAccess` the test sets by hand, and WebSocket
// clients of /api/v1/realtime.

let adminPassword = "correct horse battery"

func testSettings(_ dir: TempDir, _ extra: [String: String] = [:]) -> [String: String] {
    ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning"].merging(dir.storageSettings) { _, new in new }
        .merging(extra) { $1 }
}


/// Who belongs to which chat, as the test says: stands in for the messaging module.
final class FakeChatAccess: ChatAccess {
    private let members = Mutex<[Int64: Set<Int64>]>([:])
    /// Users whose lookup throws, as a broken store would.
    let failing = Mutex<Set<Int64>>([])

    struct LookupFailed: Error {}

    func chatIDs(of userID: Int64) async throws -> Set<Int64> {
        if failing.withLock({ $0.contains(userID) }) { throw LookupFailed() }
        return members.withLock { m in Set(m.filter { $0.value.contains(userID) }.keys) }
    }

    func set(_ chat: Int64, members ids: Set<Int64>) { members.withLock { $0[chat] = ids } }
}

/// A full server in-process with the admin `boss`; the fake `ChatAccess` stands in for messaging.
final class RealtimeServer: Sendable {
    let dir: TempDir
    let running: RunningServer
    let chats = FakeChatAccess()
    var port: Int { running.port }

    private init(dir: TempDir, running: RunningServer, fakeChats: Bool) {
        self.dir = dir
        self.running = running
        if fakeChats { running.context.services.register((any ChatAccess).self, chats as any ChatAccess) }
    }

    static func start(_ extra: [String: String] = [:], messaging: Bool = false) async throws -> RealtimeServer {
        let dir = TempDir()
        let (code, io) = await sgem(dir, ["migrate"])
        guard code == 0 else { throw TestFailure("migrate failed: \(io.errors)") }
        let (seeded, seedIO) = await sgem(dir, ["admin", "create-user", "--username", "boss", "--email", "boss@example.com",
                                                "--role", "admin", "--password-stdin"], input: [adminPassword])
        guard seeded == 0 else { throw TestFailure("seeding the admin failed: \(seedIO.errors)") }
        return try await start(on: dir, extra, messaging: messaging)
    }

    /// Runs `body` with a fresh server and stops it before returning, whatever `body` does.
    static func with(_ extra: [String: String] = [:], messaging: Bool = false,
                     _ body: (RealtimeServer) async throws -> Void) async throws {
        let s = try await start(extra, messaging: messaging)
        do {
            try await body(s)
        } catch {
            await s.stop()
            throw error
        }
        await s.stop()
    }

    /// A server on the existing data directory `dir` (a restart).
    /// With `messaging` the real module serves chats; without, the fake `ChatAccess` stands in
    /// (and translation, which reads messaging's messages, stays out too).
    static func start(on dir: TempDir, _ extra: [String: String] = [:], messaging: Bool = false) async throws -> RealtimeServer {
        let running = try await RunningServer.start(configuration: Configuration(overrides: testSettings(dir, extra)),
                                                    excluding: messaging ? [] : ["messaging", "translation", "push"])
        return RealtimeServer(dir: dir, running: running, fakeChats: !messaging)
    }

    /// Stops the server; `keeping` leaves the data directory for a restart.
    func stop(keeping: Bool = false) async {
        await running.stop()
        if !keeping { dir.cleanup() }
    }

    func journal() throws -> any EventJournal {
        guard let journal = running.context.services.resolve((any EventJournal).self) else { throw TestFailure("no event journal") }
        return journal
    }

    /// Records `events` in one write, as a module would with its change, then signals the commit.
    @discardableResult
    func append(_ events: [RealtimeEvent]) async throws -> [Int64] {
        let journal = try self.journal()
        let ids = try await running.store.write { db in try events.map { try journal.append($0, in: db) } }
        journal.didCommit()
        return ids
    }

    /// One event with `data: {"n": n}`.
    @discardableResult
    func append(_ type: String, to audience: EventAudience, n: Int = 0, _ extra: [(String, JSONValue)] = []) async throws -> Int64 {
        try await append([RealtimeEvent(type: type, audience: audience, data: .object([("n", .number(Double(n)))] + extra))])[0]
    }

    func call(_ method: String, _ path: String, token: String? = nil, json: JSONValue? = nil,
              headers: [(String, String)] = []) async throws -> WireResponse {
        try await running.client.call(method, path, token: token, json: json, headers: headers)
    }

    func login(_ login: String = "boss", _ password: String = adminPassword) async throws -> LoggedIn {
        try await apiLogin(running.client, login, password)
    }

    func createUser(_ username: String, role: String = "employee", as admin: LoggedIn) async throws -> LoggedIn {
        try await apiCreateUser(running.client, username, displayName: username, role: role, as: admin)
    }

    /// A stream client of `who` authenticated with `?token=`, upgraded; `since` as given. Unless
    /// `waitingUntilReady` is false, it returns once the replay is over (see `ready`).
    func stream(_ who: LoggedIn, since: Int64? = nil, receiveBuffer: Int32? = nil,
                waitingUntilReady: Bool = true) async throws -> WebSocketClient {
        let client = try WebSocketClient(port: port, receiveBuffer: receiveBuffer)
        let query = "?token=\(who.token)" + (since.map { "&since=\($0)" } ?? "")
        let (status, body) = try await webSocketClientThreads.run { try client.upgrade("/api/v1/realtime" + query) }
        guard status == 101 else { throw TestFailure("upgrade answered \(status): \(body)") }
        if waitingUntilReady { try await client.ready() }
        return client
    }

    /// Posts `body` to chat `chatID` as `who`; returns the message's id.
    func post(_ body: String, in chatID: Int64, as who: LoggedIn) async throws -> Int64 {
        let r = try await call("POST", "/api/v1/chats/\(chatID)/messages", token: who.token, json: ["body": .string(body)])
        guard r.status == 201, let id = try r.json()["id"]?.numberValue else { throw TestFailure("posting failed: \(r.status) \(r.text)") }
        return Int64(id)
    }

    /// A metric's value as `/metrics` would show it (no labels).
    func metric(_ name: String) -> Double {
        let text = running.context.metrics.render()
        for line in text.split(separator: "\n") where line.hasPrefix(name + " ") {
            return Double(line.split(separator: " ")[1]) ?? -1
        }
        return 0
    }
}



extension WebSocketClient {
    /// Waits until the server is past subscription and replay: it answers a `{"type":"ping"}`
    /// only then. Events before the pong stay to be read.
    func ready() async throws {
        try send(text: #"{"type":"ping"}"#)
        try await readAhead { $0 == #"{"type":"pong"}"# }
    }

    /// The next event frame; fails when the stream ends first.
    func event() async throws -> JSONValue {
        guard let frame = try await next() else { throw TestFailure("the stream ended (close code \(closeCode.map(String.init) ?? "none"))") }
        return frame
    }

    /// Every frame up to and including the `notice.created` titled `title`.
    func frames(untilTitle title: String) async throws -> [JSONValue] {
        var frames: [JSONValue] = []
        repeat { frames.append(try await event()) } while frames.last?["data"]?["notice"]?["title"]?.stringValue != title
        return frames
    }

    /// The frames until the server closes the stream, and its close code.
    func framesUntilClose() async throws -> (frames: [JSONValue], code: UInt16?) {
        var frames: [JSONValue] = []
        while let frame = try await next() { frames.append(frame) }
        return (frames, closeCode)
    }

    /// The `n` of events until (and including) the first `marker` event: what arrived before it.
    func numbers(until marker: String) async throws -> [Int] {
        var seen: [Int] = []
        while true {
            let e = try await event()
            if e["type"]?.stringValue == marker { return seen }
            seen.append(Int(e["data"]?["n"]?.numberValue ?? -1))
        }
    }

    /// The `n` of the next `count` events, read like a slow link would: a pause after every
    /// 64 KB, about 4 MB/s at most (with a small receive buffer the server's queue is what waits).
    func slowlyRead(_ count: Int) async throws -> [Int] {
        try await webSocketClientThreads.run {
            var numbers: [Int] = []
            var bytes = 0
            while numbers.count < count {
                guard let text = try self.readText() else {
                    throw TestFailure("the stream ended after \(numbers.count) of \(count) (close code \(self.closeCode.map(String.init) ?? "none"))")
                }
                let event = try JSONValue.parse(Array(text.utf8))
                numbers.append(Int(event["data"]?["n"]?.numberValue ?? -1))
                bytes += text.utf8.count
                if bytes >= 64 * 1024 {
                    bytes = 0
                    usleep(16_000)
                }
            }
            return numbers
        }
    }
}
