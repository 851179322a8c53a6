import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Benchmark-only module, enabled by `--bench-module`: one small durable insert per request,
/// so the group-committing write path can be measured over HTTP. Never enable in production.
public struct BenchModule: Module {
    public let id: ModuleID = "bench"

    /// Whether the module is part of the server at all (the application leaves it out otherwise).
    public static let enabled = Setting("bench-module", .bool, default: "false",
                                        "enable the benchmark-only write endpoint (never in production)")

    public init() {}

    /// Records its events in the system module's journal.
    public var dependencies: [ModuleID] { ["system"] }

    public var settings: [Setting] { [BenchModule.enabled] }

    public func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("bench.001_create_writes", sql: """
            CREATE TABLE bench_writes (
                id INTEGER PRIMARY KEY,
                payload TEXT NOT NULL,
                created_at TEXT NOT NULL
            );
            """)
        migrations.add("bench.002_created_ms", sql: """
            ALTER TABLE bench_writes ADD COLUMN created_ms INTEGER NOT NULL DEFAULT 0;
            UPDATE bench_writes SET created_ms = CAST(strftime('%s', created_at) AS INTEGER) * 1000;
            ALTER TABLE bench_writes DROP COLUMN created_at;
            ALTER TABLE bench_writes RENAME COLUMN created_ms TO created_at;
            """)
    }

    public func boot(_ context: ModuleContext) async throws -> any ModuleRuntime {
        BenchRuntime(repository: BenchRepository(store: context.store), journal: try context.require((any EventJournal).self))
    }
}

/// The benchmark module's SQL.
struct BenchRepository: Sendable {
    let store: Store

    func insert(_ payload: String) async throws -> Int64 {
        let now = Timestamp.now().milliseconds
        return try await store.write { db in
            try db.queryOne("INSERT INTO bench_writes (payload, created_at) VALUES (?, ?) RETURNING id", payload, now)?.int64("id") ?? 0
        }
    }

    func count() async throws -> Int64 {
        try await store.read { db in try db.queryOne("SELECT count(*) AS n FROM bench_writes")?.int64("n") ?? 0 }
    }
}

struct BenchRuntime: ModuleRuntime {
    let repository: BenchRepository
    let journal: (any EventJournal)?

    /// Most recipients of one benchmark event.
    static let maxRecipients = 1000

    func registerRoutes(_ routes: RouteGroup, root: RouteGroup) {
        let repository = self.repository
        routes.post("/bench/writes", maxBody: 4096,
                    doc: RouteDoc(summary: "Benchmark only: insert one row durably", tags: ["bench"],
                                  responses: [ResponseDoc(status: 201, description: "Stored; the id of the row",
                                                          schema: ["type": "object", "properties": ["id": ["type": "integer"]]])])) { request, _ in
            let payload = request.body.isEmpty ? "x" : String(decoding: request.body.prefix(256), as: UTF8.self)
            let id = try await repository.insert(payload)
            return Response(status: 201, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{\"id\":\(id)}".utf8))
        }
        if let journal {
            let store = repository.store
            // The realtime fan-out benchmark before messaging exists: one `bench.event` for fixed
            // recipients recorded in its own write, as a message would be, then the hub woken.
            routes.post("/bench/events", maxBody: 64 * 1024,
                        doc: RouteDoc(summary: "Benchmark only: record one realtime event for fixed recipients", tags: ["bench"],
                                      requestSchema: ["type": "object", "properties": ["users": ["type": "array", "items": ["type": "integer"]],
                                                                                       "data": ["type": "object"]]],
                                      responses: [ResponseDoc(status: 201, description: "Recorded; the event id",
                                                              schema: ["type": "object", "properties": ["id": ["type": "integer"]]]),
                                                  ResponseDoc(status: 422, description: "validation_failed",
                                                              schema: ["$ref": "#/components/schemas/Error"]),
                                                  ResponseDoc(status: 400, description: "invalid_json",
                                                              schema: ["$ref": "#/components/schemas/Error"])])) { request, _ in
                let body = try JSONBody(request)
                guard case let .array(items)? = body.fields["users"], items.count <= BenchRuntime.maxRecipients else {
                    throw APIError.validationFailed(["users": "must be an array of at most \(BenchRuntime.maxRecipients) user ids"])
                }
                let users = items.compactMap { $0.numberValue }.map { Int64($0) }
                let event = RealtimeEvent(type: "bench.event", audience: .users(users), data: body.fields["data"] ?? .object([]))
                let id = try await store.write { db in try journal.append(event, in: db) }
                return Response(status: 201, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{\"id\":\(id)}".utf8))
            }
        }
        routes.get("/bench/writes/count", doc: RouteDoc(summary: "Benchmark only: rows stored", tags: ["bench"])) { _, _ in
            .json(["count": .number(Double(try await repository.count()))] as JSONValue)
        }
    }
}
