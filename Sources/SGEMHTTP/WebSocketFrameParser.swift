/// Incremental RFC 6455 frame parser for client-to-server traffic: accepts bytes in any split,
/// reassembles fragmented messages and reports the first protocol violation as a close code.
///
/// It never buffers more than one frame's header plus `maxMessageBytes`: a frame whose declared
/// length would take the message past the cap is refused from its header alone.
struct WebSocketFrameParser {
    /// What one complete frame (or message) means to the session.
    enum Event: Equatable {
        case message(WebSocketMessage)
        case ping([UInt8])
        case pong
        /// A close frame; `code` is nil when the frame had no payload.
        case close(code: UInt16?, reason: String)
    }

    /// A violation: the connection fails with this close code.
    struct Failure: Error, Equatable {
        let code: UInt16
        let reason: String
    }

    typealias Opcode = WebSocketFrame.Opcode

    let maxMessageBytes: Int
    /// Received bytes not yet consumed; consumed bytes are dropped at the end of each `parse`.
    private var buffer: [UInt8] = []
    /// The opcode of the fragmented message in progress (text or binary), if any.
    private var messageOpcode: Opcode?
    private var messageBytes: [UInt8] = []
    /// Set after a close frame or a failure: the rest of the stream is ignored.
    private(set) var isFinished = false

    init(maxMessageBytes: Int) {
        self.maxMessageBytes = maxMessageBytes
    }

    /// Consumes `bytes`, appending an event per complete frame/message to `events`.
    /// Returns the first violation; events before it stay valid.
    mutating func parse(_ bytes: UnsafeRawBufferPointer, into events: inout [Event]) -> Failure? {
        guard !isFinished else { return nil }
        buffer.append(contentsOf: bytes)
        var index = 0
        defer { consume(index) }
        while true {
            switch nextFrame(at: index) {
            case .needMore:
                return nil
            case .failure(let failure):
                isFinished = true
                return failure
            case .frame(let fin, let opcode, let payloadRange, let mask, let frameEnd):
                index = frameEnd
                var payload = Array(buffer[payloadRange])
                unmask(&payload, key: mask)
                if let failure = handle(fin: fin, opcode: opcode, payload: payload, into: &events) {
                    isFinished = true
                    return failure
                }
                if isFinished { return nil }
            }
        }
    }

    private enum Step {
        case needMore
        case failure(Failure)
        case frame(fin: Bool, opcode: Opcode, payload: Range<Int>, mask: (UInt8, UInt8, UInt8, UInt8), end: Int)
    }

    /// Decodes the frame header at `start`; every check that the header alone decides happens
    /// before waiting for the payload.
    private func nextFrame(at start: Int) -> Step {
        let available = buffer.count - start
        guard available >= 2 else { return .needMore }
        let b0 = buffer[start], b1 = buffer[start + 1]
        let fin = b0 & 0x80 != 0
        guard b0 & 0x70 == 0 else { return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "reserved bits set")) }
        guard let opcode = Opcode(rawValue: b0 & 0x0F) else {
            return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "unknown opcode"))
        }
        guard b1 & 0x80 != 0 else { return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "client frames must be masked")) }
        let shortLength = Int(b1 & 0x7F)
        if opcode.isControl {
            guard fin else { return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "fragmented control frame")) }
            guard shortLength <= WebSocketFrame.maxControlPayload else {
                return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "control frame too long"))
            }
        } else if opcode == .continuation {
            guard messageOpcode != nil else { return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "continuation without a message")) }
        } else {
            guard messageOpcode == nil else { return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "new message inside a fragmented one")) }
        }
        let lengthBytes = shortLength == 126 ? 2 : shortLength == 127 ? 8 : 0
        let headerLength = 2 + lengthBytes + 4
        guard available >= 2 + lengthBytes else { return .needMore }
        var length: UInt64 = UInt64(shortLength)
        if lengthBytes > 0 {
            length = 0
            for i in 0..<lengthBytes { length = length << 8 | UInt64(buffer[start + 2 + i]) }
            if lengthBytes == 8 && length & (1 << 63) != 0 {
                return .failure(Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "frame length has its top bit set"))
            }
        }
        if !opcode.isControl {
            let room = UInt64(max(0, maxMessageBytes - messageBytes.count))
            guard length <= room else { return .failure(Failure(code: WebSocketFrame.CloseCode.messageTooBig, reason: "message too big")) }
        }
        guard available >= headerLength else { return .needMore }
        let payloadStart = start + headerLength
        guard UInt64(buffer.count - payloadStart) >= length else { return .needMore }
        let m = payloadStart - 4
        return .frame(fin: fin, opcode: opcode, payload: payloadStart..<(payloadStart + Int(length)),
                      mask: (buffer[m], buffer[m + 1], buffer[m + 2], buffer[m + 3]), end: payloadStart + Int(length))
    }

    private mutating func handle(fin: Bool, opcode: Opcode, payload: [UInt8], into events: inout [Event]) -> Failure? {
        switch opcode {
        case .ping:
            events.append(.ping(payload))
        case .pong:
            events.append(.pong)
        case .close:
            isFinished = true
            if payload.isEmpty {
                events.append(.close(code: nil, reason: ""))
                return nil
            }
            guard payload.count >= 2 else { return Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "close payload of one byte") }
            let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
            guard WebSocketFrame.isValidCloseCode(code) else { return Failure(code: WebSocketFrame.CloseCode.protocolError, reason: "invalid close code") }
            guard let reason = String(validating: payload[2...], as: UTF8.self) else {
                return Failure(code: WebSocketFrame.CloseCode.invalidPayload, reason: "close reason is not UTF-8")
            }
            events.append(.close(code: code, reason: reason))
        case .text, .binary:
            if fin { return complete(opcode, payload, into: &events) }
            messageOpcode = opcode
            messageBytes = payload
        case .continuation:
            messageBytes.append(contentsOf: payload)
            if fin {
                let whole = messageBytes
                let started = messageOpcode ?? .binary
                messageOpcode = nil
                messageBytes = []
                return complete(started, whole, into: &events)
            }
        }
        return nil
    }

    private func complete(_ opcode: Opcode, _ payload: [UInt8], into events: inout [Event]) -> Failure? {
        if opcode == .text {
            guard let text = String(validating: payload, as: UTF8.self) else {
                return Failure(code: WebSocketFrame.CloseCode.invalidPayload, reason: "text message is not UTF-8")
            }
            events.append(.message(.text(text)))
        } else {
            events.append(.message(.binary(payload)))
        }
        return nil
    }

    private func unmask(_ payload: inout [UInt8], key: (UInt8, UInt8, UInt8, UInt8)) {
        let k = [key.0, key.1, key.2, key.3]
        for i in payload.indices { payload[i] ^= k[i & 3] }
    }

    /// Drops the first `count` bytes; keeps a small buffer's capacity for the next read.
    private mutating func consume(_ count: Int) {
        if count == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
        } else if count > 0 {
            buffer.removeFirst(count)
        }
    }
}
