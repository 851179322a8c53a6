#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import SGEMContracts
import SGEMCore
import SGEMHTTP
import SGEMShell
import SGEMStore
import SGEMSupport

/// `serve`: lock the data directory, open and migrate the store, boot the modules, listen, and on
/// SIGTERM/SIGINT stop in reverse order with in-flight work finished.
enum Server {
    static func run(configuration: Configuration, io: any CommandIO) async throws {
        let logger = Logger(label: "server")
        try Application.makeDataDirectory(configuration)
        guard let lock = try DataDirectoryLock.acquire(configuration.lockPath) else {
            throw CommandError.failure("another server is already running on \(configuration.dataDirectory)")
        }
        raiseOpenFileLimit(configuration: configuration, logger: logger)
        let signals = SignalWaiter([SIGTERM, SIGINT])
        let running = try await RunningServer.start(configuration: configuration, logger: logger)
        let scheme = configuration.string("tls-cert") == nil ? "http" : "https"
        let host = configuration.string("host") ?? "0.0.0.0"
        let shownHost = host == "0.0.0.0" || host == "::" ? "127.0.0.1" : host
        io.print("\(Application.name) \(Version.current) listening on \(scheme)://\(shownHost):\(running.port)/")
        let setupURL = running.setupToken().map { Server.setupURL(scheme: scheme, host: host, port: running.port, token: $0) }
        if let setupURL { io.print("first run: open \(setupURL) to create the first admin (the link works once)") }
        io.print("data: \(configuration.databaseLocation)")
        if let hint = await running.firstRunHint() { io.print(hint) }
        logger.notice("listening", ["url": "\(scheme)://\(host):\(running.port)/", "database": configuration.databaseLocation.description])
        if let setupURL { logger.notice("first-run setup link", ["url": setupURL]) }

        defer {
            _ = lock
            // Lines still buffered for stderr go out before the process ends.
            _ = LogSettings.flush(timeoutMilliseconds: 2000)
        }
        do {
            try await running.run { await signals.next() }
        } catch let failure as ServiceGroupError {
            // One line for the operator; a non-zero exit so systemd restarts the server.
            throw CommandError.failure("stopped because \(failure); see the log")
        }
    }
}

extension Server {
    /// `http://HOST:PORT/setup#token=TOKEN`: the bound host, or this machine's name when bound to
    /// every address (127.0.0.1 when it has none); IPv6 literals in brackets.
    static func setupURL(scheme: String, host: String, port: Int, token: String) -> String {
        "\(scheme)://\(ServerAddress.linkHost(host)):\(port)/setup#token=\(token)"
    }
}

/// Raises the soft limit on open files to the hard limit, as nginx and Go do: every connection is
/// a descriptor, and the usual soft default (1024) is below `--max-connections`' default.
func raiseOpenFileLimit(configuration: Configuration, logger: Logger) {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        _ = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    }
    // Descriptors beyond connections: the database, its WAL, epoll, eventfds, stdio.
    let needed = rlim_t(configuration.int("max-connections") + 64)
    if limit.rlim_cur < needed {
        logger.warning("open-file limit is below max-connections; connections past it wait in the backlog",
                       ["limit": String(limit.rlim_cur), "max_connections": String(configuration.int("max-connections"))])
    }
}

/// A started server: the store, the booted modules, their services and the listener. Tests use
/// it in-process.
public final class RunningServer: Sendable {
    public let store: Store
    public let server: HTTPServer
    public let router: Router
    public let context: ModuleContext
    /// The booted modules' runtimes, in boot order.
    let runtimes: [(id: ModuleID, runtime: any ModuleRuntime)]
    let services: ServiceGroup
    let commands: CommandRegistry

    init(store: Store, server: HTTPServer, router: Router, context: ModuleContext,
         runtimes: [(id: ModuleID, runtime: any ModuleRuntime)], services: ServiceGroup, commands: CommandRegistry) {
        self.store = store
        self.server = server
        self.router = router
        self.context = context
        self.runtimes = runtimes
        self.services = services
        self.commands = commands
    }

    public var port: Int { server.port }

    /// Names of the module services running now, in start order.
    public var serviceNames: [String] { services.names }

    /// Opens the store, applies migrations, boots every module, freezes the routes, starts
    /// listening and then the modules' services. `excluding` leaves modules out and `adding` adds
    /// some (tests that stand in for one, e.g. a fake `ChatAccess` instead of messaging).
    public static func start(configuration: Configuration, logger: Logger = Logger(label: "server"),
                             excluding: Set<ModuleID> = [], adding: [any Module] = []) async throws -> RunningServer {
        let ordered = try bootOrder(modules(configuration: configuration).filter { !excluding.contains($0.id) } + adding)
        var migrations = MigrationList()
        for module in ordered { module.registerMigrations(&migrations) }
        // The key file is read (or made) before a new database is: a bad one stops a fresh
        // install before anything is created, and a refused database gets no key file beside it.
        try Application.refuseUnusableStore(configuration, creating: true)
        let secrets = Secrets(keyFile: configuration.secretKeyPath)
        do {
            if try secrets.prepare() { logger.notice("secret key file created", ["path": secrets.keyFile]) }
        } catch {
            throw CommandError.failure(error.description)
        }
        let store = try await Application.openMigratedStore(configuration)

        let router = Router(defaultMaxBodyBytes: configuration.int("max-body-bytes"))
        let services = ServiceGroup(logger: Logger(label: "services"))
        let context = ModuleContext(configuration: configuration, store: store, services: ServiceRegistry(),
                                    events: EventBus(logger: Logger(label: "events")), metrics: .shared,
                                    logger: logger, router: router,
                                    declaredRuntimeSettings: ordered.flatMap(\.runtimeSettings), serviceGroup: services,
                                    secrets: secrets, declaredAuditEvents: ordered.flatMap(\.auditEvents))
        var runtimes: [(id: ModuleID, runtime: any ModuleRuntime)] = []
        func unwind() async {
            for (_, runtime) in runtimes.reversed() { await runtime.shutdown() }
            await store.close()
        }
        do {
            for module in ordered {
                runtimes.append((module.id, try await module.boot(context.scoped(to: module.id))))
            }
        } catch {
            await unwind()
            throw CommandError.failure("module failed to start: \(error)")
        }
        let api = router.group("/api/v1")
        let root = router.group("")
        for (_, runtime) in runtimes { runtime.registerRoutes(api, root: root) }

        var commands = CommandRegistry()
        let commandContext = CommandModuleContext(configuration: configuration, openStore: { store },
                                                  declaredRuntimeSettings: ordered.flatMap(\.runtimeSettings), secrets: secrets)
        for module in ordered { module.registerCommands(&commands, context: commandContext) }

        // The routes are frozen here: nothing registers a route once the server can answer.
        let server = HTTPServer(configuration: httpConfiguration(configuration), router: router, logger: Logger(label: "http"))
        do {
            _ = try server.start()
        } catch {
            await unwind()
            throw CommandError.failure("cannot listen on \(configuration.string("host") ?? ""):\(configuration.int("port")): \(error)")
        }
        services.start(runtimes.flatMap { $0.runtime.services })
        return RunningServer(store: store, server: server, router: router, context: context, runtimes: runtimes,
                             services: services, commands: commands)
    }

    /// Serves until `signal` returns (SIGTERM, SIGINT) or a required module service ends on its
    /// own, then stops gracefully (`stop`); throws the `ServiceGroupError` in the second case.
    public func run(untilSignal signal: @escaping @Sendable () async -> Int32) async throws {
        let logger = Logger(label: "server")
        let group = services
        let failure = await withTaskGroup(of: ServiceGroupError?.self) { race in
            race.addTask {
                let received = await signal()
                if !Task.isCancelled { logger.notice("shutting down", ["signal": received == SIGTERM ? "SIGTERM" : "SIGINT"]) }
                return nil
            }
            race.addTask { await group.waitForFailure() }
            let first = await race.next() ?? nil
            race.cancelAll()
            return first
        }
        if let failure {
            logger.error("shutting down: a required service stopped", ["service": failure.service, "reason": failure.description])
        }
        await stop()
        logger.notice("stopped")
        if let failure { throw failure }
    }

    /// Stops accepting and lets in-flight requests finish, stops the module services in reverse
    /// order, shuts the modules down in reverse order, and closes the store after its queued writes.
    public func stop() async {
        await server.shutdown()
        await services.stop()
        for (_, runtime) in runtimes.reversed() { await runtime.shutdown() }
        await store.close()
    }

    /// The first-run setup token, once (nil when an active admin existed at start).
    public func setupToken() -> String? { context.services.resolve((any FirstRunSetup).self)?.takeSetupToken() }

    /// What to tell the operator on a first run; modules that manage users supply it later.
    func firstRunHint() async -> String? {
        guard commands.command(named: "create-user") != nil else { return nil }
        // Only while no active admin exists (an unreadable directory still shows the hint).
        if let directory = context.services.resolve((any UserDirectory).self),
           let admins = try? await directory.activeAdminIDs(), !admins.isEmpty { return nil }
        let program = CommandLine.arguments.first ?? Application.name
        let dataDir = Application.dataDirFlag(context.configuration)
        return "create the first admin: \(program) admin create-user --username admin --email you@example.com --role admin --random-password\(dataDir)"
    }

    static func httpConfiguration(_ c: Configuration) -> HTTPServerConfiguration {
        var h = HTTPServerConfiguration()
        h.host = c.string("host") ?? "0.0.0.0"
        h.port = c.int("port")
        h.eventLoops = c.int("event-loops")
        h.maxConnections = c.int("max-connections")
        h.maxConnectionsPerAddress = c.int("max-connections-per-address")
        h.trustedProxies = (c.string("trusted-proxy") ?? "").split(separator: ",").map { $0.trimmingCharacters(in: " \t") }.filter { !$0.isEmpty }
        h.handlerTimeout = c.duration("handler-timeout")
        h.maxHeaderBytes = c.int("max-header-bytes")
        h.maxURIBytes = c.int("max-uri-bytes")
        h.headerTimeout = c.duration("header-timeout")
        h.bodyTimeout = c.duration("body-timeout")
        h.idleTimeout = c.duration("idle-timeout")
        h.shutdownGrace = c.duration("shutdown-grace")
        h.webSocketMaxMessageBytes = c.int("ws-max-message-bytes")
        h.webSocketMaxBufferedBytes = c.int("ws-max-buffered-bytes")
        if let cert = c.string("tls-cert"), let key = c.string("tls-key") {
            h.tls = TLSConfiguration(certificatePath: cert, keyPath: key)
        }
        return h
    }
}

/// Turns SIGTERM/SIGINT into an awaitable value; the default action is disabled so the server
/// can stop in order. SIGPIPE is ignored (sockets use MSG_NOSIGNAL, but files and pipes do not).
final class SignalWaiter: @unchecked Sendable {   // `sources` is set once in init and only kept alive
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init(_ signals: [Int32]) {
        signal(SIGPIPE, SIG_IGN)
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        var sources: [any DispatchSourceSignal] = []
        for sig in signals {
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { continuation.yield(sig) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    func next() async -> Int32 {
        for await sig in stream { return sig }
        return SIGTERM
    }
}
