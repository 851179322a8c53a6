#if canImport(Glibc)
import Glibc
#endif
import Testing
import SGEMContracts
import SGEMHTTP
import SGEMShell
import SGEMSupport
import SGEMTestPolling
@testable import SGEMCore

@Suite struct ConfigurationTests {
    /// The platform's settings plus two a module would declare.
    static let moduleFlag = Setting("bench-module", .bool, default: "false", "a module's switch")
    static let moduleToken = Setting("module-token", .string, default: nil, "a module's token",
                                     check: { $0.count >= 4 ? nil : "must be at least 4 characters" })
    let catalogue = SettingsCatalogue(Settings.platform + [ConfigurationTests.moduleFlag, ConfigurationTests.moduleToken])

    func tempFile(_ text: String) -> String {
        var template = Array("/tmp/sgem-config-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        let path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        _ = text.withCString { write(fd, $0, strlen($0)) }
        close(fd)
        return path
    }

    @Test func flagsBeatEnvironmentBeatFileBeatDefaults() throws {
        let file = tempFile("# comment\nport = 7000\nhost = \"10.0.0.1\"\nlog_level = debug # trailing\nidle_timeout = 5\n")
        defer { unlink(file) }
        let flags = try ParsedArguments(["--config", file, "--port", "9000"], specs: catalogue.optionSpecs)
        let c = try Configuration(flags: flags, environment: ["SGEM_PORT": "8000", "SGEM_HOST": "127.0.0.2", "SGEM_BENCH_MODULE": "yes"],
                                  catalogue: catalogue)
        #expect(c.int("port") == 9000)
        #expect(c.sources["port"] == "flag")
        #expect(c.string("host") == "127.0.0.2")
        #expect(c.sources["host"] == "environment")
        #expect(c.string("log-level") == "debug")
        #expect(c.int("idle-timeout") == 5)
        #expect(c.sources["idle-timeout"] == "file")
        #expect(c.bool("bench-module"))
        #expect(c.int("max-connections") == 4096)
        #expect(c.sources["max-connections"] == "default")
        #expect(c.databasePath == "./sgem-data/sgem.db")
    }

    @Test(arguments: [
        (["--port", "70000"], [String: String](), "--port must be a whole number from 0 to 65535, not '70000'"),
        ([], ["SGEM_IDLE_TIMEOUT": "soon"], "SGEM_IDLE_TIMEOUT must be a whole number from 1 to 86400, not 'soon'"),
        (["--log-level", "loud"], [:], "--log-level must be one of trace, debug, info, notice, warning, error, critical, not 'loud'"),
        (["--tls-cert", "c.pem"], [:], "--tls-cert and --tls-key go together"),
        ([], ["SGEM_BENCH_MODULE": "maybe"], "SGEM_BENCH_MODULE must be true or false, not 'maybe'"),
        (["--module-token", "abc"], [:], "--module-token must be at least 4 characters"),
        (["--trusted-proxy", "10.0.0.1, proxy.lan"], [:], "--trusted-proxy must list IP addresses, not 'proxy.lan'"),
    ])
    func rejectsBadValuesNamingTheirSource(_ args: [String], _ env: [String: String], _ message: String) throws {
        let flags = try ParsedArguments(args, specs: catalogue.optionSpecs)
        #expect(throws: CommandError.usage(message)) { try Configuration(flags: flags, environment: env, catalogue: catalogue) }
    }

    @Test func moduleSettingsReadTheirDeclaredDefaultWhenUnset() throws {
        let c = Configuration(overrides: ["port": "0"])
        #expect(c.bool(ConfigurationTests.moduleFlag) == false)
        #expect(c.string(ConfigurationTests.moduleToken) == nil)
        let set = try Configuration(flags: ParsedArguments(["--module-token", "secret"], specs: catalogue.optionSpecs),
                                    environment: [:], catalogue: catalogue)
        #expect(set.string(ConfigurationTests.moduleToken) == "secret")
        #expect(set.sources["module-token"] == "flag")
    }

    @Test func aSettingOnlyAModuleDeclaresIsUnknownToThePlatformAlone() throws {
        let file = tempFile("module_token = abcdef\n")
        defer { unlink(file) }
        let flags = try ParsedArguments(["--config", file], specs: SettingsCatalogue.platform.optionSpecs)
        #expect(throws: CommandError.usage("\(file): unknown setting 'module_token'")) { try Configuration(flags: flags, environment: [:]) }
        let withModule = try Configuration(flags: flags, environment: [:], catalogue: catalogue)
        #expect(withModule.string(ConfigurationTests.moduleToken) == "abcdef")
    }

    @Test func rejectsUnknownFileKeysAndMissingFiles() throws {
        let file = tempFile("colour = blue\n")
        defer { unlink(file) }
        let flags = try ParsedArguments(["--config", file], specs: catalogue.optionSpecs)
        #expect(throws: CommandError.usage("\(file): unknown setting 'colour'")) { try Configuration(flags: flags, environment: [:]) }
        let missing = try ParsedArguments(["--config", "/nonexistent/x.conf"], specs: catalogue.optionSpecs)
        #expect(throws: CommandError.usage("cannot read config file '/nonexistent/x.conf'")) { try Configuration(flags: missing, environment: [:]) }
    }

    @Test func everySettingHasEnvironmentAndFileNames() {
        let s = catalogue.named("store-write-batch")!
        #expect(s.environmentVariable == "SGEM_STORE_WRITE_BATCH")
        #expect(s.fileKey == "store_write_batch")
        #expect(catalogue.named("module-token")?.fileKey == "module_token")
        #expect(Set(catalogue.all.map(\.name)).count == catalogue.all.count)
    }
}


struct Fake: Module {
    let id: ModuleID
    let dependencies: [ModuleID]
}

@Suite struct ModuleOrderTests {
    @Test func dependenciesBootFirstAndListOrderBreaksTies() throws {
        let order = try bootOrder([Fake(id: "chat", dependencies: ["accounts"]), Fake(id: "system", dependencies: []),
                                   Fake(id: "accounts", dependencies: ["system"])])
        #expect(order.map(\.id.rawValue) == ["system", "accounts", "chat"])
    }

    @Test func missingDependencyAndCyclesAreErrors() {
        #expect(throws: ModuleError.self) { try bootOrder([Fake(id: "a", dependencies: ["nope"])]) }
        #expect(throws: ModuleError.self) { try bootOrder([Fake(id: "a", dependencies: ["b"]), Fake(id: "b", dependencies: ["a"])]) }
    }
}

protocol Greeter: Sendable { func greet() -> String }
struct English: Greeter { func greet() -> String { "hello" } }
struct Decided: Event { static let name = "test.decided"; let id: Int }
struct Other: Event { static let name = "test.other" }

actor Collector {
    var seen: [String] = []
    func add(_ s: String) { seen.append(s) }
}

@Suite struct ServicesAndEventsTests {
    @Test func servicesResolveByProtocol() {
        let services = ServiceRegistry()
        #expect(services.resolve((any Greeter).self) == nil)
        services.register((any Greeter).self, English())
        #expect(services.resolve((any Greeter).self)?.greet() == "hello")
    }

    @Test func eventsReachTypedSubscribersInOrderDespiteFailures() async {
        struct Boom: Error {}
        let bus = EventBus(logger: Logger(label: "test-events"))
        let collector = Collector()
        bus.subscribe(Decided.self) { e in await collector.add("first \(e.id)") }
        bus.subscribe(Decided.self) { _ in throw Boom() }
        let token = bus.subscribe(Decided.self) { e in await collector.add("third \(e.id)") }
        bus.subscribe(Other.self) { _ in await collector.add("other") }
        await bus.publish(Decided(id: 7))
        #expect(await collector.seen == ["first 7", "third 7"])
        bus.unsubscribe(token)
        await bus.publish(Decided(id: 8))
        #expect(await collector.seen == ["first 7", "third 7", "first 8"])
        #expect(bus.subscriberCount(Decided.self) == 2)
    }
}

@Suite struct StreamControlTests {
    @Test("a control event reads back as the change it carries, for the hubs only",
          arguments: [StreamControl.accountDeactivated(userID: 4), .roleChanged(userID: 5), .sessionsRevoked(userID: 6, scope: .all),
                      .sessionsRevoked(userID: 6, scope: .allBut(9)), .sessionsRevoked(userID: 6, scope: .only(9))])
    func roundTrip(_ control: StreamControl) {
        #expect(control.event.audience == .hubs)
        #expect(StreamControl(control.event) == control)
    }

    @Test("an event for clients is no control event, whatever its type")
    func clientEventsAreNotControl() {
        let forged = StreamControl.accountDeactivated(userID: 1).event
        #expect(StreamControl(RealtimeEvent(type: forged.type, audience: .everyone, data: forged.data)) == nil)
    }
}

@Suite struct OpenAPITests {
    @Test func documentsRoutesWithParametersBodiesAndErrors() throws {
        let router = Router()
        let api = router.group("/api/v1")
        api.get("/users/{id}", doc: RouteDoc(summary: "One user", tags: ["accounts"], authenticated: true)) { _, _ in .noContent() }
        api.post("/users", doc: RouteDoc(summary: "Create", requestSchema: ["type": "object"],
                                         responses: [ResponseDoc(status: 201, description: "Created")])) { _, _ in .noContent() }
        api.get("/hidden") { _, _ in .noContent() }
        api.get("/search", doc: RouteDoc(summary: "Search", query: [QueryDoc("q", "words"), QueryDoc("limit", "how many", schema: ["type": "integer"])])) { _, _ in .noContent() }
        let doc = OpenAPIDocument.build(routes: router.routes, title: "t", version: "1", description: "d")
        #expect(doc["openapi"] == "3.0.3")
        let paths = try #require(doc["paths"]?.objectValue)
        #expect(paths.map(\.0) == ["/api/v1/users/{id}", "/api/v1/users", "/api/v1/search"])
        let search = try #require(doc["paths"]?["/api/v1/search"]?["get"]?["parameters"]?.arrayValue)
        #expect(search.map { $0["name"] } == ["q", "limit"])
        #expect(search.allSatisfy { $0["in"] == "query" && $0["required"] == false })
        #expect(search.last?["schema"]?["type"] == "integer")
        let getUser = try #require(doc["paths"]?["/api/v1/users/{id}"]?["get"])
        #expect(getUser["operationId"] == "getUsersById")
        #expect(getUser["parameters"]?.arrayValue?.first?["name"] == "id")
        #expect(getUser["security"] != nil)
        #expect(getUser["responses"]?["default"] != nil)
        let post = try #require(doc["paths"]?["/api/v1/users"]?["post"])
        #expect(post["requestBody"]?["content"]?["application/json"] != nil)
        #expect(post["responses"]?["201"]?["description"] == "Created")
    }
}

/// Records the order services start and stop in; each runs until cancelled.
struct Recorder: ModuleService {
    let name: String
    let log: Collector

    func run() async throws {
        await log.add("start \(name)")
        // Wait for cancellation (shutdown) without polling.
        let stream = AsyncStream<Never> { _ in }
        for await _ in stream {}
        await log.add("stop \(name)")
    }
}

@Suite struct ServiceLifecycleTests {
    @Test func servicesStopInReverseOrderEachWaitedFor() async throws {
        let log = Collector()
        let group = ServiceGroup(logger: Logger(label: "test"))
        group.start([Recorder(name: "a", log: log), Recorder(name: "b", log: log), Recorder(name: "c", log: log)])
        #expect(group.names == ["a", "b", "c"])
        try #require(await eventually { await log.seen.count == 3 })
        await group.stop()
        let seen = await log.seen
        #expect(Set(seen.prefix(3)) == ["start a", "start b", "start c"])
        #expect(Array(seen.dropFirst(3)) == ["stop c", "stop b", "stop a"], "stop waits for each, last started first")
        #expect(group.names.isEmpty)
    }

    @Test func aPeriodicJobRunsRepeatedlySurvivesFailuresAndStopsWhenCancelled() async throws {
        struct Flaky: Error {}
        let log = Collector()
        let job = PeriodicJob(name: "tick", every: .milliseconds(5), logger: Logger(label: "test")) {
            await log.add("round")
            if await log.seen.count == 2 { throw Flaky() }
        }
        let group = ServiceGroup(logger: Logger(label: "test"))
        group.start([job])
        try #require(await eventually { await log.seen.count >= 4 })
        await group.stop()
        let after = await log.seen.count
        #expect(after >= 4, "the round after a failure still ran")
        // Stopped for good: the group awaited the job's return, so nothing may record any more.
        await Task.yield()
        #expect(await log.seen.count == after)
    }
}

enum Tag: ContextKey { typealias Value = Int }
enum Mark: ContextKey { typealias Value = Int }
enum Note: ContextKey { typealias Value = Int }
enum Flag: ContextKey { typealias Value = Int }

@Suite struct RequestContextTests {
    @Test func childTasksShareOneContextSafely() async throws {
        let context = RequestContext(requestID: "r1", logger: Logger(label: "test"))
        await withTaskGroup(of: Void.self) { group in
            for i in 0..<200 {
                group.addTask {
                    // Four keys written at once: a write that put back a stale copy of the
                    // values would lose another key's value, a key mix-up would misplace it.
                    switch i % 4 {
                    case 0: context[Tag.self] = i
                    case 1: context[Mark.self] = i
                    case 2: context[Note.self] = i
                    default: context[Flag.self] = i
                    }
                    context.logger = Logger(label: "child-\(i)")
                    _ = context.logger
                }
            }
        }
        // Every key holds a value one of its own writers wrote.
        #expect(context[Tag.self].map { $0 % 4 } == 0)
        #expect(context[Mark.self].map { $0 % 4 } == 1)
        #expect(context[Note.self].map { $0 % 4 } == 2)
        #expect(context[Flag.self].map { $0 % 4 } == 3)
        // One context, shared: the children's logger is the parent's, not the one it began with.
        #expect(context.logger.label.hasPrefix("child-"))
    }
}

@Suite struct FrozenRouterTests {
    @Test func theTableDispatchesWhatWasRegisteredBeforeBuild() async {
        let router = Router()
        router.group("/api").get("/users/{id}") { request, _ in .text(request.parameters["id"] ?? "") }
        let table = router.build()
        #expect(String(decoding: await table.respond(to: Request(method: .GET, target: "/api/users/7")).body, as: UTF8.self) == "7")
        #expect(await table.respond(to: Request(method: .POST, target: "/api/users/7")).status == 405)
        #expect(router.routes.count == 1)
    }

    @Test func addingARouteAfterTheRoutesAreFrozenStopsTheProcess() async {
        await #expect(processExitsWith: .failure) {
            let router = Router()
            _ = router.build()
            router.group("").get("/late") { _, _ in .noContent() }
        }
    }
}

@Suite struct JournalLookTests {
    /// A reader that looked at up to `limit` events stops when the ids it passed could not have
    /// held `limit` of them (the look reached the end), and looks again only when they could.
    @Test(arguments: [
        (after: Int64(100), scannedTo: Int64(100), limit: 10, more: false),  // nothing new
        (after: 100, scannedTo: 105, limit: 10, more: false),                // 5 ids hold at most 5 events
        (after: 100, scannedTo: 109, limit: 10, more: false),                // 9 ids: one short of a full look
        (after: 100, scannedTo: 110, limit: 10, more: true),                 // could be exactly a full look
        (after: 0, scannedTo: 5_000, limit: 512, more: true),                // gaps: perhaps full, look again
    ])
    func aShortLookIsTheEnd(after: Int64, scannedTo: Int64, limit: Int, more: Bool) {
        #expect(journalLookMayHaveMore(after: after, scannedTo: scannedTo, limit: limit) == more)
    }
}

@Suite struct LookSpacingTests {
    @Test("the first look is at once; the next waits until the interval has passed since it; a wait cancelled meanwhile throws")
    func spacesLooks() async throws {
        var spacing = LookSpacing(.milliseconds(120))
        let clock = ContinuousClock()
        try await spacing.wait()
        let first = clock.now
        try await spacing.wait()
        #expect(clock.now - first >= .milliseconds(120), "the second look came \(clock.now - first) after the first")
        // The next one is due 120 ms after that: cancelled before, it throws rather than look.
        let waiting = Task { [spacing] in
            var copy = spacing
            try await copy.wait()
        }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
