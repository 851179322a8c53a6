#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One logfmt line being built: bytes appended into a single buffer, no string per field.
/// `Logger` starts it with `ts`, `level`, `module` and `msg`; callers add facts.
public struct LogLine: Sendable {
    /// The UTF-8 bytes so far, without a trailing newline.
    public internal(set) var bytes: [UInt8]

    init(level: LogLevel, label: String, message: String) {
        bytes = []
        bytes.reserveCapacity(256)
        append(raw: "ts=")
        LogLine.appendTimestamp(to: &bytes)
        append(raw: " level=")
        append(raw: level.name)
        append(raw: " module=")
        appendValue(label)
        append(raw: " msg=")
        appendValue(message)
    }

    /// An empty line (for quoting a value alone).
    init(raw: Void) { bytes = [] }

    /// Adds ` key=value`, quoting `value` when logfmt needs it.
    public mutating func append(_ key: String, _ value: String) {
        bytes.append(0x20)
        append(raw: key)
        bytes.append(0x3D)
        appendValue(value)
    }

    /// Adds ` key=<decimal integer>`.
    public mutating func append(_ key: String, _ value: Int) {
        bytes.append(0x20)
        append(raw: key)
        bytes.append(0x3D)
        appendDecimal(value)
    }

    /// Adds ` key=<units / 10^scale>` with exactly `scale` decimals (durations without a Double).
    public mutating func append(_ key: String, fixedPoint units: Int, scale: Int) {
        bytes.append(0x20)
        append(raw: key)
        bytes.append(0x3D)
        var divisor = 1
        for _ in 0..<scale { divisor *= 10 }
        if units < 0 { bytes.append(0x2D) }
        let magnitude = units.magnitude
        appendDecimal(Int(magnitude / UInt(divisor)))
        guard scale > 0 else { return }
        bytes.append(0x2E)
        let fraction = Int(magnitude % UInt(divisor))
        var place = divisor / 10
        while place > 0 {
            bytes.append(UInt8(0x30 + fraction / place % 10))
            place /= 10
        }
    }

    private mutating func append(raw text: String) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ bytes.append(contentsOf: $0) }) { return done }
        bytes.append(contentsOf: text.utf8)
    }

    private mutating func appendDecimal(_ value: Int) {
        if value < 0 { bytes.append(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for 20 digits, no heap
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[23 - count] = UInt8(0x30 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            bytes.append(contentsOf: raw[(24 - count)...])
        }
    }

    /// logfmt quoting: bare when safe, otherwise in double quotes with escapes; control
    /// characters are escaped so that one event is always one line.
    mutating func appendValue(_ value: String) {
        if let done: Void = value.utf8.withContiguousStorageIfAvailable({ appendValue(utf8: $0) }) { return done }
        appendValue(utf8: Array(value.utf8))
    }

    private mutating func appendValue<C: Collection>(utf8: C) where C.Element == UInt8 {
        // Bytes of multi-byte UTF-8 sequences are all >= 0x80: only ASCII needs looking at.
        let needsQuotes = utf8.isEmpty || utf8.contains { $0 <= 0x20 || $0 == 0x3D || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }
        guard needsQuotes else {
            bytes.append(contentsOf: utf8)
            return
        }
        bytes.append(0x22)
        for b in utf8 {
            switch b {
            case 0x22: bytes.append(0x5C); bytes.append(0x22)
            case 0x5C: bytes.append(0x5C); bytes.append(0x5C)
            case 0x0A: bytes.append(0x5C); bytes.append(0x6E)
            case 0x0D: bytes.append(0x5C); bytes.append(0x72)
            case 0x09: bytes.append(0x5C); bytes.append(0x74)
            case 0..<0x20, 0x7F:
                let hex: StaticString = "0123456789abcdef"
                bytes.append(contentsOf: [0x5C, 0x75, 0x30, 0x30, hex.utf8Start[Int(b >> 4)], hex.utf8Start[Int(b & 0xF)]])
            default:
                bytes.append(b)
            }
        }
        bytes.append(0x22)
    }

    // MARK: Timestamps

    /// `YYYY-MM-DDTHH:MM:SS` of the last second formatted: most lines fall in the same second.
    private struct SecondCache {
        var seconds: Int64 = .min
        var text: SIMD32<UInt8> = .zero
    }

    private static let secondCache = Mutex(SecondCache())

    /// Appends `2026-11-30T20:24:06.123Z`, the calendar part reused within a second.
    static func appendTimestamp(to bytes: inout [UInt8], now: Timestamp = .now()) {
        let prefix = secondCache.withLock { cache -> SIMD32<UInt8> in
            if cache.seconds != now.seconds {
                cache.seconds = now.seconds
                cache.text = formatSecond(now.seconds)
            }
            return cache.text
        }
        for i in 0..<19 { bytes.append(prefix[i]) }
        let millis = Int(now.nanoseconds / 1_000_000)
        bytes.append(0x2E)
        bytes.append(UInt8(0x30 + millis / 100))
        bytes.append(UInt8(0x30 + millis / 10 % 10))
        bytes.append(UInt8(0x30 + millis % 10))
        bytes.append(0x5A)
    }

    private static func formatSecond(_ seconds: Int64) -> SIMD32<UInt8> {
        let c = CivilTime(unixSeconds: seconds)
        var text = SIMD32<UInt8>.zero
        var index = 0
        func put(_ value: Int, width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            for _ in 0..<width {
                text[index] = UInt8(0x30 + (value / divisor) % 10)
                index += 1
                divisor /= 10
            }
        }
        func put(byte: UInt8) { text[index] = byte; index += 1 }
        put(c.year, width: 4); put(byte: 0x2D); put(c.month, width: 2); put(byte: 0x2D); put(c.day, width: 2)
        put(byte: 0x54)
        put(c.hour, width: 2); put(byte: 0x3A); put(c.minute, width: 2); put(byte: 0x3A); put(c.second, width: 2)
        return text
    }
}
