import SGEMApp
import SGEMCore
@testable import SGEMPush
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Push across instances", .enabled(if: TestBackend.current == .postgresql,
                                         "two instances share a PostgreSQL database: runs in the PostgreSQL pass (SGEM_TEST_BACKEND=postgresql)"))
struct PushAcrossInstancesTests {
    @Test("two servers on one database: the first to start pushes, the other waits; when the first stops, the other leads within a poll and pushes what comes next")
    func takeoverWhenTheLeaderStops() async throws {
        let stub = try PushServiceStub()
        defer { stub.stop() }
        let o = try await Office.start(["ana", "bob"])
        defer { o.dir.cleanup() }
        let ana = try await PushDeliveryTests.subscribe(o, "ana", stub)
        let (second, secondDir) = try await o.secondInstance()
        defer { secondDir.cleanup() }
        let workers = [StoreLock("worker:push"), StoreLock("worker:translation.chats")]
        for lock in workers {
            #expect(o.store.leadership(lock).isHeld, "\(lock): the first server leads")
            #expect(!second.store.leadership(lock).isHeld, "\(lock): the second waits")
        }
        let direct = try await o.expect(201, "POST", "/chats/direct", as: "bob", ["userId": .number(Double(o.userID("ana")))])
        try await PushDeliveryTests.send(o, direct, "Before", as: "bob")
        #expect(try await eventually { stub.requests(to: "ana").count == 1 })

        // The first server goes away: its session ends, its locks free.
        await o.running.stop()
        // Only the second server's leadership poll takes them (nothing tells it the locks freed);
        // within how many polls is LeadershipTests' to count.
        #expect(try await eventually { workers.allSatisfy { second.store.leadership($0).isHeld } })

        let chat = Int(direct["id"]?.numberValue ?? 0)
        let sent = try await httpCall(port: second.port, "POST", "/api/v1/chats/\(chat)/messages", token: o["bob"].token, json: ["body": "After"])
        #expect(sent.status == 201)
        #expect(try await eventually { stub.requests(to: "ana").count == 2 })
        #expect(try ana.open(stub.requests(to: "ana")[1].body)["body"]?.stringValue == "After")
        await second.stop()
    }
}
