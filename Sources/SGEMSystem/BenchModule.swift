import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// Benchmark-only module, enabled by `--bench-module`: one small durable insert per request,
/// so the group-committing write path can be measured over HTTP. Never enable in production.
public struct BenchModule: Module {
    public let id: ModuleID = "bench"

    public init() {}

    public func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("bench.001_create_writes", sql: """
            CREATE TABLE bench_writes (
                id INTEGER PRIMARY KEY,
                payload TEXT NOT NULL,
                created_at TEXT NOT NULL
            );
            """)
    }

    public func registerRoutes(_ routes: RouteGroup, root: RouteGroup, context: ModuleContext) {
        let store = context.store
        routes.post("/bench/writes", maxBody: 4096,
                    doc: RouteDoc(summary: "Benchmark only: insert one row durably", tags: ["bench"],
                                  responses: [ResponseDoc(status: 201, description: "Stored; the id of the row",
                                                          schema: ["type": "object", "properties": ["id": ["type": "integer"]]])])) { request, _ in
            let payload = request.body.isEmpty ? "x" : String(decoding: request.body.prefix(256), as: UTF8.self)
            let now = Timestamp.now().rfc3339()
            let id = try await store.write { db in
                try db.execute("INSERT INTO bench_writes (payload, created_at) VALUES (?, ?)", payload, now)
                return db.lastInsertRowID
            }
            return Response(status: 201, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{\"id\":\(id)}".utf8))
        }
        routes.get("/bench/writes/count", doc: RouteDoc(summary: "Benchmark only: rows stored", tags: ["bench"])) { _, _ in
            let count = try await store.read { db in try db.scalar("SELECT count(*) FROM bench_writes") }
            guard case let .integer(n) = count else { throw APIError.unavailable("count failed") }
            return .json(["count": .number(Double(n))] as JSONValue)
        }
    }
}
