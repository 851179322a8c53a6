#if canImport(Glibc)
import Glibc
#endif
import CLinux
import Synchronization
import SGEMSupport

/// What every loop of one server shares: configuration, router, TLS, counters.
final class ServerCore: Sendable {
    /// A process-wide count that a gauge samples at render time.
    final class Tally: Sendable {
        let value = Atomic<Int>(0)
    }

    let configuration: HTTPServerConfiguration
    /// The frozen routes: dispatch reads them without a lock.
    let router: RouteTable
    let instruments: Instruments
    let logger: Logger
    let tls: TLSContext?
    let open = Atomic<Int>(0)
    let openGauge: Gauge
    let rejected: Counter
    let rejectedPerAddress: Counter
    let handlerTimeouts: Counter
    let tlsSetupFailures: Counter
    /// Response bytes queued in user space across every connection (what the socket has not taken).
    let queuedOutbound = Tally()
    /// Times a connection used up its read budget and was put back for a later turn.
    let readBudgetYields = Tally()
    let headerTimeout: UInt64
    let bodyTimeout: UInt64
    let idleTimeout: UInt64
    let handlerTimeout: UInt64
    let lingerTimeout: UInt64
    /// Bytes a connection may buffer from a pipelining client while a request is being handled.
    let maxPipelineBuffer: Int
    let maxOutboundBytes: Int
    /// Normalised trusted proxy addresses.
    let trustedProxies: Set<String>
    /// Connections the open-file limit leaves room for, keeping `descriptorReserve` free for
    /// everything else (the database's files, outbound requests, the runtime's own reads of
    /// /proc): accepts pause at it, so the process never runs out of descriptors through
    /// connections (libdispatch traps when it cannot open a file it needs).
    let descriptorCap: Int
    static let descriptorReserve = 24
    /// Open connections per peer address (trusted proxies are not counted); entries go at zero,
    /// so the map is bounded by `maxConnections`.
    private let perAddress = Mutex<[String: Int]>([:])

    init(configuration: HTTPServerConfiguration, router: Router, logger: Logger, metrics: MetricsRegistry, tls: TLSContext?) {
        self.configuration = configuration
        descriptorCap = ServerCore.connectionsWithinDescriptorLimit()
        self.router = router.build()
        self.logger = logger
        self.instruments = Instruments(logger: logger, metrics: metrics, routeCount: self.router.routeCount)
        self.tls = tls
        openGauge = metrics.gauge("sgem_http_open_connections", help: "Open HTTP connections.")
        rejected = metrics.counter("sgem_http_connections_rejected_total", help: "Connections refused because the server was full.")
        rejectedPerAddress = metrics.counter("sgem_http_connections_rejected_per_address_total",
                                             help: "Connections refused because their address held its connection limit.")
        handlerTimeouts = metrics.counter("sgem_http_handler_timeouts_total", help: "Requests answered 503 because the handler ran past its deadline.")
        tlsSetupFailures = metrics.counter("sgem_http_tls_setup_failures_total", help: "Connections closed because their TLS state could not be created.")
        let queued = queuedOutbound
        metrics.gauge("sgem_http_outbound_queued_bytes", help: "Response bytes waiting for slow readers to take them.")
            .sample { Double(queued.value.load(ordering: .relaxed)) }
        headerTimeout = configuration.headerTimeout.nanoseconds
        bodyTimeout = configuration.bodyTimeout.nanoseconds
        idleTimeout = configuration.idleTimeout.nanoseconds
        handlerTimeout = configuration.handlerTimeout.nanoseconds
        lingerTimeout = configuration.lingerTimeout.nanoseconds
        maxPipelineBuffer = configuration.maxHeaderBytes + 64 * 1024
        maxOutboundBytes = max(1, configuration.maxOutboundBytes)
        trustedProxies = Set(configuration.trustedProxies.map(ServerCore.normalise))
    }

    /// An IP address in its canonical text form (so `::1` and `0:0::1` match); other text as is.
    static func normalise(_ address: String) -> String {
        var v4 = in_addr()
        var v6 = in6_addr()
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        if inet_pton(AF_INET, address, &v4) == 1, inet_ntop(AF_INET, &v4, &buffer, socklen_t(buffer.count)) != nil {
            return text(of: buffer)
        }
        if inet_pton(AF_INET6, address, &v6) == 1, inet_ntop(AF_INET6, &v6, &buffer, socklen_t(buffer.count)) != nil {
            return text(of: buffer)
        }
        return address
    }

    /// Whether `text` is an IPv4 or IPv6 address.
    static func isIPAddress(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }

    /// The NUL-terminated text `inet_ntop` wrote.
    static func text(of buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func isTrustedProxy(_ address: String) -> Bool {
        !trustedProxies.isEmpty && trustedProxies.contains(address)
    }

    /// Why a connection could not be admitted.
    enum Refusal { case full, addressFull }

    /// Claims a connection slot (and one of its address's, unless `exempt`); nil when admitted.
    /// The open-file limit less the descriptors open now (the database, stdio…) and the reserve;
    /// at least 1. Unlimited when the limit cannot be read.
    static func connectionsWithinDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return Int.max }
        var open = 0
        if let dir = opendir("/proc/self/fd") {
            while readdir(dir) != nil { open += 1 }
            closedir(dir)
        }
        return max(1, Int(clamping: limit.rlim_cur) - open - descriptorReserve)
    }

    func reserveConnection(address: String, exempt: Bool) -> Refusal? {
        let limit = configuration.maxConnections
        var current = open.load(ordering: .relaxed)
        while true {
            guard current < limit else { return .full }
            let (exchanged, original) = open.compareExchange(expected: current, desired: current + 1, ordering: .relaxed)
            if exchanged { break }
            current = original
        }
        // 0 (or less) turns the per-address limit off.
        if !exempt && configuration.maxConnectionsPerAddress > 0 {
            let perLimit = configuration.maxConnectionsPerAddress
            let admitted = perAddress.withLock { counts -> Bool in
                let held = counts[address, default: 0]
                guard held < perLimit else { return false }
                counts[address] = held + 1
                return true
            }
            guard admitted else {
                open.subtract(1, ordering: .relaxed)
                return .addressFull
            }
        }
        openGauge.add(1)
        return nil
    }

    func releaseConnection(address: String, exempt: Bool) {
        if !exempt && configuration.maxConnectionsPerAddress > 0 {
            perAddress.withLock { counts in
                let held = counts[address, default: 0]
                if held <= 1 { counts[address] = nil } else { counts[address] = held - 1 }
            }
        }
        open.subtract(1, ordering: .relaxed)
        openGauge.add(-1)
    }

    /// Sent to connections refused at accept on a plain-HTTP server.
    static let unavailableResponse = refusal("the server is at its connection limit; retry later")
    static let addressLimitResponse = refusal("too many connections from your address; retry later")

    private static func refusal(_ message: String) -> [UInt8] {
        let body = #"{"error":{"code":"unavailable","message":""# + message + #""}}"#
        return Array("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\nRetry-After: 1\r\n\r\n\(body)".utf8)
    }
}

/// One event-loop thread: an epoll set over its connections and the shared listener, a timer
/// tick, and a Swift `TaskExecutor` so request handlers run on this same thread.
// @unchecked Sendable: `work` is a Mutex and `threadID`/`exited` atomics; every other field is
// read and written only on the loop's own thread (other threads hop in through `execute`).
final class EventLoop: TaskExecutor, @unchecked Sendable {
    enum Work: Sendable {
        case job(UnownedJob)
        case call(@Sendable () -> Void)
    }

    struct Queue: Sendable {
        var items: [Work] = []
        var exited = false
        /// The eventfd was signalled since the loop last took the items: a burst of hops from
        /// other threads (a fan-out to hundreds of sockets) costs one wake-up syscall, not one each.
        var signalled = false
    }

    static let listenerToken = UInt64.max
    static let wakeToken = UInt64.max - 1
    static let readChunk = 64 * 1024
    static let tickInterval: UInt64 = 250_000_000

    let core: ServerCore
    let epfd: Int32
    let wakeFD: Int32
    private let work = Mutex(Queue())
    private let threadID = Atomic<UInt>(0)
    private var spare: [Work] = []

    var listenFD: Int32 = -1
    var connections: [Connection?] = []
    var connectionCount = 0
    var generation: UInt32 = 0
    /// Handler tasks started by this loop that have not reported back yet.
    var inFlight = 0
    let scratch: UnsafeMutableRawPointer
    /// Where responses are serialised before they are sent, kept between responses: they are
    /// written one at a time on this thread. What a socket does not take at once moves to the
    /// connection's own buffer, so an idle connection holds no output memory.
    var responseBuffer = ByteWriter(capacity: 4096)
    var now: UInt64 = 0
    var nextTick: UInt64 = 0
    var shuttingDown = false
    var stopping = false
    /// While out of descriptors (EMFILE and friends) the listener is taken out of epoll until
    /// this monotonic time, so a full backlog does not wake the loop in a busy spin.
    var acceptPausedUntil: UInt64 = 0
    var shutdownDeadline: UInt64 = 0
    var drained: CheckedContinuation<Void, Never>?
    /// Connections to read again on the next turn: they stopped at their read budget with
    /// bytes possibly still in the kernel, and edge-triggered epoll will not report them again.
    var readAgain: [Connection] = []

    init(core: ServerCore) throws {
        self.core = core
        epfd = sgem_epoll_create()
        guard epfd >= 0 else { throw EventLoop.failure("epoll_create1", errno) }
        wakeFD = sgem_eventfd()
        guard wakeFD >= 0 else {
            let code = errno
            Glibc.close(epfd)
            throw EventLoop.failure("eventfd", code)
        }
        guard sgem_epoll_add(epfd, wakeFD, SGEM_EPOLLIN, EventLoop.wakeToken) == 0 else {
            let code = errno
            Glibc.close(wakeFD)
            Glibc.close(epfd)
            throw EventLoop.failure("epoll_ctl(eventfd)", code)
        }
        scratch = UnsafeMutableRawPointer.allocate(byteCount: EventLoop.readChunk, alignment: 16)
    }

    deinit { scratch.deallocate() }

    /// An error for a failed call, from the `errno` the caller saved right after it.
    static func failure(_ call: String, _ code: Int32) -> HTTPServerError {
        HTTPServerError(code: .socket, message: "\(call) failed: \(String(cString: strerror(code)))")
    }

    var isOnLoopThread: Bool { threadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    // MARK: TaskExecutor

    func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let onLoop = isOnLoopThread
        let accepted = work.withLock { queue -> Bool in
            if queue.exited { return false }
            queue.items.append(.job(unowned))
            if !onLoop && !queue.signalled {
                queue.signalled = true
                _ = sgem_eventfd_signal(wakeFD)
            }
            return true
        }
        // The loop has stopped: run the job here rather than lose it.
        if !accepted { unowned.runSynchronously(on: asUnownedTaskExecutor()) }
    }

    /// Runs `body` on the loop thread (soon, in order); runs it here if the loop has stopped.
    func execute(_ body: @escaping @Sendable () -> Void) {
        let onLoop = isOnLoopThread
        let accepted = work.withLock { queue -> Bool in
            if queue.exited { return false }
            queue.items.append(.call(body))
            if !onLoop && !queue.signalled {
                queue.signalled = true
                _ = sgem_eventfd_signal(wakeFD)
            }
            return true
        }
        if !accepted { body() }
    }

    private func runPending() {
        for _ in 0..<8 {
            var batch = spare
            work.withLock { queue in
                swap(&batch, &queue.items)
                // Items queued from now on need a new signal; these are being run.
                queue.signalled = false
            }
            if batch.isEmpty {
                spare = batch
                return
            }
            for item in batch {
                switch item {
                case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
                case .call(let body): body()
                }
            }
            batch.removeAll(keepingCapacity: true)
            spare = batch
        }
    }

    // MARK: Loop

    /// Every loop polls the shared listener; EPOLLEXCLUSIVE wakes one of them per connection
    /// instead of all (the thundering herd).
    static let listenerEvents = SGEM_EPOLLIN | SGEM_EPOLLEXCLUSIVE

    /// Adds the listener and starts the thread. On failure nothing is left behind: the loop's
    /// descriptors are closed and no thread runs.
    func start(listenFD: Int32) throws {
        self.listenFD = listenFD
        guard sgem_epoll_add(epfd, listenFD, EventLoop.listenerEvents, EventLoop.listenerToken) == 0 else {
            let code = errno
            discard()
            throw EventLoop.failure("epoll_ctl(listener)", code)
        }
        let box = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let rc = startFailure ?? pthread_create(&thread, nil, { arg in
            let loop = Unmanaged<EventLoop>.fromOpaque(arg!).takeRetainedValue()
            loop.run()
            return nil
        }, box)
        guard rc == 0 else {
            Unmanaged<EventLoop>.fromOpaque(box).release()
            discard()
            throw EventLoop.failure("pthread_create", rc)
        }
        pthread_detach(thread)
    }

    /// Set by tests to make `start` fail as pthread_create would, with this error number.
    var startFailure: Int32?
    /// Set once this loop's descriptors are closed (it stopped, or never ran).
    private let released = Atomic<Bool>(false)

    /// Closes the descriptors of a loop whose thread never started.
    func discard() {
        work.withLock { $0.exited = true }
        releaseDescriptors()
    }

    private func releaseDescriptors() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        Glibc.close(wakeFD)
        Glibc.close(epfd)
    }

    /// Stops a running loop at once (a later loop failed to start): drops the listener, closes
    /// its connections; the thread exits and closes the descriptors.
    func abort() {
        execute {
            if self.listenFD >= 0 {
                _ = sgem_epoll_del(self.epfd, self.listenFD)
                self.listenFD = -1
            }
            self.shuttingDown = true
            for case let connection? in self.connections { connection.close() }
            self.stopping = true
        }
    }

    /// Whether the loop's thread has finished (or never ran) and its descriptors are closed.
    var hasExited: Bool { released.load(ordering: .acquiring) }

    private func run() {
        sgem_set_thread_name("sgem-http")
        threadID.store(UInt(pthread_self()), ordering: .releasing)
        var events = [sgem_epoll_event](repeating: sgem_epoll_event(), count: 256)
        now = sgem_monotonic_ns()
        nextTick = now + EventLoop.tickInterval
        while true {
            runPending()
            let hasWork = work.withLock { !$0.items.isEmpty }
            // Connections that used up their read budget last turn come back after this poll.
            // (Swapped only when non-empty: copying a shared buffer would allocate every turn.)
            var resumed: [Connection] = []
            if !readAgain.isEmpty { swap(&resumed, &readAgain) }
            let timeout: Int32 = hasWork || !resumed.isEmpty ? 0 : Int32(max(1, min(250, (nextTick &- min(nextTick, sgem_monotonic_ns())) / 1_000_000 + 1)))
            let n = events.withUnsafeMutableBufferPointer { sgem_epoll_wait(epfd, $0.baseAddress, 256, timeout) }
            let waitError = n < 0 ? errno : 0
            now = sgem_monotonic_ns()
            if n < 0 && waitError != EINTR {
                core.logger.critical("epoll_wait failed", ["errno": String(waitError), "error": String(cString: strerror(waitError))])
                break
            }
            for i in 0..<max(0, Int(n)) {
                let event = events[i]
                switch event.data {
                case EventLoop.listenerToken: acceptAll()
                case EventLoop.wakeToken: _ = sgem_eventfd_drain(wakeFD)
                default:
                    let fd = Int(UInt32(truncatingIfNeeded: event.data))
                    let gen = UInt32(truncatingIfNeeded: event.data >> 32)
                    if fd < connections.count, let connection = connections[fd], connection.generation == gen {
                        connection.handle(event.events)
                    }
                }
            }
            for connection in resumed where connection.state != .closed { connection.resumeReading() }
            runPending()
            now = sgem_monotonic_ns()
            if now >= nextTick {
                tick()
                nextTick = now + EventLoop.tickInterval
            }
            if acceptPausedUntil != 0 && now >= acceptPausedUntil { resumeAccepting() }
            if shuttingDown { checkDrained() }
            if stopping && inFlight == 0 && connectionCount == 0 { break }
        }
        work.withLock { $0.exited = true }
        runPending()
        releaseDescriptors()
    }

    /// Stops listening for a tick (logged once per pause).
    private func pauseAccepting(reason: String, errno code: Int32) {
        if acceptPausedUntil == 0 {
            core.logger.warning("pausing accepts", ["errno": String(code), "reason": reason])
            _ = sgem_epoll_del(epfd, listenFD)
        }
        acceptPausedUntil = now + EventLoop.tickInterval
    }

    private func acceptAll() {
        while listenFD >= 0 {
            // At the descriptor cap, connections wait in the kernel's backlog (as at EMFILE, but
            // before the process is out of descriptors).
            if core.open.load(ordering: .relaxed) >= core.descriptorCap {
                pauseAccepting(reason: "open connections reached what the open-file limit leaves room for", errno: EMFILE)
                return
            }
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let fd = withUnsafeMutablePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sgem_accept_nonblocking(listenFD, $0, &length) }
            }
            if fd < 0 {
                let code = errno
                switch code {
                case EINTR, ECONNABORTED, EPROTO: continue
                case EAGAIN, EWOULDBLOCK: return
                default:
                    // EMFILE/ENFILE/ENOBUFS/ENOMEM: leave the backlog to the kernel and stop
                    // listening for a tick; the listener would otherwise wake us at once, forever.
                    pauseAccepting(reason: String(cString: strerror(code)), errno: code)
                    return
                }
            }
            let address = EventLoop.address(of: storage)
            let trusted = core.isTrustedProxy(address)
            let refusal: ServerCore.Refusal? = shuttingDown ? .full : core.reserveConnection(address: address, exempt: trusted)
            if let refusal {
                let answer: [UInt8]
                switch refusal {
                case .full:
                    core.rejected.increment()
                    answer = ServerCore.unavailableResponse
                case .addressFull:
                    core.rejectedPerAddress.increment()
                    answer = ServerCore.addressLimitResponse
                }
                // On HTTPS there is no TLS session yet to say it in; just close.
                if core.tls == nil { answer.withUnsafeBytes { _ = sgem_send(fd, $0.baseAddress, $0.count) } }
                Glibc.close(fd)
                continue
            }
            var stream: TLSStream?
            if let tls = core.tls {
                // Fail closed: without TLS state the connection must not be served at all.
                guard let made = tls.makeStream(fd: fd) else {
                    core.tlsSetupFailures.increment()
                    core.logger.warning("cannot create TLS state; closing the connection", ["remote": address, "error": TLSContext.opensslErrors()])
                    core.releaseConnection(address: address, exempt: trusted)
                    Glibc.close(fd)
                    continue
                }
                stream = made
            }
            _ = sgem_set_nodelay(fd)
            generation &+= 1
            let connection = Connection(loop: self, fd: fd, generation: generation, remoteAddress: address,
                                        peerIsTrustedProxy: trusted, tls: stream)
            if Int(fd) >= connections.count {
                connections.append(contentsOf: repeatElement(nil, count: Int(fd) + 64 - connections.count))
            }
            connections[Int(fd)] = connection
            connectionCount += 1
            let events = SGEM_EPOLLIN | SGEM_EPOLLOUT | SGEM_EPOLLRDHUP | SGEM_EPOLLET
            if sgem_epoll_add(epfd, fd, events, UInt64(UInt32(fd)) | UInt64(generation) << 32) != 0 {
                let code = errno
                core.logger.warning("epoll_ctl(add) failed", ["errno": String(code)])
                connection.close()
            }
        }
    }

    func remove(_ connection: Connection) {
        let fd = Int(connection.fd)
        if fd < connections.count, connections[fd] === connection {
            connections[fd] = nil
            connectionCount -= 1
            core.releaseConnection(address: connection.remoteAddress, exempt: connection.peerIsTrustedProxy)
            // A descriptor came free: a paused listener tries the backlog again at the end of this
            // turn instead of after its tick.
            if acceptPausedUntil > now { acceptPausedUntil = now }
        }
    }

    private func tick() {
        for case let connection? in connections { connection.tick(now) }
    }

    /// Puts the listener back after a pause for lack of descriptors and tries the backlog again.
    private func resumeAccepting() {
        acceptPausedUntil = 0
        guard listenFD >= 0, !shuttingDown else { return }
        guard sgem_epoll_add(epfd, listenFD, EventLoop.listenerEvents, EventLoop.listenerToken) == 0 else {
            acceptPausedUntil = now + EventLoop.tickInterval
            return
        }
        acceptAll()
    }

    // MARK: Shutdown

    /// Stops accepting and closes idle connections; `drained` resumes once every connection is
    /// gone or `deadline` has passed.
    func beginShutdown(deadline: UInt64, drained: CheckedContinuation<Void, Never>) {
        shuttingDown = true
        shutdownDeadline = deadline
        self.drained = drained
        if listenFD >= 0 {
            _ = sgem_epoll_del(epfd, listenFD)
            listenFD = -1
        }
        now = sgem_monotonic_ns()
        for case let connection? in connections { connection.shutdownRequested() }
        checkDrained()
    }

    private func checkDrained() {
        guard let drained else { return }
        // Upgraded connections' handlers count too: they were told 1001 and are winding down.
        if (connectionCount > 0 || inFlight > 0) && now < shutdownDeadline { return }
        for case let connection? in connections { connection.close() }
        self.drained = nil
        stopping = true
        drained.resume()
    }

    static func address(of storage: sockaddr_storage) -> String {
        var storage = storage
        let family = Int32(storage.ss_family)
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        let size = socklen_t(buffer.count)
        let ok: Bool = withUnsafePointer(to: &storage) { pointer in
            if family == AF_INET {
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { sin in
                    var addr = sin.pointee.sin_addr
                    return inet_ntop(AF_INET, &addr, &buffer, size) != nil
                }
            } else if family == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { sin6 in
                    var addr = sin6.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &addr, &buffer, size) != nil
                }
            }
            return false
        }
        guard ok else { return "unknown" }
        return ServerCore.text(of: buffer)
    }
}
