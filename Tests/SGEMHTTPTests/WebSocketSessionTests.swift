import SGEMHTTP
import SGEMSupport
import Synchronization
import Testing

// MARK: - Test support: a fake transport, a client frame builder, a server frame reader

/// Collects what the session writes; refuses writes once `capacity` bytes are queued.
final class WSFakeTransport: WebSocketTransport {
    struct State {
        var bytes: [UInt8] = []
        var closed = false
        /// Whether the close discarded queued bytes (`closeNow`) rather than flushing them.
        var closedNow = false
        var refusedWrites = 0
    }
    let capacity: Int
    let state = Mutex(State())

    init(capacity: Int = .max) { self.capacity = capacity }

    func write(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            guard s.bytes.count + bytes.count <= capacity else {
                s.refusedWrites += 1
                return false
            }
            s.bytes += bytes
            return true
        }
    }

    /// A last frame goes in whatever the capacity, as the real transport's does.
    func writePastCap(_ bytes: [UInt8]) -> Bool {
        state.withLock { s in
            guard !s.closed else { return false }
            s.bytes += bytes
            return true
        }
    }

    func closeAfterFlush() { state.withLock { $0.closed = true } }

    func closeNow() {
        state.withLock { s in
            s.closed = true
            s.closedNow = true
        }
    }

    var isClosed: Bool { state.withLock { $0.closed } }
    var wasClosedNow: Bool { state.withLock { $0.closedNow } }
    var written: [UInt8] { state.withLock { $0.bytes } }
    /// The server's frames so far, decoded; fails the test on a masked or truncated frame.
    var frames: [WSFrame] { WSFrame.decodeServerFrames(written) }
}

/// One frame as seen on the wire.
struct WSFrame: Equatable, CustomStringConvertible {
    var fin = true
    var opcode: UInt8
    var payload: [UInt8]

    var description: String { "WSFrame(fin: \(fin), opcode: \(opcode), \(payload.count) bytes)" }

    static let continuation: UInt8 = 0x0, text: UInt8 = 0x1, binary: UInt8 = 0x2, close: UInt8 = 0x8, ping: UInt8 = 0x9, pong: UInt8 = 0xA

    /// The close code carried by a close frame's payload.
    var closeCode: UInt16? { payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }

    /// A client frame: masked unless told otherwise, with the minimal length form unless `length64`.
    static func client(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv: UInt8 = 0, masked: Bool = true,
                       length64: Bool = false, declaredLength: UInt64? = nil) -> [UInt8] {
        var out: [UInt8] = [(fin ? 0x80 : 0) | rsv << 4 | opcode]
        let maskBit: UInt8 = masked ? 0x80 : 0
        let length = declaredLength ?? UInt64(payload.count)
        if length < 126 && !length64 {
            out.append(maskBit | UInt8(length))
        } else if length <= 0xFFFF && !length64 {
            out += [maskBit | 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        } else {
            out.append(maskBit | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(length >> UInt64(shift) & 0xFF)) }
        }
        if masked {
            let key = Crypto.randomBytes(4)
            out += key
            out += payload.enumerated().map { $0.element ^ key[$0.offset % 4] }
        } else {
            out += payload
        }
        return out
    }

    static func client(text: String, fin: Bool = true) -> [UInt8] { client(Self.text, Array(text.utf8), fin: fin) }

    static func clientClose(_ code: UInt16, _ reason: [UInt8] = []) -> [UInt8] {
        client(close, [UInt8(code >> 8), UInt8(code & 0xFF)] + reason)
    }

    /// Decodes unmasked server frames; a masked frame or trailing partial frame is recorded as an issue.
    static func decodeServerFrames(_ bytes: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [WSFrame] {
        var frames: [WSFrame] = []
        var i = 0
        while i < bytes.count {
            guard bytes.count - i >= 2 else { Issue.record("truncated server frame header", sourceLocation: sourceLocation); break }
            let b0 = bytes[i], b1 = bytes[i + 1]
            #expect(b1 & 0x80 == 0, "server frames must not be masked", sourceLocation: sourceLocation)
            #expect(b0 & 0x70 == 0, "server frames must not set RSV bits", sourceLocation: sourceLocation)
            var length = Int(b1 & 0x7F)
            var start = i + 2
            if length == 126 {
                length = Int(bytes[i + 2]) << 8 | Int(bytes[i + 3])
                start = i + 4
            } else if length == 127 {
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[i + 2 + $1]) }
                start = i + 10
            }
            guard start + length <= bytes.count else { Issue.record("truncated server frame payload", sourceLocation: sourceLocation); break }
            frames.append(WSFrame(fin: b0 & 0x80 != 0, opcode: b0 & 0x0F, payload: Array(bytes[start..<(start + length)])))
            i = start + length
        }
        return frames
    }
}

extension WebSocketSession {
    /// Feeds `bytes` in chunks of `chunk` bytes (0 = all at once).
    func feed(_ bytes: [UInt8], chunk: Int = 0) {
        let size = chunk <= 0 ? max(bytes.count, 1) : chunk
        var i = 0
        repeat {
            let end = min(bytes.count, i + size)
            Array(bytes[i..<end]).withUnsafeBytes { receive($0) }
            i = end
        } while i < bytes.count
    }
}

extension WebSocket {
    /// Every message until the stream finishes (the connection must be closed or closing).
    func collect() async -> [WebSocketMessage] {
        var out: [WebSocketMessage] = []
        for await message in messages { out.append(message) }
        return out
    }
}

// MARK: - Messages, fragmentation, control frames

@Suite struct WebSocketSessionTests {
    /// Chunk sizes for feeding: all at once, one byte at a time, and awkward splits.
    static let splits = [0, 1, 2, 3, 7, 13]

    @Test(arguments: splits)
    func deliversTextAndBinaryMessagesInAnySplit(chunk: Int) async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 200_000, pingInterval: nil)
        let big = (0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let medium = Array(repeating: UInt8(ascii: "m"), count: 300)
        var stream = WSFrame.client(text: "héllo ✓")
        stream += WSFrame.client(WSFrame.binary, [0, 1, 2, 255])
        stream += WSFrame.client(WSFrame.text, medium)            // 16-bit length
        stream += WSFrame.client(WSFrame.binary, big)             // 64-bit length
        stream += WSFrame.client(WSFrame.text, [], length64: true) // empty, non-minimal length accepted
        stream += WSFrame.clientClose(1000)
        session.feed(stream, chunk: chunk)

        let messages = await session.socket.collect()
        #expect(messages == [.text("héllo ✓"), .binary([0, 1, 2, 255]), .text(String(decoding: medium, as: UTF8.self)), .binary(big), .text("")])
        #expect(transport.frames == [WSFrame(opcode: WSFrame.close, payload: [0x03, 0xE8])])
        #expect(transport.isClosed)
        #expect(session.socket.closeCode == 1000)
    }

    @Test(arguments: splits)
    func reassemblesFragmentsAroundAnInterleavedPing(chunk: Int) async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let euro = Array("€".utf8) // a scalar split across fragments is still valid UTF-8 once reassembled
        var stream = WSFrame.client(WSFrame.text, Array("Hel".utf8) + euro[0..<1], fin: false)
        stream += WSFrame.client(WSFrame.ping, Array("p1".utf8))
        stream += WSFrame.client(WSFrame.continuation, Array(euro[1...]), fin: false)
        stream += WSFrame.client(WSFrame.continuation, Array("lo".utf8))
        stream += WSFrame.client(WSFrame.binary, [9], fin: false)
        stream += WSFrame.client(WSFrame.continuation, [8])
        session.feed(stream, chunk: chunk)

        #expect(transport.frames == [WSFrame(opcode: WSFrame.pong, payload: Array("p1".utf8))])
        #expect(!transport.isClosed)
        session.feed(WSFrame.clientClose(1001, Array("bye".utf8)), chunk: chunk)
        #expect(await session.socket.collect() == [.text("Hel€lo"), .binary([9, 8])])
    }

    @Test func answersPingWithPongCarryingTheSamePayloadAndIgnoresPongs() {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let payload = (0..<125).map { UInt8($0) }
        session.feed(WSFrame.client(WSFrame.ping, payload) + WSFrame.client(WSFrame.pong, [1, 2]) + WSFrame.client(WSFrame.ping, []))
        #expect(transport.frames == [WSFrame(opcode: WSFrame.pong, payload: payload), WSFrame(opcode: WSFrame.pong, payload: [])])
        #expect(!session.socket.isClosed)
    }

    @Test(arguments: [UInt16(1000), 1001, 1003, 1007, 1011, 1014, 3000, 4999])
    func echoesAValidCloseCodeAndClosesAfterFlush(code: UInt16) async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        session.feed(WSFrame.clientClose(code, Array("done".utf8)) + WSFrame.client(text: "after close"))
        #expect(transport.frames.map(\.opcode) == [WSFrame.close])
        #expect(transport.frames.first?.closeCode == code)
        #expect(transport.isClosed)
        #expect(session.socket.closeCode == code)
        #expect(session.socket.isClosed)
        #expect(!session.socket.send(text: "too late"))
        #expect(transport.frames.count == 1)
        #expect(await session.socket.collect() == [])
    }

    @Test func emptyCloseIsAnsweredWithAnEmptyClose() {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        session.feed(WSFrame.client(WSFrame.close, []))
        #expect(transport.frames == [WSFrame(opcode: WSFrame.close, payload: [])])
        #expect(transport.isClosed)
        #expect(session.socket.closeCode == 1005)
    }

    @Test func sendsUnmaskedFramesOfEveryLengthForm() {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let sizes = [0, 125, 126, 65_535, 65_536, 100_000]
        for size in sizes {
            #expect(session.socket.send(.binary(Array(repeating: UInt8(size & 0xFF), count: size))))
        }
        #expect(session.socket.send(text: "ok"))
        let frames = transport.frames
        #expect(frames.map(\.payload.count) == sizes + [2])
        #expect(frames.dropLast().allSatisfy { $0.opcode == WSFrame.binary && $0.fin })
        #expect(frames.last == WSFrame(opcode: WSFrame.text, payload: Array("ok".utf8)))
        // The header picks the minimal length form: 2, 4 or 10 header bytes.
        #expect(transport.written.count == sizes.reduce(0) { $0 + $1 + ($1 < 126 ? 2 : $1 <= 65_535 ? 4 : 10) } + 4)
    }

    // MARK: - Protocol violations → exact close codes

    struct Violation: CustomTestStringConvertible, Sendable {
        let name: String
        let bytes: [UInt8]
        let code: UInt16
        var testDescription: String { name }
    }

    static let violations: [Violation] = {
        var list = [
            Violation(name: "unmasked frame", bytes: WSFrame.client(WSFrame.text, Array("hi".utf8), masked: false), code: 1002),
            Violation(name: "reserved opcode 0x3", bytes: WSFrame.client(0x3, [1]), code: 1002),
            Violation(name: "reserved control opcode 0xB", bytes: WSFrame.client(0xB, []), code: 1002),
            Violation(name: "RSV1 without extension", bytes: WSFrame.client(WSFrame.text, Array("hi".utf8), rsv: 0b100), code: 1002),
            Violation(name: "RSV3 without extension", bytes: WSFrame.client(WSFrame.binary, [1], rsv: 0b001), code: 1002),
            Violation(name: "fragmented ping", bytes: WSFrame.client(WSFrame.ping, [1], fin: false), code: 1002),
            Violation(name: "fragmented close", bytes: WSFrame.client(WSFrame.close, [0x03, 0xE8], fin: false), code: 1002),
            Violation(name: "ping over 125 bytes", bytes: WSFrame.client(WSFrame.ping, Array(repeating: 7, count: 126)), code: 1002),
            Violation(name: "continuation without a message", bytes: WSFrame.client(WSFrame.continuation, Array("x".utf8)), code: 1002),
            Violation(name: "new message inside a fragmented one",
                      bytes: WSFrame.client(WSFrame.text, Array("a".utf8), fin: false) + WSFrame.client(WSFrame.text, Array("b".utf8)), code: 1002),
            Violation(name: "64-bit length with the top bit set",
                      bytes: Array(WSFrame.client(WSFrame.binary, [], declaredLength: 1 << 63).prefix(10)), code: 1002),
            Violation(name: "invalid UTF-8 text", bytes: WSFrame.client(WSFrame.text, [0x61, 0xC3, 0x28]), code: 1007),
            Violation(name: "UTF-16 surrogate in text", bytes: WSFrame.client(WSFrame.text, [0xED, 0xA0, 0x80]), code: 1007),
            Violation(name: "invalid UTF-8 across fragments",
                      bytes: WSFrame.client(WSFrame.text, [0x61, 0xE2], fin: false) + WSFrame.client(WSFrame.continuation, [0x28, 0x61]), code: 1007),
            Violation(name: "truncated UTF-8 at message end", bytes: WSFrame.client(WSFrame.text, [0x61, 0xE2, 0x82]), code: 1007),
            Violation(name: "close reason not UTF-8", bytes: WSFrame.clientClose(1000, [0xFF, 0xFE]), code: 1007),
            Violation(name: "close payload of one byte", bytes: WSFrame.client(WSFrame.close, [0x03]), code: 1002),
            Violation(name: "frame longer than the cap", bytes: WSFrame.client(WSFrame.binary, Array(repeating: 1, count: 65)), code: 1009),
            Violation(name: "fragments adding up past the cap",
                      bytes: WSFrame.client(WSFrame.text, Array(repeating: 0x61, count: 40), fin: false)
                          + WSFrame.client(WSFrame.continuation, Array(repeating: 0x61, count: 25)), code: 1009),
        ]
        for code: UInt16 in [0, 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000, 65535] {
            list.append(Violation(name: "close code \(code)", bytes: WSFrame.clientClose(code), code: 1002))
        }
        return list
    }()

    @Test(arguments: violations, [0, 1, 5])
    func failsTheConnectionWithTheExactCloseCode(violation: Violation, chunk: Int) async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 64, pingInterval: nil)
        // A good message first: it must still be delivered, and the failure must not depend on it.
        session.feed(WSFrame.client(text: "ok") + violation.bytes + WSFrame.client(text: "ignored"), chunk: chunk)
        let frames = transport.frames
        #expect(frames.count == 1)
        #expect(frames.last?.opcode == WSFrame.close)
        #expect(frames.last?.closeCode == violation.code)
        #expect(transport.isClosed)
        #expect(!transport.wasClosedNow, "the close frame must be flushed")
        #expect(session.socket.closeCode == violation.code)
        #expect(await session.socket.collect() == [.text("ok")])
    }

    @Test func refusesAnOversizeFrameFromItsHeaderAlone() {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1 << 20, pingInterval: nil)
        // Header announcing 2 GiB, then nothing: the session must not wait for (or buffer) the payload.
        let header = Array(WSFrame.client(WSFrame.binary, [], declaredLength: 1 << 31).prefix(14))
        session.feed(header, chunk: 1)
        #expect(transport.frames.map(\.closeCode) == [1009])
        #expect(transport.isClosed)
    }

    // MARK: - Closing, back-pressure, keep-alive

    @Test func localCloseWaitsForThePeerThenCloses() async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        session.socket.close(code: 4000, reason: "shutting down")
        #expect(transport.frames == [WSFrame(opcode: WSFrame.close, payload: [0x0F, 0xA0] + Array("shutting down".utf8))])
        #expect(!transport.isClosed)
        #expect(session.socket.isClosed)
        #expect(!session.socket.send(text: "no data after close"))
        session.socket.close() // idempotent: no second close frame
        session.feed(WSFrame.client(text: "late data is dropped"))
        #expect(transport.frames.count == 1)
        #expect(!transport.isClosed)
        session.feed(WSFrame.clientClose(1000))
        #expect(transport.isClosed)
        #expect(transport.frames.count == 1)
        #expect(session.socket.closeCode == 4000)
        #expect(await session.socket.collect() == [])
    }

    @Test func localCloseGivesUpOnASilentPeerAfterTheBound() {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil, closeTimeout: .seconds(2))
        let start: UInt64 = 5_000_000_000
        session.tick(now: start)
        session.socket.close()
        session.tick(now: start + 500_000_000)
        session.tick(now: start + 2_400_000_000)
        #expect(!transport.isClosed)
        session.tick(now: start + 2_600_000_000)
        #expect(transport.isClosed)
        #expect(transport.wasClosedNow)
        #expect(transport.frames.map(\.closeCode) == [1000])
    }

    @Test func aSlowPeerIsDroppedWhenTheTransportRefusesBytes() async {
        let transport = WSFakeTransport(capacity: 10_000)
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let chunk = WebSocketMessage.binary(Array(repeating: 1, count: 3_000))
        var accepted = 0
        while session.socket.send(chunk) { accepted += 1 }
        #expect(accepted == 3)
        #expect(session.socket.isClosed)
        #expect(transport.isClosed)
        #expect(transport.wasClosedNow, "a peer that stopped reading is not flushed to")
        #expect(session.socket.closeCode == 1008)
        #expect(transport.written.count <= 10_000)
        #expect(!session.socket.send(text: "x"))
        #expect(transport.state.withLock { $0.refusedWrites } == 1)
        #expect(await session.socket.collect() == [])
    }

    @Test func aSlowPeerGetsTheFarewellPastTheBoundThenTheClose() async {
        let transport = WSFakeTransport(capacity: 10_000)
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let chunk = PreparedMessage(text: String(repeating: "a", count: 3_000))
        let farewell = PreparedMessage(text: "resync")
        var outcomes: [WebSocket.SendOutcome] = []
        repeat {
            outcomes.append(session.socket.send(chunk, orCloseWith: farewell, code: 1013, reason: "too slow"))
        } while outcomes.last == .sent && outcomes.count < 10
        #expect(outcomes == [.sent, .sent, .sent, .tooSlow])
        #expect(transport.isClosed)
        #expect(!transport.wasClosedNow, "the farewell is flushed, not discarded")
        let frames = transport.frames
        #expect(frames.map(\.opcode) == [WSFrame.text, WSFrame.text, WSFrame.text, WSFrame.text, WSFrame.close])
        #expect(frames.dropLast().last?.payload == Array("resync".utf8))
        #expect(frames.last?.closeCode == 1013)
        #expect(session.socket.closeCode == 1013)
        #expect(session.socket.send(chunk, orCloseWith: farewell, code: 1013, reason: "too slow") == .closed)
        #expect(await session.socket.collect() == [])
    }

    @Test func aPongThatDoesNotFitDropsThePeer() {
        let transport = WSFakeTransport(capacity: 3)
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        session.feed(WSFrame.client(WSFrame.ping, [1, 2, 3]))
        #expect(transport.isClosed)
        #expect(session.socket.isClosed)
        #expect(transport.written.isEmpty)
    }

    @Test(arguments: [(messages: 3, bytes: 1 << 20), (messages: 100, bytes: 10)])
    func aHandlerThatFallsBehindClosesWithPolicyViolation(limits: (messages: Int, bytes: Int)) async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil,
                                       maxQueuedBytes: limits.bytes, maxQueuedMessages: limits.messages)
        for i in 0..<5 { session.feed(WSFrame.client(text: "msg\(i)")) }
        #expect(transport.frames.map(\.closeCode) == [1008])
        #expect(transport.isClosed)
        // What was queued before the limit is still handed over, then the stream ends.
        let expected = Array((0..<5).map { WebSocketMessage.text("msg\($0)") }.prefix(limits.messages == 3 ? 3 : 2))
        #expect(await session.socket.collect() == expected)
    }

    @Test func aConsumingHandlerNeverHitsTheQueueLimit() async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil, maxQueuedMessages: 1)
        let (acks, ack) = AsyncStream.makeStream(of: WebSocketMessage.self)
        let consumer = Task {
            var received: [WebSocketMessage] = []
            for await message in session.socket.messages {
                received.append(message)
                ack.yield(message)
            }
            ack.finish()
            return received
        }
        // Each message is fed only once the previous one reached the handler: the one-slot queue suffices.
        var ackIterator = acks.makeAsyncIterator()
        for i in 0..<50 {
            session.feed(WSFrame.client(text: "m\(i)"))
            #expect(await ackIterator.next() == .text("m\(i)"))
        }
        session.feed(WSFrame.clientClose(1000))
        #expect(await consumer.value.count == 50)
        #expect(session.socket.closeCode == 1000)
        #expect(transport.frames.map(\.closeCode) == [1000])
    }

    @Test func pingsEveryIntervalAndDropsASilentPeerAfterTwo() {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: .seconds(1))
        let s: UInt64 = 1_000_000_000
        let t0: UInt64 = 77 * s
        session.tick(now: t0)
        #expect(transport.frames.isEmpty)
        session.tick(now: t0 + s)
        #expect(transport.frames.map(\.opcode) == [WSFrame.ping])
        session.tick(now: t0 + s + s / 2)
        #expect(transport.frames.count == 1)
        session.feed(WSFrame.client(WSFrame.pong, []))
        session.tick(now: t0 + 3 * s / 2)            // heard at 1.5 s
        session.tick(now: t0 + 2 * s)                // second ping
        session.tick(now: t0 + 34 * s / 10)          // 1.9 s of silence: third ping, still open
        #expect(transport.frames.map(\.opcode) == [WSFrame.ping, WSFrame.ping, WSFrame.ping])
        #expect(!transport.isClosed)
        session.tick(now: t0 + 36 * s / 10)          // 2.1 s of silence: dropped
        #expect(transport.isClosed)
        #expect(transport.wasClosedNow)
        #expect(session.socket.closeCode == 1001)
        #expect(transport.frames.last?.closeCode == 1001)
    }

    @Test func transportLossEndsTheStreamWithAbnormalClosure() async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let consumer = Task { await session.socket.collect() }
        session.feed(WSFrame.client(text: "one"))
        session.transportClosed()
        #expect(await consumer.value == [.text("one")])
        #expect(session.socket.closeCode == 1006)
        #expect(session.socket.isClosed)
        #expect(!session.socket.send(text: "x"))
        #expect(transport.written.isEmpty)
    }

    @Test func cancellingTheConsumerEndsItsIteration() async {
        let transport = WSFakeTransport()
        let session = WebSocketSession(transport: transport, maxMessageBytes: 1024, pingInterval: nil)
        let consumer = Task { await session.socket.collect() }
        consumer.cancel()
        #expect(await consumer.value == [])
        #expect(!session.socket.isClosed)
    }
}
