#if canImport(Glibc)
import Glibc
#endif
import Synchronization
import SGEMStore
import SGEMTestSupport
import Testing
import SGEMSupport

/// Starts `sgem-server serve` on port 0 in a fresh data directory and returns it with its port.
func startServer(_ dir: TempDir, extra: [String] = []) throws -> (Subprocess, Int) {
    let p = try Subprocess(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dir.path, "--log-level", "warning"] + extra)
    let out = try p.waitForOutput("listening on http://127.0.0.1:")
    let marker = "listening on http://127.0.0.1:"
    guard let line = out.split(separator: "\n").first(where: { $0.contains(marker) }),
          let port = Int(line.split(separator: ":").last?.prefix { $0.isNumber } ?? "") else {
        throw TestFailure("no port in \(out)")
    }
    return (p, port)
}

/// Sends `batches` × `perBatch` pipelined `GET /healthz` on one keep-alive connection, reading
/// each batch's answers before the next; returns how many 200s came back.
func pipelinedHealthChecks(port: Int, batches: Int, perBatch: Int) throws -> Int {
    let fd = try connectLoopback(port: port, timeout: 5)
    defer { close(fd) }
    let batch = Array(String(repeating: "GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n", count: perBatch).utf8)
    let marker = Array("HTTP/1.1 200 ".utf8)
    var answered = 0
    var chunk = [UInt8](repeating: 0, count: 65536)
    for _ in 0..<batches {
        guard batch.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == batch.count else { throw TestFailure("send failed") }
        var seen = 0
        var tail: [UInt8] = []
        while seen < perBatch {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw TestFailure("the server stopped answering after \(answered + seen) requests") }
            let data = tail + chunk[0..<n]
            var i = 0
            while i + marker.count <= data.count {
                if data[i] == marker[0] && Array(data[i..<i + marker.count]) == marker { seen += 1; i += marker.count } else { i += 1 }
            }
            tail = Array(data.suffix(marker.count - 1))
        }
        answered += seen
    }
    return answered
}

@Suite(.serialized) struct ServeTests {
    @Test func servesSystemEndpointsAndStopsGracefully() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (server, port) = try startServer(dir)
        // A first run tells the operator how to create the first admin, for this data directory.
        let banner = try server.waitForOutput("--random-password --data-dir \(dir.path)\n")
        #expect(banner.contains("create the first admin: \(Subprocess.binary) admin create-user --username admin"))

        let health = try httpRequest(port: port, path: "/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"#)
        #expect(health.header("Content-Type") == "application/json")
        #expect(health.header("X-Request-Id")?.isEmpty == false)
        #expect(try httpRequest(port: port, path: "/readyz").status == 200)

        let missing = try httpRequest(port: port, path: "/api/v1/nothing-here")
        #expect(missing.status == 404)
        let error = try JSONValue.parse(missing.body)
        #expect(error["error"]?["code"] == "not_found")
        let wrongMethod = try httpRequest(port: port, method: "DELETE", path: "/healthz")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow")?.contains("GET") == true)

        let metrics = try httpRequest(port: port, path: "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        for name in ["sgem_http_requests_total{", "sgem_http_request_duration_seconds_bucket{", "sgem_http_open_connections",
                     "sgem_store_write_queue_depth", "sgem_store_commit_batch_size", "sgem_process_resident_memory_bytes"] {
            #expect(metrics.text.contains(name), "metrics lack \(name)")
        }
        #expect(metrics.text.contains(#"route="/healthz""#))

        let openapi = try httpRequest(port: port, path: "/api/v1/openapi.json")
        #expect(openapi.status == 200)
        let doc = try JSONValue.parse(openapi.body)
        #expect(doc["openapi"] == "3.0.3")
        for path in ["/healthz", "/readyz", "/metrics", "/api/v1/openapi.json", "/", "/assets/{path}", "/api/v1/console/pages"] {
            #expect(doc["paths"]?[path] != nil, "openapi lacks \(path)")
        }
        #expect(doc["paths"]?["/api/v1/bench/writes"] == nil, "the bench module is off by default")

        server.signal(SIGTERM)
        #expect(try server.wait(seconds: 20) == 0)
        #expect(!server.stderr.contains("level=error"), "\(server.stderr)")
    }

    @Test func consoleIsEmbeddedWithCachingCompressionAndSecurityHeaders() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (server, port) = try startServer(dir)
        defer { server.signal(SIGKILL) }

        let page = try httpRequest(port: port, path: "/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.text.contains("<script type=\"module\" src=\"/assets/app.js\"></script>"))
        let csp = try #require(page.header("Content-Security-Policy"))
        #expect(csp.contains("default-src 'self'"))
        #expect(csp.contains("frame-ancestors 'none'"))
        #expect(!csp.contains("unsafe-inline"))
        #expect(page.header("X-Content-Type-Options") == "nosniff")
        #expect(page.header("Referrer-Policy") != nil)

        let js = try httpRequest(port: port, path: "/assets/app.js")
        #expect(js.status == 200)
        #expect(js.header("Content-Type") == "text/javascript; charset=utf-8")
        let etag = try #require(js.header("ETag"))
        #expect(js.header("Cache-Control") != nil)
        let again = try httpRequest(port: port, path: "/assets/app.js", headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        let gz = try httpRequest(port: port, path: "/assets/app.js", headers: [("Accept-Encoding", "br, gzip")])
        #expect(gz.header("Content-Encoding") == "gzip")
        #expect(gz.body.count < js.body.count)
        #expect(Array(gz.body.prefix(2)) == [0x1f, 0x8b])
        let refused = try httpRequest(port: port, path: "/assets/app.js", headers: [("Accept-Encoding", "gzip;q=0")])
        #expect(refused.header("Content-Encoding") == nil)

        #expect(try httpRequest(port: port, path: "/assets/nope.js").status == 404)
        #expect(try httpRequest(port: port, path: "/assets/../Package.swift").status == 404)
        let pages = try httpRequest(port: port, path: "/api/v1/console/pages")
        #expect(pages.status == 200)
        #expect(try JSONValue.parse(pages.body)["items"]?.arrayValue != nil)
    }

    @Test func aStderrPipeNobodyReadsNeverStopsTheServer() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // Log every request; after start-up nobody reads the server's stderr, so the 64 KiB pipe
        // fills after a few hundred access lines (the old synchronous logger stopped there).
        let (server, port) = try startServer(dir, extra: ["--log-level", "info"])
        // 8,000 requests log far more than the pipe and the server's 1 MiB log buffer hold.
        let answered = try pipelinedHealthChecks(port: port, batches: 80, perBatch: 100)
        #expect(answered == 8000)
        let metrics = try httpRequest(port: port, path: "/metrics")
        let dropped = String(decoding: metrics.body, as: UTF8.self).split(separator: "\n")
            .first { $0.hasPrefix("sgem_log_lines_dropped_total ") }.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
        #expect(dropped > 0, "lines the stalled pipe could not take are dropped and counted")
        // Once stderr is read again, the count of dropped lines is announced.
        _ = server.stderr
        _ = try httpRequest(port: port, path: "/healthz")
        let deadline = now() + 10
        while !server.stderr.contains("log lines dropped") && now() < deadline {
            _ = try httpRequest(port: port, path: "/healthz")
        }
        #expect(server.stderr.contains("log lines dropped"))
        server.signal(SIGTERM)
        #expect(try server.wait() == 0)
    }

    @Test func oneServerPerDataDirectoryAndRestoreRefusedWhileServing() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let (server, _) = try startServer(dir)
        let second = try runBinary(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dir.path])
        #expect(second.code == 1)
        #expect(second.err.contains("another server is already running"))

        let backup = dir.path + "-backup.db"
        defer { unlink(backup) }
        #expect(try runBinary(["backup", "--to", backup, "--data-dir", dir.path]).code == 0, "backup works while serving")
        let restore = try runBinary(["restore", "--from", backup, "--data-dir", dir.path])
        #expect(restore.code == 1)
        #expect(restore.err.contains("refused: a server is running"))
        #expect(try runBinary(["admin", "status", "--data-dir", dir.path]).code == 0, "admin verbs work while serving")

        server.signal(SIGINT)
        #expect(try server.wait(seconds: 20) == 0)
        #expect(try runBinary(["restore", "--from", backup, "--data-dir", dir.path]).code == 0)
    }

    @Test func portInUseIsOneClearLine() throws {
        let dir = TempDir(), other = TempDir()
        defer { dir.cleanup(); other.cleanup() }
        let (server, port) = try startServer(dir)
        defer { server.signal(SIGKILL) }
        let r = try runBinary(["serve", "--host", "127.0.0.1", "--port", String(port), "--data-dir", other.path, "--log-level", "warning"])
        #expect(r.code == 1)
        #expect(r.err.hasPrefix("sgem-server: cannot listen on 127.0.0.1:\(port)"))
        #expect(r.err.split(separator: "\n").count == 1)
    }

    @Test func badOutboundAllowListIsOneClearLine() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let r = try runBinary(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dir.path, "--log-level", "warning",
                               "--outbound-allow", "127.0.0.1:5000, 127.1"])
        #expect(r.code != 0)
        #expect(r.err.contains("--outbound-allow entry '127.1' is not a host, an address or a CIDR block with an optional :port"), "\(r.err)")
        #expect(r.err.split(separator: "\n").count == 1)
    }
}

@Suite(.serialized) struct TLSServeTests {
    @Test func servesHTTPSWithTheGivenCertificate() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let cert = dir.path + "/cert.pem", key = dir.path + "/key.pem"
        #expect(try runShell("openssl req -x509 -newkey rsa:2048 -nodes -keyout '\(key)' -out '\(cert)' -days 1 -subj /CN=127.0.0.1 2>/dev/null") == 0)
        let p = try Subprocess(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dir.path + "/data",
                                "--log-level", "warning", "--tls-cert", cert, "--tls-key", key])
        let out = try p.waitForOutput("listening on https://127.0.0.1:")
        let line = try #require(out.split(separator: "\n").first { $0.contains("listening on https://") })
        let port = try #require(Int(line.split(separator: ":").last?.prefix { $0.isNumber } ?? ""))
        let body = dir.path + "/body.txt"
        // curl verifies the chain against our own certificate and refuses anything below TLS 1.2.
        #expect(try runShell("curl -sS --max-time 10 --cacert '\(cert)' --tlsv1.2 https://127.0.0.1:\(port)/healthz > '\(body)'") == 0)
        #expect(readAll(body) == #"{"status":"ok"}"#)
        #expect(try runShell("curl -sS --max-time 10 --cacert '\(cert)' --tls-max 1.1 https://127.0.0.1:\(port)/healthz > /dev/null 2>&1") != 0,
                "TLS 1.1 must be refused")
        p.signal(SIGTERM)
        #expect(try p.wait(seconds: 20) == 0)
    }

    @Test func unreadableCertificateIsOneClearLine() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let r = try runBinary(["serve", "--host", "127.0.0.1", "--port", "0", "--data-dir", dir.path, "--log-level", "warning",
                               "--tls-cert", dir.path + "/missing.pem", "--tls-key", dir.path + "/missing-key.pem"])
        #expect(r.code == 1)
        #expect(r.err.hasPrefix("sgem-server: cannot listen on 127.0.0.1:0"), "\(r.err)")
        #expect(r.err.split(separator: "\n").count == 1)
    }
}

@Suite(.serialized) struct DescriptorExhaustionTests {
    /// Out of file descriptors, the server neither crashes nor spins on its listener, and serves
    /// again once descriptors free up.
    @Test func outOfDescriptorsPausesAcceptsWithoutSpinning() throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        // A hard limit of 40 descriptors: the server cannot raise it, and runs out after ~20 clients.
        let p = try Subprocess(["-c", "ulimit -n 40 && exec '\(Subprocess.binary)' serve --host 127.0.0.1 --port 0 --data-dir '\(dir.path)' --log-level warning"],
                               executable: "/bin/sh")
        let out = try p.waitForOutput("listening on http://127.0.0.1:")
        let line = try #require(out.split(separator: "\n").first { $0.contains("listening on") })
        let port = try #require(Int(line.split(separator: ":").last?.prefix { $0.isNumber } ?? ""))
        #expect(try httpRequest(port: port, path: "/healthz").status == 200)

        var clients: [Int32] = []
        defer { for fd in clients { close(fd) } }
        for _ in 0..<60 { clients.append(try connectIdle(port: port)) }
        // Wait until the server reports running out, then measure its CPU over one second.
        let deadline = now() + 10
        while !p.stderr.contains("pausing accepts") && now() < deadline { usleep(20_000) }
        #expect(p.stderr.contains("pausing accepts"), "\(p.stderr)")
        let before = try cpuTicks(p.pid)
        usleep(1_000_000)
        let used = try cpuTicks(p.pid) - before
        #expect(used < 50, "server used \(used) of 100 ticks while out of descriptors")

        for fd in clients { close(fd) }
        clients = []
        var recovered = false
        let until = now() + 15
        while !recovered && now() < until {
            recovered = (try? httpRequest(port: port, path: "/healthz", timeout: 2))?.status == 200
        }
        #expect(recovered, "the server serves again once descriptors are free: \(p.stderr)")
        #expect(!p.hasExited(), "\(p.stderr)")
        p.signal(SIGTERM)
        #expect(try p.wait(seconds: 20) == 0)
    }
}

/// A TCP connection that sends nothing.
func connectIdle(port: Int) throws -> Int32 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_port = in_port_t(UInt16(port).bigEndian)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    let ok = withUnsafePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
    guard ok == 0 else { close(fd); throw TestFailure("connect failed: errno \(errno)") }
    return fd
}

/// User plus system CPU time of a process, in clock ticks (100 per second), from /proc.
func cpuTicks(_ pid: pid_t) throws -> Int {
    guard let stat = readAll("/proc/\(pid)/stat"), let close = stat.lastIndex(of: ")") else { throw TestFailure("no /proc stat") }
    let fields = stat[stat.index(after: close)...].split(separator: " ")
    // After the command name: state is field 3, utime 14 and stime 15 (1-based, whole line).
    guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { throw TestFailure("bad /proc stat") }
    return user + system
}

/// Collects acknowledged ids from concurrent writers.
final class AckLog: Sendable {
    private let ids = Mutex<[Int]>([])
    private let stopped = Atomic<Bool>(false)
    func add(_ id: Int) { ids.withLock { $0.append(id) } }
    var all: [Int] { ids.withLock { $0 } }
    var isStopped: Bool { stopped.load(ordering: .relaxed) }
    func stop() { stopped.store(true, ordering: .relaxed) }
}

@Suite(.serialized) struct CrashTests {
    /// SIGKILL in the middle of concurrent writes: the database stays intact and holds every
    /// write the server acknowledged.
    @Test(arguments: TestBackend.available)
    func killedMidWritesLosesNothingAcknowledged(_ backend: TestBackend) async throws {
        let dir = TempDir()
        defer { dir.cleanup() }
        let storage = backend == .postgresql ? ["--database-url", try dir.postgresURL()] : []
        let (server, port) = try startServer(dir, extra: ["--bench-module"] + storage)
        let acks = AckLog()
        // Writers are blocking clients, so they run on their own threads, not on Swift's
        // cooperative pool (two threads here), which the waiting below needs.
        let writers = 16
        let pool = BlockingPool(name: "writers", threads: writers)
        defer { pool.shutdown() }
        let work = Task {
            await withTaskGroup(of: Void.self) { group in
                for w in 0..<writers {
                    group.addTask {
                        _ = try? await pool.run {
                            while !acks.isStopped {
                                guard let r = try? httpRequest(port: port, method: "POST", path: "/api/v1/bench/writes",
                                                               body: Array("writer \(w)".utf8), timeout: 5) else { return }
                                guard r.status == 201, let id = (try? JSONValue.parse(r.body))?["id"]?.numberValue else { continue }
                                acks.add(Int(id))
                            }
                        }
                    }
                }
            }
        }
        // Kill once a good number of writes were acknowledged, while the writers keep going.
        let deadline = now() + 60
        while acks.all.count < 400 && now() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        server.signal(SIGKILL)
        acks.stop()
        await work.value
        #expect(try server.wait() == 128 + SIGKILL)
        let acknowledged = acks.all
        #expect(acknowledged.count >= 400)

        let check = try runBinary(["check", "--data-dir", dir.path] + storage)
        #expect(check.code == 0, "\(check.out) \(check.err)")
        #expect(check.out.contains("integrity ok"))

        // Every acknowledged id is in the table (sqlite3 CLI reads the recovered WAL; on
        // PostgreSQL a fresh connection reads what committed).
        let stored: Set<Int>
        if backend == .postgresql {
            let connection = try PostgresConnection(url: try dir.postgresURL())
            stored = Set(try connection.query("SELECT id FROM bench_writes").compactMap { $0.int("id") })
        } else {
            let listed = dir.path + "/ids.txt"
            #expect(try runShell("sqlite3 '\(dir.path)/sgem.db' 'SELECT id FROM bench_writes' > '\(listed)'") == 0)
            stored = Set((readAll(listed) ?? "").split(separator: "\n").compactMap { Int($0) })
        }
        let lost = acknowledged.filter { !stored.contains($0) }
        #expect(lost.isEmpty, "acknowledged but lost: \(lost.prefix(10))")
        #expect(stored.count >= acknowledged.count)
    }
}

func readAll(_ path: String) -> String? {
    guard let f = fopen(path, "r") else { return nil }
    defer { fclose(f) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buf, 1, buf.count, f)
        if n <= 0 { break }
        out += buf[0..<n]
    }
    return String(decoding: out, as: UTF8.self)
}
