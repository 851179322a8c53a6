import SGEMApp
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport

// An in-process server (every module) on a fresh data directory with the admin `boss`, and
// helpers that speak the messaging API. Seeding goes through the real `admin create-user` verb.

let bossPassword = "correct horse battery"

/// A running server with its logged-in people by username.
final class ChatServer: Sendable {
    let dir: TempDir
    let running: RunningServer
    let people: [String: Person]

    private init(dir: TempDir, running: RunningServer, people: [String: Person]) {
        self.dir = dir
        self.running = running
        self.people = people
    }

    /// `boss` (an admin) and the employees `names`, all logged in.
    static func start(_ names: [String] = ["ana", "bob", "cleo"]) async throws -> ChatServer {
        let dir = TempDir()
        let flags = ["--data-dir", dir.path, "--password-hash-log-n", "10", "--log-level", "error"] + dir.storageFlags
        let migrate = MemoryIO(input: [])
        guard await Application.main(["migrate"] + flags, environment: [:], io: migrate, configureLogging: false) == 0 else {
            throw TestFailure("migrate failed: \(migrate.errors)")
        }
        let seed = MemoryIO(input: [bossPassword])
        let seeded = await Application.main(["admin", "create-user", "--username", "boss", "--email", "boss@example.com", "--name", "Boss",
                                             "--role", "admin", "--password-stdin"] + flags, environment: [:], io: seed,
                                            configureLogging: false)
        guard seeded == 0 else { throw TestFailure("seeding boss failed: \(seed.errors)") }
        let settings = ["port": "0", "host": "127.0.0.1", "data-dir": dir.path, "password-hash-log-n": "10", "log-level": "warning"].merging(dir.storageSettings) { _, new in new }
        let running = try await RunningServer.start(configuration: Configuration(overrides: settings))
        var people = ["boss": try await Person.login(running.port, "boss", bossPassword)]
        for name in names {
            let made = try await httpCall(port: running.port, "POST", "/api/v1/admin/users", token: people["boss"]!.token, json: [
                "username": .string(name), "email": .string("\(name)@example.com"), "displayName": .string(name.capitalized),
                "role": "employee", "password": .string("password-of-\(name)"),
            ])
            guard made.status == 201 else { throw TestFailure("creating \(name) answered \(made.status): \(made.text)") }
            people[name] = try await Person.login(running.port, name, "password-of-\(name)")
        }
        return ChatServer(dir: dir, running: running, people: people)
    }

    subscript(_ name: String) -> Person { people[name]! }
    var port: Int { running.port }
    var store: Store { running.store }

    func journal() throws -> any EventJournal {
        guard let journal = running.context.services.resolve((any EventJournal).self) else { throw TestFailure("no event journal") }
        return journal
    }

    /// The events recorded after `start`, oldest first.
    func events(after start: Int64) async throws -> [RecordedEvent] {
        try await journal().events(after: start, limit: 1000)
    }

    func stop() async {
        await running.stop()
        dir.cleanup()
    }

    func call(_ method: String, _ path: String, as person: Person, json: JSONValue? = nil) async throws -> WireResponse {
        try await running.client.call(method, "/api/v1" + path, token: person.token, json: json)
    }

    /// A request that must answer `status`; its JSON (null for an empty body).
    @discardableResult
    func expect(_ status: Int, _ method: String, _ path: String, as person: Person, json: JSONValue? = nil) async throws -> JSONValue {
        let r = try await call(method, path, as: person, json: json)
        guard r.status == status else { throw TestFailure("\(method) \(path) answered \(r.status), not \(status): \(r.text)") }
        return r.body.isEmpty ? .null : try r.json()
    }

    /// Creates a group as `creator` with `members`; its id.
    func group(_ name: String, by creator: Person, members: [Person] = [], isPublic: Bool = false) async throws -> Int64 {
        let chat = try await expect(201, "POST", "/chats", as: creator, json: [
            "name": .string(name), "public": .bool(isPublic), "memberIds": .array(members.map { .number(Double($0.id)) }),
        ])
        return chat.id
    }

    /// Posts `body` to chat `chat` as `sender`; the message.
    func send(_ body: String, to chat: Int64, as sender: Person) async throws -> JSONValue {
        try await expect(201, "POST", "/chats/\(chat)/messages", as: sender, json: ["body": .string(body)])
    }

    /// The chat as `person` sees it in their list; nil when it is not in the list.
    func listed(_ chat: Int64, for person: Person) async throws -> JSONValue? {
        try await expect(200, "GET", "/chats", as: person)["items"]?.arrayValue?.first { $0.id == chat }
    }
}

/// A logged-in person.
struct Person: Sendable {
    let id: Int64
    let token: String

    static func login(_ port: Int, _ login: String, _ password: String) async throws -> Person {
        let session = try await apiLogin(port: port, login, password)
        return Person(id: session.userID, token: session.token)
    }

    var json: JSONValue { .number(Double(id)) }
}

extension JSONValue {
    /// The `id` field as an id; -1 when missing.
    var id: Int64 { Int64(self["id"]?.numberValue ?? -1) }
    var ids: [Int64] { self["items"]?.arrayValue?.map(\.id) ?? [] }
    func int(_ key: String) -> Int? { self[key]?.numberValue.map { Int($0) } }
    /// The ids of a page's text messages, its system lines left out.
    var textIDs: [Int64] { (self["items"]?.arrayValue ?? []).filter { $0["kind"] != "system" }.map(\.id) }
    /// The events of a page's system lines, in order.
    var systemEvents: [String] { (self["items"]?.arrayValue ?? []).compactMap { $0["system"]?["event"]?.stringValue } }

    /// The same value with every object's keys sorted: parsed JSON does not keep the order it
    /// was written in, so equality of served JSON compares this.
    var sorted: JSONValue {
        switch self {
        case let .object(pairs): .object(pairs.map { ($0.0, $0.1.sorted) }.sorted { $0.0 < $1.0 })
        case let .array(items): .array(items.map(\.sorted))
        default: self
        }
    }
}

/// Whether two JSON values are equal, ignoring the order of object keys.
func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool { a?.sorted == b?.sorted }
