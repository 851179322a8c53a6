#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Synchronization
import SGEMSupport

/// The HTTP/1.1 (and optionally HTTPS) server: event loops over non-blocking sockets that hand
/// each request to the router as an async task running on the loop's own thread.
public final class HTTPServer: Sendable {
    struct State: Sendable {
        var core: ServerCore?
        var loops: [EventLoop] = []
        var listenFD: Int32 = -1
        var port = 0
        var shutdownTask: Task<Void, Never>?
        /// Tests: the index of the loop whose thread start is made to fail.
        var injectedLoopStartFailure: Int?
        /// The loops of the last failed start, so tests can see they stopped.
        var abandonedLoops: [EventLoop] = []
    }

    let configuration: HTTPServerConfiguration
    let router: Router
    let logger: Logger
    let metrics: MetricsRegistry
    private let state = Mutex(State())

    /// A server that is not listening yet; call `start()`.
    public init(configuration: HTTPServerConfiguration, router: Router, logger: Logger, metrics: MetricsRegistry = .shared) {
        self.configuration = configuration
        self.router = router
        self.logger = logger
        self.metrics = metrics
    }

    /// Binds, starts the loop threads and returns the bound port (an ephemeral one for port 0).
    public func start() throws -> Int {
        try state.withLock { state in
            guard state.core == nil else { throw HTTPServerError(code: .alreadyStarted, message: "the server is already running") }
            // A trusted proxy that is not an address would silently never match; refuse it.
            for proxy in configuration.trustedProxies where !ServerCore.isIPAddress(proxy) {
                throw HTTPServerError(code: .invalidAddress, message: "trusted proxy \(proxy) is not an IP address")
            }
            let tls = try configuration.tls.map { try TLSContext($0) }
            let core = ServerCore(configuration: configuration, router: router, logger: logger, metrics: metrics, tls: tls)
            let (fd, port) = try HTTPServer.listen(host: configuration.host, port: configuration.port)
            let count = configuration.eventLoops > 0 ? configuration.eventLoops : Int(sgem_available_cpus())
            var loops: [EventLoop] = []
            var started = 0
            do {
                for _ in 0..<count { loops.append(try EventLoop(core: core)) }
                for (index, loop) in loops.enumerated() {
                    if index == state.injectedLoopStartFailure { loop.startFailure = EAGAIN }
                    try loop.start(listenFD: fd)
                    started += 1
                }
            } catch {
                // Release everything taken so far: running loops stop (their threads close
                // their descriptors), the others close theirs here, then the listener goes.
                for loop in loops[..<started] { loop.abort() }
                for loop in loops[started...] { loop.discard() }
                Glibc.close(fd)
                state.abandonedLoops = loops
                throw error
            }
            state.core = core
            state.loops = loops
            state.abandonedLoops = []
            state.listenFD = fd
            state.port = port
            logger.info("http server listening", ["host": configuration.host, "port": String(port),
                                                  "loops": String(count), "tls": tls == nil ? "off" : "on"])
            return port
        }
    }

    /// Tests: makes the next `start` fail when it starts loop `index`.
    func injectLoopStartFailure(at index: Int?) { state.withLock { $0.injectedLoopStartFailure = index } }

    /// Tests: the loops a failed `start` created and then released.
    var abandonedLoops: [EventLoop] { state.withLock { $0.abandonedLoops } }

    /// Tests: the server's shared state (counters, TLS context) while it runs.
    var core: ServerCore? { state.withLock { $0.core } }

    /// The bound port (0 before `start`).
    public var port: Int { state.withLock { $0.port } }

    /// Connections currently open.
    public var openConnections: Int { state.withLock { $0.core?.open.load(ordering: .relaxed) ?? 0 } }

    /// Stops accepting, lets in-flight requests finish within `shutdownGrace`, closes idle and
    /// then all remaining connections. Safe to call more than once.
    public func shutdown() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            if let task = state.shutdownTask { return task }
            guard state.core != nil else { return nil }
            let loops = state.loops
            let listenFD = state.listenFD
            let grace = configuration.shutdownGrace.nanoseconds
            let logger = self.logger
            let task = Task {
                let deadline = sgem_monotonic_ns() + grace
                await withTaskGroup(of: Void.self) { group in
                    for loop in loops {
                        group.addTask {
                            await withCheckedContinuation { continuation in
                                loop.execute { loop.beginShutdown(deadline: deadline, drained: continuation) }
                            }
                        }
                    }
                }
                // Every loop has dropped the listener from its epoll set by now.
                Glibc.close(listenFD)
                logger.info("http server stopped")
            }
            state.shutdownTask = task
            return task
        }
        await task?.value
    }

    static func listen(host: String, port: Int) throws -> (Int32, Int) {
        guard port >= 0 && port <= 65535 else { throw HTTPServerError(code: .invalidAddress, message: "port \(port) is out of range") }
        let name = host == "localhost" ? "127.0.0.1" : host
        var v4 = sockaddr_in()
        var v6 = sockaddr_in6()
        let family: Int32
        if inet_pton(AF_INET, name, &v4.sin_addr) == 1 {
            family = AF_INET
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
        } else if inet_pton(AF_INET6, name, &v6.sin6_addr) == 1 {
            family = AF_INET6
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
        } else {
            throw HTTPServerError(code: .invalidAddress, message: "host \(host) is not an IP address")
        }
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            let code = errno
            throw HTTPServerError(code: .socket, message: "socket failed: \(String(cString: strerror(code)))")
        }
        func fail(_ what: String) -> HTTPServerError {
            let code = errno
            Glibc.close(fd)
            if code == EADDRINUSE { return HTTPServerError(code: .addressInUse, message: "address \(host):\(port) is already in use") }
            return HTTPServerError(code: .socket, message: "\(what) failed for \(host):\(port): \(String(cString: strerror(code)))")
        }
        // SO_REUSEADDR only (not REUSEPORT): a restart may bind over TIME_WAIT, but a second
        // live server on the same port is refused instead of silently sharing it.
        guard sgem_set_reuse(fd, 0) == 0 else { throw fail("setsockopt") }
        let bound: Int32 = family == AF_INET
            ? withUnsafePointer(to: &v4) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
            : withUnsafePointer(to: &v6) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        guard bound == 0 else { throw fail("bind") }
        guard Glibc.listen(fd, 1024) == 0 else { throw fail("listen") }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        guard named == 0 else { throw fail("getsockname") }
        let actual: UInt16 = withUnsafePointer(to: &storage) { pointer in
            family == AF_INET
                ? pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
                : pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
        }
        return (fd, Int(actual))
    }
}
