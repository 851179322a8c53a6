#if canImport(Glibc)
import Glibc
#endif
import SGEMStore
import SGEMSupport
import SGEMTestSupport
import Testing

/// Three real `sgem-server serve` processes on one PostgreSQL database, as a company runs them
/// behind a load balancer: realtime streams and writers on each, an instance killed mid-write, a
/// doorbell's `LISTEN` connection cut, and the first-run link and login throttle shared. Runs in
/// the SQLite pass of `make test` with its throwaway PostgreSQL (several instances need
/// PostgreSQL: on SQLite one server owns the data directory).
@Suite(.serialized, .enabled(if: testDatabaseURL != nil, "several instances need PostgreSQL (SGEM_TEST_DATABASE_URL)"))
struct InstancesTests {
    @Test("started together on an empty database, three instances print one setup link; wrong passwords on any of them count towards one lock")
    func oneSetupLinkAndOneLoginThrottle() async throws {
        let instances = try Instances()
        defer { instances.close() }
        try instances.start(3)
        let tokens = try instances.banners.enumerated().map { i, banner in
            let marker = "http://127.0.0.1:\(instances.ports[i])/setup#token="
            let line = try #require(banner.split(separator: "\n").first { $0.contains(marker) }, "instance \(i) printed no link: \(banner)")
            return String(line[line.firstRange(of: marker)!.upperBound...].prefix { $0 != " " })
        }
        #expect(tokens[0].count == 43)
        #expect(Set(tokens).count == 1, "one link for the company, whichever instance printed it: \(tokens)")

        let setup: JSONValue = ["token": .string(tokens[0]), "username": "owner", "email": "owner@example.com",
                                "password": "the owner's first password", "displayName": "The Owner"]
        let created = try await httpCall(port: instances.ports[1], "POST", "/api/v1/auth/setup", json: setup)
        #expect(created.status == 201, "\(created.text)")
        for port in [instances.ports[0], instances.ports[2]] {
            #expect(try await httpCall(port: port, "GET", "/api/v1/auth/setup").json()["open"] == false, "the link is spent everywhere")
            let again = try await httpCall(port: port, "POST", "/api/v1/auth/setup", json: setup)
            #expect(again.status == 403)
            #expect(again.errorCode == "setup_closed")
        }

        // Five failures (the threshold) spread over the three instances: none saw more than two.
        let wrong: JSONValue = ["login": "owner", "password": "not the owner's password"]
        for attempt in 0..<5 {
            let answer = try await httpCall(port: instances.ports[attempt % 3], "POST", "/api/v1/auth/login", json: wrong)
            #expect(answer.status == 401, "attempt \(attempt) on instance \(attempt % 3): \(answer.text)")
        }
        for port in instances.ports {
            let locked = try await httpCall(port: port, "POST", "/api/v1/auth/login",
                                            json: ["login": "owner", "password": "the owner's first password"])
            #expect(locked.status == 429, "locked on every instance, the right password too: \(locked.text)")
            #expect(locked.errorCode == "rate_limited")
            #expect(locked.header("Retry-After") != nil)
        }
        #expect(try instances.stop() == [0, 0, 0])
    }

    @Test("writers on three instances, two streams on each: every stream receives every message once, in id order")
    func everyEventReachesEveryStreamOnceInOrder() async throws {
        let instances = try Instances()
        defer { instances.close() }
        let company = try await InstancesCompany.start(instances, people: ["ana", "bob", "cai", "dee", "eva", "fay"])
        var opened: [StreamRecorder] = []
        defer { for stream in opened { stream.stop() } }
        for (n, name) in ["ana", "bob", "cai", "dee", "eva", "fay"].enumerated() {
            opened.append(try await StreamRecorder.open("\(name) on \(n % 3)", port: instances.ports[n % 3], token: company[name]))
        }
        let streams = opened

        let pool = BlockingPool(name: "test-writers", threads: 6)
        defer { pool.shutdown() }
        let perWriter = 25
        let writers = (0..<6).map { n in
            MessageWriter("writer \(n)", port: instances.ports[n % 3], token: company[["ana", "bob", "cai"][n % 3]],
                          chatID: company.chatID, limit: perWriter, on: pool)
        }
        #expect(await eventually(60) { writers.allSatisfy(\.isDone) })
        for writer in writers { #expect(writer.failures.isEmpty, "\(writer.label): \(writer.failures)") }
        let acknowledged = Set(writers.flatMap(\.acknowledged))
        #expect(acknowledged.count == 6 * perWriter)

        #expect(await eventually(30) { streams.allSatisfy { $0.messages.count >= acknowledged.count } },
                "\(streams.map { "\($0.label): \($0.messages.count)" })")
        let reference = streams[0].messages.map(\.id)
        for stream in streams {
            #expect(stream.problems.isEmpty, "\(stream.label): \(stream.problems)")
            #expect(orderProblems(stream.frames).isEmpty, "\(stream.label): \(orderProblems(stream.frames).prefix(5))")
            let messages = stream.messages
            #expect(messages.count == acknowledged.count, "\(stream.label): \(messages.count) message events for \(acknowledged.count) messages")
            #expect(Set(messages.compactMap(\.messageID)) == acknowledged, "\(stream.label): the acknowledged messages, each once")
            #expect(messages.map(\.id) == reference, "\(stream.label): the same events in the same order as \(streams[0].label)")
        }
        for stream in streams { stream.stop() }
        #expect(try instances.stop() == [0, 0, 0])
    }

    @Test("kill -9 of one instance mid-write with streams attached: every acknowledged write is stored; its clients resume on the others with since and get exactly what they missed")
    func killedInstanceLosesNothingAndItsClientsResumeElsewhere() async throws {
        let instances = try Instances()
        defer { instances.close() }
        let people = ["ana", "bob", "cai", "dee", "eva", "fay"]
        let company = try await InstancesCompany.start(instances, people: people)
        // Streams ana and dee on instance 0 (ana's is the reference), bob and eva on 1, cai and fay on 2: the one killed.
        var opened: [StreamRecorder] = []
        defer { for stream in opened { stream.stop() } }
        for (n, name) in people.enumerated() {
            opened.append(try await StreamRecorder.open("\(name) on \(n % 3)", port: instances.ports[n % 3], token: company[name]))
        }
        let streams = opened
        let doomed = [streams[2], streams[5]]

        let pool = BlockingPool(name: "test-writers", threads: 6)
        defer { pool.shutdown() }
        let writers = (0..<6).map { n in
            MessageWriter("writer \(n)", port: instances.ports[n % 3], token: company[people[n % 3]], chatID: company.chatID, on: pool)
        }
        defer { for writer in writers { writer.stop() } }
        let onDoomed = [writers[2], writers[5]]
        let acknowledged: @Sendable () -> Int = { writers.reduce(0) { $0 + $1.acknowledged.count } }
        #expect(await eventually(60) { acknowledged() >= 60 && onDoomed.allSatisfy { $0.acknowledged.count >= 10 } })

        #expect(try instances.kill(2) == 128 + SIGKILL)
        #expect(await eventually(20) { doomed.allSatisfy(\.hasEnded) }, "the killed instance's streams end")
        #expect(await eventually(20) { onDoomed.allSatisfy(\.isDone) })
        // Writes go on through the survivors while the killed instance's clients are away.
        let atKill = acknowledged()
        #expect(await eventually(60) { acknowledged() >= atKill + 40 })

        // Each client resumes on another instance from the last event it saw.
        var reopened: [StreamRecorder] = []
        defer { for stream in reopened { stream.stop() } }
        for (n, stream) in doomed.enumerated() {
            let last = try #require(stream.lastID, "\(stream.label) saw events before the kill")
            let name = n == 0 ? "cai" : "fay"
            reopened.append(try await StreamRecorder.open("\(name) resumed on \(n)", port: instances.ports[n], token: company[name], since: last))
        }
        let resumed = reopened
        // The reference stream has every message acknowledged so far (on a busy machine it may
        // trail the 201s): what it has seen then was written while the killed one's clients were away.
        let soFar = Set(writers.flatMap(\.acknowledged))
        #expect(await eventually(30) { Set(streams[0].messages.compactMap(\.messageID)).isSuperset(of: soFar) })
        let resumedAfter = try #require(streams[0].lastID)
        let atResume = acknowledged()
        #expect(await eventually(60) { acknowledged() >= atResume + 20 })
        for writer in writers { writer.stop() }
        #expect(await eventually(30) { writers.allSatisfy(\.isDone) },
                "\(writers.filter { !$0.isDone }.map { "\($0.label): \($0.acknowledged.count) acknowledged, \($0.failures)" })")

        for writer in writers where !onDoomed.contains(where: { $0 === writer }) {
            #expect(writer.failures.isEmpty, "\(writer.label) on a survivor: \(writer.failures)")
        }
        // Read back through an instance that lived: every 201 is there.
        let stored = Set(try await company.storedMessageIDs(port: instances.ports[1]))
        let acknowledgedIDs = Set(writers.flatMap(\.acknowledged))
        #expect(acknowledgedIDs.subtracting(stored).isEmpty, "acknowledged but lost: \(acknowledgedIDs.subtracting(stored).sorted().prefix(10))")
        // At most the writes in flight at the kill were stored without their 201.
        #expect(stored.count <= acknowledgedIDs.count + onDoomed.count)

        let survivors = [streams[0], streams[1], streams[3], streams[4]]
        let received: @Sendable () -> [(String, Set<Int64>)] = {
            survivors.map { ($0.label, Set($0.messages.compactMap(\.messageID))) }
                + zip(doomed, resumed).map { ($1.label, Set(($0.messages + $1.messages).compactMap(\.messageID))) }
        }
        #expect(await eventually(30) { received().allSatisfy { $0.1.isSuperset(of: stored) } },
                "\(received().map { "\($0.0): \($0.1.count)" }) of \(stored.count)")
        let reference = streams[0].messages.map(\.id)
        let missing = stored.subtracting(streams[0].messages.compactMap(\.messageID))
        if !missing.isEmpty {
            Issue.record("stored but never delivered: \(try journalRows(instances, messages: missing, writers: writers, frames: streams[0].frames))")
        }
        for stream in survivors + resumed + doomed {
            #expect(stream.problems.isEmpty, "\(stream.label): \(stream.problems)")
        }
        for stream in survivors {
            #expect(orderProblems(stream.frames).isEmpty, "\(stream.label): \(orderProblems(stream.frames).prefix(5))")
            #expect(stream.messages.map(\.id) == reference, "\(stream.label): the same events in the same order as the reference")
        }
        for writer in onDoomed { #expect(!writer.failures.isEmpty, "\(writer.label) wrote until the kill stopped it") }
        for (before, after) in zip(doomed, resumed) {
            let joined = before.frames + after.frames
            let replayed = after.messages.filter { $0.id <= resumedAfter }.count
            #expect(!before.messages.isEmpty)
            #expect(replayed >= 40, "\(after.label): the replay holds the messages written while it was away")
            #expect(orderProblems(joined).isEmpty, "\(after.label): no event twice, none out of order: \(orderProblems(joined).prefix(5))")
            #expect(joined.filter { $0.messageID != nil }.map(\.id) == reference,
                    "\(after.label): before the kill and after resuming, exactly the reference's events (no gap, no duplicate)")
        }
        for stream in survivors + resumed { stream.stop() }
        let exits = try instances.stop()
        #expect(exits[0] == 0 && exits[1] == 0)
    }

    @Test("the doorbell's LISTEN connection terminated and kept from coming back: that instance's streams still get each event by its check of the journal; once it listens again, by the doorbell")
    func aTerminatedListenConnectionDelaysDeliveryByAPollAtMost() async throws {
        let instances = try Instances()
        defer { instances.close() }
        let company = try await InstancesCompany.start(instances, people: ["ana", "bob"])
        let stream = try await StreamRecorder.open("bob on 2", port: instances.ports[2], token: company["bob"])
        defer { stream.stop() }
        let sender = instances.ports[0]
        let port2 = instances.ports[2]
        /// Sends one message through instance 0 and waits for it on instance 2's stream.
        func deliver(_ n: Int) async throws {
            let r = try await httpCall(port: sender, "POST", "/api/v1/chats/\(company.chatID)/messages", token: company["ana"],
                                       json: ["body": .string("bell \(n)"), "clientId": .string("bell-\(n)")])
            guard r.status == 201, let id = try r.json()["id"]?.numberValue.map({ Int64($0) }) else { throw TestFailure("send \(n): \(r.text)") }
            guard await eventually(20, { stream.messages.contains { $0.messageID == id } }) else { throw TestFailure("message \(n) never arrived") }
        }
        /// The rings instance 2's doorbell has heard.
        func heard() -> Double { (try? metricValue("sgem_store_doorbell_rings_received_total", port: port2)) ?? 0 }
        // Through the doorbell: instance 2 hears instance 0's commit (how soon is for
        // scripts/bench/instances.sh to measure: its fan-out p99 is from the 201 to each stream).
        let rungBefore = heard()
        try await deliver(0)
        #expect(await eventually(20) { heard() > rungBefore }, "instance 2 heard the commit on its doorbell")

        // The doorbell's session: the one of instance 2's sessions whose last statement was its
        // LISTEN, or a NOTIFY it sent since. Asked from the cluster's own database, which stays open.
        let admin = try PostgresConnection(url: try #require(testDatabaseURL))
        let database = instances.dir.postgresDatabaseName
        func listeners() throws -> [Int] {
            try admin.query("""
                SELECT pid FROM pg_stat_activity
                WHERE datname = $1 AND application_name = $2 AND (query LIKE 'LISTEN %' OR query LIKE 'SELECT pg_notify(%')
                """, [.text(database), .text(instances.applicationName(2))]).compactMap { $0.int("pid") }
        }
        let listening = try listeners()
        #expect(listening.count == 1, "instance 2's doorbell is one session listening: \(listening)")
        let listener = try #require(listening.first)

        // No new session may open (superusers included) while the listener is cut: every open
        // session — writers, readers — carries on, but the doorbell cannot listen again, so only
        // instance 2's check of the journal every 250 ms can bring it what instance 0 commits.
        _ = try admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS false")
        defer { _ = try? admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS true") }
        #expect(try admin.query("SELECT pg_terminate_backend($1::int, 5000) AS done", [.integer(Int64(listener))]).first?.bool("done") == true)
        for n in 1...4 { try await deliver(n) }
        #expect(try listeners().isEmpty, "instance 2 did not listen meanwhile: the journal check alone delivered")

        _ = try admin.execute("ALTER DATABASE \(database) ALLOW_CONNECTIONS true")
        // Its back-off between attempts is at most 2 s.
        #expect(await eventually(20) { (try? metricValue("sgem_store_doorbell_reconnects_total", port: port2)) == 1 })
        let again = try listeners()
        #expect(again.count == 1 && again.first != listener, "instance 2 listens again on a new session: \(again)")
        let relistenedBefore = heard()
        try await deliver(5)
        #expect(await eventually(20) { heard() > relistenedBefore }, "listening again, instance 2 heard the commit on its doorbell")

        #expect(stream.problems.isEmpty, "\(stream.problems)")
        #expect(orderProblems(stream.frames).isEmpty)
        #expect(stream.messages.count == 6)
        stream.stop()
        #expect(try instances.stop() == [0, 0, 0])
    }
}

/// The journal's rows for `messages` and the rows around them, the writer that was answered for
/// each, and the frames a stream got around them: what a failure needs to be understood.
private func journalRows(_ instances: Instances, messages: Set<Int64>, writers: [MessageWriter], frames: [StreamRecorder.Frame]) throws -> String {
    let connection = try PostgresConnection(url: instances.databaseURL)
    var lines: [String] = []
    for message in messages.sorted() {
        let writer = writers.first { $0.acknowledged.contains(message) }?.label ?? "no 201"
        let rows = try connection.query("SELECT id, type, created_at FROM system_events WHERE subject = $1", [.text("message:\(message)")])
        let eventIDs = rows.compactMap { $0.int64("id") }
        lines.append("message \(message) (\(writer)): events \(eventIDs) \(rows.compactMap { $0.int64("created_at") })")
        for event in eventIDs {
            let around = try connection.query("SELECT id, type, created_at, subject FROM system_events WHERE id BETWEEN $1 AND $2 ORDER BY id",
                                              [.integer(event - 3), .integer(event + 3)])
            lines += around.map { "  \($0.int64("id") ?? 0) \($0.string("type") ?? "") \($0.int64("created_at") ?? 0) \($0.string("subject") ?? "")" }
            lines.append("  frames near: \(frames.filter { abs($0.id - event) <= 5 }.map(\.id))")
        }
    }
    return lines.joined(separator: "\n")
}
