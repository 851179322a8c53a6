/// RFC 6455 §5 framing: opcodes, close codes and the server's (unmasked) frame encoder.
enum WebSocketFrame {
    enum Opcode: UInt8 {
        case continuation = 0x0
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
        case pong = 0xA

        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// Close status codes this server sends (RFC 6455 §7.4.1).
    enum CloseCode {
        static let normal: UInt16 = 1000
        static let goingAway: UInt16 = 1001
        static let protocolError: UInt16 = 1002
        /// Local-only: a close frame without a status code.
        static let noStatus: UInt16 = 1005
        /// Local-only: the connection went away without a close frame.
        static let abnormal: UInt16 = 1006
        static let invalidPayload: UInt16 = 1007
        static let policyViolation: UInt16 = 1008
        static let messageTooBig: UInt16 = 1009
    }

    /// The largest payload of a control frame.
    static let maxControlPayload = 125

    /// Whether `code` may appear in a close frame on the wire (RFC 6455 §7.4, IANA registry).
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// One final, unmasked frame: servers never mask (RFC 6455 §5.1).
    static func encode(_ opcode: Opcode, payload: some Collection<UInt8>) -> [UInt8] {
        let count = payload.count
        var frame: [UInt8] = []
        frame.reserveCapacity(count + 10)
        frame.append(0x80 | opcode.rawValue)
        if count < 126 {
            frame.append(UInt8(count))
        } else if count <= 0xFFFF {
            frame.append(126)
            frame.append(UInt8(count >> 8))
            frame.append(UInt8(count & 0xFF))
        } else {
            frame.append(127)
            for shift in stride(from: 56, through: 0, by: -8) { frame.append(UInt8(UInt64(count) >> UInt64(shift) & 0xFF)) }
        }
        frame.append(contentsOf: payload)
        return frame
    }

    /// A close frame carrying `code` and a reason cut to fit the 125-byte control payload.
    static func encodeClose(code: UInt16?, reason: String) -> [UInt8] {
        guard let code else { return encode(.close, payload: []) }
        var payload: [UInt8] = [UInt8(code >> 8), UInt8(code & 0xFF)]
        payload.append(contentsOf: truncatedUTF8(reason, maxBytes: maxControlPayload - 2))
        return encode(.close, payload: payload)
    }

    /// The UTF-8 bytes of `text`, cut at a character boundary so they fit in `maxBytes`.
    static func truncatedUTF8(_ text: String, maxBytes: Int) -> [UInt8] {
        var bytes = Array(text.utf8)
        guard bytes.count > maxBytes else { return bytes }
        var end = maxBytes
        // Step back over continuation bytes (10xxxxxx) so no scalar is split.
        while end > 0, bytes[end] & 0xC0 == 0x80 { end -= 1 }
        bytes.removeSubrange(end...)
        return bytes
    }
}
