#if canImport(Glibc)
import Glibc
#endif
import CLinux
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport
import Synchronization

/// The `system` module: health, readiness, Prometheus metrics, the OpenAPI document, and the
/// `status` admin verb. It is the smallest module that uses every part of the protocol.
public struct SystemModule: Module {
    public let id: ModuleID = "system"
    let version: String
    let startedAt = MonotonicClock.nanoseconds()

    public init(version: String) { self.version = version }

    public func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("system.001_instance", sql: """
            CREATE TABLE system_instance (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                instance_id TEXT NOT NULL,
                created_at TEXT NOT NULL
            );
            INSERT INTO system_instance (id, instance_id, created_at)
                VALUES (1, lower(hex(randomblob(8))), strftime('%Y-%m-%dT%H:%M:%SZ', 'now'));
            """)
    }

    public func boot(_ context: ModuleContext) async throws {
        let started = startedAt
        context.metrics.gauge("sgem_process_resident_memory_bytes", help: "Resident set size of the process.")
            .sample { Double(sgem_resident_bytes()) }
        context.metrics.gauge("sgem_process_open_fds", help: "Open file descriptors of the process.")
            .sample { Double(sgem_open_fd_count()) }
        context.metrics.gauge("sgem_process_uptime_seconds", help: "Seconds since the server started.")
            .sample { Double(MonotonicClock.nanoseconds() - started) / 1e9 }
        let store = context.store
        context.metrics.gauge("sgem_store_database_bytes", help: "Size of the database file, WAL excluded.")
            .sample { Double(fileSize(store.path)) }
    }

    public func registerRoutes(_ routes: RouteGroup, root: RouteGroup, context: ModuleContext) {
        let health = Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                              body: Array(#"{"status":"ok"}"#.utf8))
        root.get("/healthz", doc: RouteDoc(summary: "Liveness: the process answers", tags: ["system"],
                                           responses: [ResponseDoc(status: 200, description: "Alive", schema: statusSchema)])) { _, _ in
            health
        }
        let store = context.store
        root.get("/readyz", doc: RouteDoc(summary: "Readiness: the store answers queries", tags: ["system"],
                                          responses: [ResponseDoc(status: 200, description: "Ready", schema: statusSchema),
                                                      ResponseDoc(status: 503, description: "The store does not answer")])) { _, _ in
            guard await store.ping() else { throw APIError.unavailable("the store does not answer") }
            return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                            body: Array(#"{"status":"ready"}"#.utf8))
        }
        let metrics = context.metrics
        root.get("/metrics", doc: RouteDoc(summary: "Prometheus metrics (text format 0.0.4)", tags: ["system"],
                                           responses: [ResponseDoc(status: 200, description: "Metrics", schema: ["type": "string"], contentType: "text/plain")])) { _, _ in
            .text(metrics.render(), contentType: "text/plain; version=0.0.4; charset=utf-8")
        }
        let router = context.router
        let version = self.version
        let cached = Mutex<[UInt8]?>(nil)
        routes.get("/openapi.json", doc: RouteDoc(summary: "This API's OpenAPI 3 document", tags: ["system"],
                                                  responses: [ResponseDoc(status: 200, description: "The document", schema: ["type": "object"])])) { _, _ in
            // Routes are fixed once serving starts, so the document is built once.
            let body = cached.withLock { cache -> [UInt8] in
                if let cache { return cache }
                let doc = OpenAPIDocument.build(routes: router.routes, title: "sgem-server API", version: version,
                                                description: "Employee directory, holidays, notices, chat and translation for one company.")
                let bytes = Array(doc.serialized().utf8)
                cache = bytes
                return bytes
            }
            return Response(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
        }
    }

    public func registerCommands(_ commands: inout CommandRegistry, context: CommandModuleContext) {
        let version = self.version
        commands.register(Command("status", summary: "show the database, its migrations and the server's version",
                                  options: [.flag("json", "print JSON")]) { args, ctx in
            let store = try await context.openStore()
            let applied = try await store.appliedMigrations()
            let instance = try await store.read { db in try db.queryOne("SELECT instance_id, created_at FROM system_instance WHERE id = 1") }
            let size = fileSize(store.path)
            if args.has("json") {
                let doc: JSONValue = [
                    "version": .string(version),
                    "database": .string(store.path),
                    "databaseBytes": .number(Double(size)),
                    "instanceId": instance?.string("instance_id").map(JSONValue.string) ?? .null,
                    "createdAt": instance?.string("created_at").map(JSONValue.string) ?? .null,
                    "migrations": .array(applied.map(JSONValue.string)),
                ]
                ctx.io.print(doc.serialized())
            } else {
                ctx.io.print("version      \(version)")
                ctx.io.print("database     \(store.path) (\(size) bytes)")
                ctx.io.print("instance     \(instance?.string("instance_id") ?? "not initialised")")
                ctx.io.print("created      \(instance?.string("created_at") ?? "-")")
                ctx.io.print("migrations   \(applied.count) applied")
                for id in applied { ctx.io.print("  \(id)") }
            }
        })
    }
}

let statusSchema: JSONValue = ["type": "object", "properties": ["status": ["type": "string"]]]

/// Size of a file in bytes, 0 when it cannot be read.
func fileSize(_ path: String) -> Int {
    var st = stat()
    return stat(path, &st) == 0 ? Int(st.st_size) : 0
}
