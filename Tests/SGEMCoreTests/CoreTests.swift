#if canImport(Glibc)
import Glibc
#endif
import Testing
import SGEMHTTP
import SGEMShell
import SGEMSupport
@testable import SGEMCore

@Suite struct ConfigurationTests {
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
        let flags = try ParsedArguments(["--config", file, "--port", "9000"], specs: Settings.optionSpecs)
        let c = try Configuration(flags: flags, environment: ["SGEM_PORT": "8000", "SGEM_HOST": "127.0.0.2", "SGEM_BENCH_MODULE": "yes"])
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
    ])
    func rejectsBadValuesNamingTheirSource(_ args: [String], _ env: [String: String], _ message: String) throws {
        let flags = try ParsedArguments(args, specs: Settings.optionSpecs)
        #expect(throws: CommandError.usage(message)) { try Configuration(flags: flags, environment: env) }
    }

    @Test func rejectsUnknownFileKeysAndMissingFiles() throws {
        let file = tempFile("colour = blue\n")
        defer { unlink(file) }
        let flags = try ParsedArguments(["--config", file], specs: Settings.optionSpecs)
        #expect(throws: CommandError.usage("\(file): unknown setting 'colour'")) { try Configuration(flags: flags, environment: [:]) }
        let missing = try ParsedArguments(["--config", "/nonexistent/x.conf"], specs: Settings.optionSpecs)
        #expect(throws: CommandError.usage("cannot read config file '/nonexistent/x.conf'")) { try Configuration(flags: missing, environment: [:]) }
    }

    @Test func everySettingHasEnvironmentAndFileNames() {
        let s = Settings.named("store-write-batch")!
        #expect(s.environmentVariable == "SGEM_STORE_WRITE_BATCH")
        #expect(s.fileKey == "store_write_batch")
        #expect(Set(Settings.all.map(\.name)).count == Settings.all.count)
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

@Suite struct OpenAPITests {
    @Test func documentsRoutesWithParametersBodiesAndErrors() throws {
        let router = Router()
        let api = router.group("/api/v1")
        api.get("/users/{id}", doc: RouteDoc(summary: "One user", tags: ["accounts"], authenticated: true)) { _, _ in .noContent() }
        api.post("/users", doc: RouteDoc(summary: "Create", requestSchema: ["type": "object"],
                                         responses: [ResponseDoc(status: 201, description: "Created")])) { _, _ in .noContent() }
        api.get("/hidden") { _, _ in .noContent() }
        let doc = OpenAPIDocument.build(routes: router.routes, title: "t", version: "1", description: "d")
        #expect(doc["openapi"] == "3.0.3")
        let paths = try #require(doc["paths"]?.objectValue)
        #expect(paths.map(\.0) == ["/api/v1/users/{id}", "/api/v1/users"])
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
