import SGEMCore
import SGEMSupport
import SGEMTestSupport
import Testing

// A reader slower than the server: the replay goes at its pace, and where a bound must still
// apply the client is told to resync rather than left with a gap. Part of the serialised stream
// suite: the slow-consumer test there counts slow closes in the process-wide metrics.
extension RealtimeStreamTests {
    /// A client of the admin catching up from before 4,000 events of about 2 KB (an 8 MB
    /// backlog, 32 times the socket's 256 KiB bound), and a live client of another user who
    /// sees none of it. The slow one has a small receive buffer, so what it does not read waits
    /// on the server; it is returned before its replay is out.
    static func catchingUp(_ s: RealtimeServer) async throws -> (slow: WebSocketClient, watcher: WebSocketClient) {
        let boss = try await s.login()
        let ana = try await s.createUser("ana", as: boss)
        let watcher = try await s.stream(ana)
        let since = try await s.append("test.mark", to: .user(boss.userID))
        let blob = JSONValue.string(String(repeating: "x", count: 2000))
        try await s.append((0..<4000).map { RealtimeEvent(type: "test.n", audience: .user(boss.userID), data: ["n": .number(Double($0)), "blob": blob]) })
        // Once the watcher has this mark, the hub is past the backlog: it is all replay, not
        // live events held back (a socket's queue of those is bounded, see below).
        try await s.append("test.mark", to: .user(ana.userID))
        guard try await watcher.numbers(until: "test.mark") == [] else { throw TestFailure("the watcher saw the backlog") }
        return (try await s.stream(boss, since: since, receiveBuffer: 8192, waitingUntilReady: false), watcher)
    }

    static let smallBuffer = ["ws-max-buffered-bytes": "262144"]

    @Test("a slow reader catching up on 8 MB gets all 4,000 events in order, then what came live meanwhile")
    func slowReaderCatchesUp() async throws {
        try await RealtimeServer.with(Self.smallBuffer) { s in
            let (reader, _) = try await Self.catchingUp(s)
            var seen = try await reader.slowlyRead(1000)
            // Live while the replay is still megabytes from done: held back, then sent after it.
            for n in 4000..<4010 { try await s.append("test.n", to: .everyone, n: n) }
            seen += try await reader.slowlyRead(3010)
            #expect(seen == Array(0..<4010))
            try await s.append("test.mark", to: .everyone)
            #expect(try await reader.numbers(until: "test.mark") == [])
        }
    }

    @Test("a replay outrun by the live stream ends with a resync and a close (1013), not a gap")
    func outrunReplayIsToldToResync() async throws {
        try await RealtimeServer.with(Self.smallBuffer) { s in
            let (stalled, watcher) = try await Self.catchingUp(s)
            // The stalled client reads nothing yet: its replay waits on the socket while more
            // live events arrive than its queue holds (1,024).
            try await s.append((0..<1100).map { RealtimeEvent(type: "test.n", audience: .everyone, data: ["n": .number(Double(10_000 + $0))]) })
            try await s.append("test.mark", to: .everyone)
            // The hub hands events out in order: once the watcher has the mark, the stalled
            // socket's overflow has been dealt with.
            #expect(try await watcher.numbers(until: "test.mark") == Array(10_000..<11_100))

            let (frames, code) = try await stalled.framesUntilClose()
            #expect(frames.last?["type"]?.stringValue == "resync")
            #expect(code == 1013)
            let replayed = frames.dropLast().map { Int($0["data"]?["n"]?.numberValue ?? -1) }
            // What it got before the resync is a gapless start of the backlog, and nothing live.
            #expect(replayed == Array(0..<replayed.count))
            #expect(replayed.count < 4000)
        }
    }
}
