import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

@Suite("Realtime stream", .serialized)
struct RealtimeStreamTests {
    @Test("each event reaches exactly the people its audience and the rights of now allow, as one frame")
    func deliveryToTheRightPeople() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let bob = try await s.createUser("bob", as: boss)
            s.chats.set(7, members: [ana.userID])
            let bossStream = try await s.stream(boss)
            let anaStream = try await s.stream(ana)
            let bobStream = try await s.stream(bob)

            let first = try await s.append("test.one", to: .everyone, n: 1)
            try await s.append("test.one", to: .user(ana.userID), n: 2)
            try await s.append("test.one", to: .admins, n: 3)
            try await s.append("message.created", to: .chat(7), n: 4)
            try await s.append("test.one", to: .users([bob.userID]), n: 5)
            try await s.append("test.one", to: .chat(8), n: 6)
            try await s.append("test.mark", to: .everyone)

            #expect(try await bossStream.numbers(until: "test.mark") == [1, 3])
            #expect(try await anaStream.numbers(until: "test.mark") == [1, 2, 4])
            #expect(try await bobStream.numbers(until: "test.mark") == [1, 5])

            // The frame: {"id", "type", "data"} with the journal's id.
            try await s.append("test.shape", to: .user(bob.userID), n: 9)
            let frame = try await bobStream.event()
            #expect(frame["type"]?.stringValue == "test.shape")
            #expect(frame["data"]?["n"]?.numberValue == 9)
            #expect(Int64(frame["id"]?.numberValue ?? 0) == first + 7)
        }
    }

    @Test("events come in id order, each once, across many writes")
    func order() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let stream = try await s.stream(boss)
            for batch in 0..<10 {
                try await s.append((0..<30).map { i in RealtimeEvent(type: "test.n", audience: .everyone, data: ["n": .number(Double(batch * 30 + i))]) })
            }
            var ids: [Int64] = []
            var numbers: [Int] = []
            for _ in 0..<300 {
                let e = try await stream.event()
                ids.append(Int64(e["id"]?.numberValue ?? 0))
                numbers.append(Int(e["data"]?["n"]?.numberValue ?? -1))
            }
            #expect(numbers == Array(0..<300))
            #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 + 1 == $1 })
        }
    }

    @Test("a client back after a disconnect with since gets exactly what it missed, then live; never a resync")
    func resumeAfterDisconnect() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let first = try await s.stream(ana)
            try await s.append("test.n", to: .everyone, n: 1)
            try await s.append("test.n", to: .everyone, n: 2)
            var last: Int64 = 0
            for _ in 0..<2 { last = Int64(try await first.event()["id"]?.numberValue ?? 0) }
            first.close()
            try await s.append("test.n", to: .everyone, n: 3)
            try await s.append("test.n", to: .user(boss.userID), n: 99)
            try await s.append("test.n", to: .user(ana.userID), n: 4)

            let again = try await s.stream(ana, since: last)
            try await s.append("test.n", to: .everyone, n: 5)
            try await s.append("test.mark", to: .everyone)
            #expect(try await again.numbers(until: "test.mark") == [3, 4, 5])
        }
    }

    @Test("replay and live meet without a gap or a duplicate while events keep coming")
    func switchOverUnderLoad() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            try await s.append((0..<400).map { RealtimeEvent(type: "test.n", audience: .everyone, data: ["n": .number(Double($0))]) })
            let writer = Task {
                for i in 400..<600 { try await s.append("test.n", to: .everyone, n: i) }
                try await s.append("test.mark", to: .everyone)
            }
            let stream = try await s.stream(boss, since: 0)
            let seen = try await stream.numbers(until: "test.mark")
            try await writer.value
            #expect(seen == Array(0..<600))
        }
    }

    @Test("a client resumes across a server restart on the same data directory")
    func resumeAfterRestart() async throws {
        let s = try await RealtimeServer.start()
        let boss = try await s.login()
        let stream = try await s.stream(boss)
        try await s.append("test.n", to: .everyone, n: 1)
        let last = Int64(try await stream.event()["id"]?.numberValue ?? 0)
        try await s.append("test.n", to: .everyone, n: 2)
        try await s.append("test.n", to: .admins, n: 3)
        stream.close()
        await s.stop(keeping: true)

        let restarted = try await RealtimeServer.start(on: s.dir)
        defer { Task { await restarted.stop() } }
        let again = try await restarted.stream(try await restarted.login(), since: last)
        try await restarted.append("test.n", to: .everyone, n: 4)
        try await restarted.append("test.mark", to: .everyone)
        #expect(try await again.numbers(until: "test.mark") == [2, 3, 4])
    }

    @Test("since older than the retention window, or ahead of every id, gets one resync, then live")
    func resyncWhenTooOld() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let old = try await s.append("test.n", to: .everyone, n: 1)
            try await s.append("test.n", to: .everyone, n: 2)
            let removed = try await s.journal().removeEvents(recordedBefore: Timestamp(milliseconds: Timestamp.now().milliseconds + 1))
            #expect(removed == 2)
            for since in [old, old + 1000] {
                let stream = try await s.stream(boss, since: since)
                #expect(try await stream.event()["type"]?.stringValue == "resync")
                try await s.append("test.mark", to: .everyone)
                #expect(try await stream.numbers(until: "test.mark") == [])
            }
            // Caught up at the newest id: a plain replay of nothing, no resync.
            let current = try await s.journal().lastEventID()
            let stream = try await s.stream(boss, since: current)
            try await s.append("test.mark", to: .everyone)
            #expect(try await stream.numbers(until: "test.mark") == [])
        }
    }

    @Test("a removed member gets member.removed and nothing of that chat after it, live and in replay")
    func removedMemberStopsReceiving() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let bob = try await s.createUser("bob", as: boss)
            s.chats.set(7, members: [ana.userID, bob.userID])
            let anaStream = try await s.stream(ana)
            let bobStream = try await s.stream(bob)
            try await s.append("message.created", to: .chat(7), n: 1)
            #expect(try await anaStream.event()["data"]?["n"]?.numberValue == 1)
            #expect(try await bobStream.event()["data"]?["n"]?.numberValue == 1)

            // Messaging removes ana: membership changes, then the event is recorded.
            s.chats.set(7, members: [bob.userID])
            try await s.append("member.removed", to: .users([bob.userID, ana.userID]), n: 2,
                               [("chatId", .number(7)), ("userId", .number(Double(ana.userID)))])
            try await s.append("message.created", to: .chat(7), n: 3)
            try await s.append("test.mark", to: .everyone)
            #expect(try await anaStream.numbers(until: "test.mark") == [2])
            #expect(try await bobStream.numbers(until: "test.mark") == [2, 3])

            // Replay from the start: the chat is skipped entirely, member.removed is there.
            let replay = try await s.stream(ana, since: 0)
            try await s.append("test.mark", to: .everyone)
            #expect(try await replay.numbers(until: "test.mark") == [2])

            // A new member's sockets start getting the chat at member.added.
            let carl = try await s.createUser("carl", as: boss)
            let carlStream = try await s.stream(carl)
            try await s.append("message.created", to: .chat(7), n: 4)
            try await s.append("test.mark", to: .everyone)
            #expect(try await carlStream.numbers(until: "test.mark") == [])
            s.chats.set(7, members: [bob.userID, carl.userID])
            try await s.append("member.added", to: .chat(7), n: 5, [("chatId", .number(7)), ("userId", .number(Double(carl.userID)))])
            try await s.append("message.created", to: .chat(7), n: 6)
            try await s.append("test.mark", to: .everyone)
            #expect(try await carlStream.numbers(until: "test.mark") == [5, 6])
        }
    }

    @Test("a chat lookup that fails keeps that user from the chat's events, not the others from theirs")
    func failingLookupFailsClosed() async throws {
        try await RealtimeServer.with { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let bob = try await s.createUser("bob", as: boss)
            s.chats.set(7, members: [ana.userID, bob.userID])
            s.chats.failing.withLock { $0 = [ana.userID] }
            let anaStream = try await s.stream(ana)
            let bobStream = try await s.stream(bob)
            try await s.append("message.created", to: .chat(7), n: 1)
            try await s.append("test.n", to: .everyone, n: 2)
            try await s.append("test.mark", to: .everyone)
            #expect(try await anaStream.numbers(until: "test.mark") == [2])
            #expect(try await bobStream.numbers(until: "test.mark") == [1, 2])
            // Asked again at the next chat event once the lookup works.
            s.chats.failing.withLock { $0 = [] }
            try await s.append("message.created", to: .chat(7), n: 3)
            try await s.append("test.mark", to: .everyone)
            #expect(try await anaStream.numbers(until: "test.mark") == [3])
        }
    }

    @Test("deactivating an account closes its sockets at once; other people's stay open")
    func deactivationClosesSockets() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let anaStream = try await s.stream(ana)
            let bossStream = try await s.stream(boss)
            let r = try await s.call("PATCH", "/api/v1/admin/users/\(ana.userID)", token: boss.token, json: ["active": false])
            #expect(r.status == 200)
            #expect(try await anaStream.waitForClose() == 1008)
            try await s.append("test.mark", to: .everyone)
            #expect(try await bossStream.numbers(until: "test.mark") == [])
        }
    }

    @Test("logging out closes that session's sockets only; a password change closes the others")
    func revokedSessionsCloseSockets() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let laptop = try await s.login("ana", "password-of-ana")
            let phone = try await s.login("ana", "password-of-ana")
            let anaStream = try await s.stream(ana)
            let laptopStream = try await s.stream(laptop)
            let phoneStream = try await s.stream(phone)
            let out = try await s.call("POST", "/api/v1/auth/logout", token: laptop.token)
            #expect(out.status == 204)
            #expect(try await laptopStream.waitForClose() == 1008)
            try await s.append("test.mark", to: .everyone)
            #expect(try await phoneStream.numbers(until: "test.mark") == [])

            let changed = try await s.call("PUT", "/api/v1/me/password", token: ana.token,
                                           json: ["currentPassword": "password-of-ana", "newPassword": "a new password for ana"])
            #expect(changed.status == 204)
            #expect(try await phoneStream.waitForClose() == 1008)
            try await s.append("test.mark", to: .everyone)
            #expect(try await anaStream.numbers(until: "test.mark") == [])
        }
    }

    @Test("a stream resuming with since ahead of a hub that has not read the journal that far never gets those events again")
    func sinceAheadOfTheHub() async throws {
        try await RealtimeServer.with { s in
            let boss = try await s.login()
            let bob = try await s.createUser("bob", as: boss)
            // Written by another process: the hub reads it at its next look (up to a second), not at once.
            #expect(await sgem(s.dir, ["admin", "notices", "post", "--title", "From the shell", "--body-stdin"], input: ["Hello"]).code == 0)
            let since = try await s.journal().lastEventID()
            // Bob already has everything up to `since` (another tab, a reconnect).
            let stream = try await s.stream(bob, since: since)
            try await s.append("test.after", to: .everyone, n: 1)
            let first = try await stream.event()
            #expect(first["type"] == "test.after", "the event up to since came again: \(first.serialized())")
        }
    }

    @Test("a deactivation or password reset from the command line closes that user's streams within a second; nothing sent after it arrives")
    func commandLineDeactivationClosesAtOnce() async throws {
        // No recheck during the test: only the journal's control event can close the streams.
        try await RealtimeServer.with(["realtime-recheck-seconds": "3600"]) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let bob = try await s.createUser("bob", as: boss)
            let carl = try await s.createUser("carl", as: boss)
            let anaStream = try await s.stream(ana)
            let bobStream = try await s.stream(bob)
            let carlStream = try await s.stream(carl)
            let bossStream = try await s.stream(boss)

            // The verb runs on its own store, as another process would, and signals nothing here.
            #expect(await sgem(s.dir, ["admin", "deactivate", "ana"]).code == 0)
            // Closed at all: with the recheck an hour away, only the journal's control event can.
            #expect(try await anaStream.waitForClose() == 1008)

            // A message sent right after the deactivation (and signalled, so the hub reads both at once).
            #expect(await sgem(s.dir, ["admin", "deactivate", "bob"]).code == 0)
            try await s.append("test.mark", to: .everyone, n: 1)
            let (frames, code) = try await bobStream.framesUntilClose()
            #expect(code == 1008)
            #expect(frames.isEmpty, "after the deactivation bob got \(frames.map { $0.serialized() })")
            #expect(try await bossStream.numbers(until: "test.mark") == [])

            #expect(await sgem(s.dir, ["admin", "reset-password", "carl", "--random-password"]).code == 0)
            let (carlFrames, carlCode) = try await carlStream.framesUntilClose()
            #expect(carlCode == 1008)
            #expect(carlFrames.map { $0["type"] } == ["test.mark"], "carl got what came before the reset, and nothing of it")

            // Control events are never frames, live or replayed.
            let replay = try await s.stream(boss, since: 0)
            try await s.append("test.end", to: .everyone)
            #expect(try await replay.numbers(until: "test.end") == [1])
        }
    }

    @Test("an admin demoted, through the API or the command line, no longer receives admin events", arguments: [false, true])
    func demotedAdminStopsReceivingAdminEvents(fromCommandLine: Bool) async throws {
        try await RealtimeServer.with(["realtime-recheck-seconds": "3600"]) { s in
            let boss = try await s.login()
            let carl = try await s.createUser("carl", role: "admin", as: boss)
            let carlStream = try await s.stream(carl)
            try await s.append("admin.thing", to: .admins, n: 1)
            try await s.append("test.mark", to: .everyone)
            #expect(try await carlStream.numbers(until: "test.mark") == [1])

            if fromCommandLine {
                #expect(await sgem(s.dir, ["admin", "set-role", "carl", "employee"]).code == 0)
            } else {
                let r = try await s.call("PATCH", "/api/v1/admin/users/\(carl.userID)", token: boss.token, json: ["role": "employee"])
                #expect(r.status == 200)
            }
            // In one write right after the demotion, so the hub reads them in the same batch as it.
            try await s.append([RealtimeEvent(type: "admin.thing", audience: .admins, data: ["n": 2]),
                                RealtimeEvent(type: "test.mark", audience: .everyone, data: ["n": 0])])
            #expect(try await carlStream.numbers(until: "test.mark") == [])
        }
    }

    @Test("the bench-only event route records an event for fixed users that reaches them only")
    func benchEvents() async throws {
        try await RealtimeServer.with(["bench-module": "true"]) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let anaStream = try await s.stream(ana)
            let bossStream = try await s.stream(boss)
            let r = try await s.call("POST", "/api/v1/bench/events", token: boss.token,
                                     json: ["users": .array([.number(Double(ana.userID))]), "data": ["seq": 1]])
            #expect(r.status == 201)
            let e = try await anaStream.event()
            #expect(e["type"]?.stringValue == "bench.event")
            #expect(e["data"]?["seq"]?.numberValue == 1)
            #expect(Int64(e["id"]?.numberValue ?? 0) == Int64(try r.json()["id"]?.numberValue ?? -1))
            try await s.append("test.mark", to: .everyone)
            #expect(try await bossStream.numbers(until: "test.mark") == [])
            let bad = try await s.call("POST", "/api/v1/bench/events", token: boss.token, json: ["users": "everyone"])
            #expect(bad.status == 422)
        }
    }

    @Test("a cookie upgrade from a foreign Origin is refused with 403; from this server's origin it streams")
    func cookieUpgradeNeedsOwnOrigin() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let cookie = ("Cookie", "sgem_session=\(boss.token)")
            let foreign = try WebSocketClient(port: s.port)
            let refused = try await webSocketClientThreads.run { try foreign.upgrade("/api/v1/realtime", headers: [cookie, ("Origin", "https://evil.example")]) }
            #expect(refused.status == 403)
            #expect(refused.body.contains("csrf_failed"))
            let missing = try WebSocketClient(port: s.port)
            #expect(try await webSocketClientThreads.run { try missing.upgrade("/api/v1/realtime", headers: [cookie]) }.status == 403)

            let own = try WebSocketClient(port: s.port)
            let accepted = try await webSocketClientThreads.run { try own.upgrade("/api/v1/realtime", headers: [cookie, ("Origin", "http://127.0.0.1")]) }
            #expect(accepted.status == 101)
            try await own.ready()
            try await s.append("test.n", to: .everyone, n: 1)
            #expect(try await own.event()["data"]?["n"]?.numberValue == 1)
        }
    }

    @Test("no credentials, a bad token or a bad since never upgrade")
    func refusedUpgrades() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            let cases: [(String, Int, String)] = [
                ("/api/v1/realtime", 401, "unauthenticated"),
                ("/api/v1/realtime?token=not-a-token", 401, "session_expired"),
                ("/api/v1/realtime?token=\(boss.token)&since=-1", 422, "validation_failed"),
                ("/api/v1/realtime?token=\(boss.token)&since=abc", 422, "validation_failed"),
                ("/api/v1/realtime?token=\(boss.token)&since=99999999999999999999", 422, "validation_failed"),
            ]
            for (path, status, code) in cases {
                let client = try WebSocketClient(port: s.port)
                let answer = try await webSocketClientThreads.run { try client.upgrade(path) }
                #expect(answer.status == status, "\(path)")
                #expect(answer.body.contains(code), "\(path): \(answer.body)")
            }
            let plain = try await s.call("GET", "/api/v1/realtime", token: boss.token)
            #expect(plain.status == 400)
        }
    }

    @Test("client pings are answered: ping frames with pong frames, {type: ping} with {type: pong}")
    func heartbeats() async throws {
        try await RealtimeServer.with() { s in
            let stream = try await s.stream(try await s.login())
            try stream.ping([1, 2, 3])
            let pong = try await webSocketClientThreads.run { try stream.readFrame() }
            #expect(pong?.opcode == 0xA)
            #expect(pong?.payload == [1, 2, 3])
            try stream.send(text: #"{"type":"ping"}"#)
            #expect(try await stream.event()["type"]?.stringValue == "pong")
        }
    }

    @Test("a client that never reads is told to resync and closed (1013) while a reading one gets everything")
    func slowConsumerIsClosed() async throws {
        try await RealtimeServer.with(["ws-max-buffered-bytes": "262144"]) { s in
            let boss = try await s.login()
            let ana = try await s.createUser("ana", as: boss)
            let slow = try await s.stream(ana, receiveBuffer: 4096)
            let reader = try await s.stream(boss)
            let blob = JSONValue.string(String(repeating: "x", count: 8000))
            let slowBefore = s.metric("sgem_realtime_slow_closed_total")
            var sent = 0
            // Batches of 80 KB, each read by the reader before the next: the reader never falls
            // far behind; the one that never reads fills its buffers and is dropped.
            while s.metric("sgem_realtime_slow_closed_total") < slowBefore + 1 {
                guard sent < 4000 else { throw TestFailure("the slow client was never closed") }
                try await s.append((0..<10).map { i in RealtimeEvent(type: "test.n", audience: .everyone, data: ["n": .number(Double(sent + i)), "blob": blob]) })
                for i in 0..<10 { #expect(try await reader.event()["data"]?["n"]?.numberValue == Double(sent + i)) }
                sent += 10
            }
            try await s.append("test.mark", to: .everyone)
            #expect(try await reader.numbers(until: "test.mark") == [])
            // Told why, after what it had been sent: it resyncs instead of living with a gap.
            let (frames, code) = try await slow.framesUntilClose()
            #expect(frames.last?["type"]?.stringValue == "resync")
            #expect(code == 1013)
        }
    }

    @Test("shutdown closes the streams with 1001 (going away)")
    func shutdownSaysGoingAway() async throws {
        let s = try await RealtimeServer.start()
        let stream = try await s.stream(try await s.login())
        let closed = Task { try await stream.waitForClose() }
        await s.stop()
        #expect(try await closed.value == 1001)
    }

    @Test("the metrics count sockets and delivered events")
    func metrics() async throws {
        try await RealtimeServer.with() { s in
            let boss = try await s.login()
            // The registry is the process's: count from what it says now (this suite runs alone).
            let connectedBefore = s.metric("sgem_realtime_connected_sockets")
            let deliveredBefore = s.metric("sgem_realtime_events_delivered_total")
            let one = try await s.stream(boss)
            let two = try await s.stream(boss)
            #expect(s.metric("sgem_realtime_connected_sockets") == connectedBefore + 2)
            try await s.append("test.n", to: .everyone, n: 1)
            _ = try await one.event()
            _ = try await two.event()
            // Counted once the frame is written, which may be just after the client has read it.
            let counted = await eventually(60, { s.metric("sgem_realtime_events_delivered_total") == deliveredBefore + 2 })
            #expect(counted, "delivered \(s.metric("sgem_realtime_events_delivered_total")) before \(deliveredBefore)")
            one.close()
            let closedOne = await eventually(60, { s.metric("sgem_realtime_connected_sockets") == connectedBefore + 1 })
            #expect(closedOne, "connected \(s.metric("sgem_realtime_connected_sockets")) before \(connectedBefore)")
        }
    }
}
