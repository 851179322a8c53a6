#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One logfmt line being built: bytes written through a pointer into one buffer, no string per
/// field. `Logger` starts it with `ts`, `level`, `module` and `msg`; callers add facts.
/// The buffer is on the builder's stack (`withLine`) and moves to the heap only when a line
/// outgrows it: the access line is on every request's path, and an array per line (allocated,
/// zeroed, checked for uniqueness on every byte) cost more than the bytes it held. Noncopyable,
/// so a line cannot outlive the buffer it points into.
public struct LogLine: ~Copyable {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private var used = 0
    /// Whether `base` was allocated here (the line outgrew its first buffer); freed in `deinit`.
    private var ownsBase = false

    /// Bytes a line holds before it moves to the heap; an access line takes about 200.
    static let stackCapacity = 512

    private init(buffer: UnsafeMutableBufferPointer<UInt8>) {
        base = buffer.baseAddress!
        capacity = buffer.count
    }

    deinit {
        if ownsBase { base.deallocate() }
    }

    /// Calls `body` with a line started with `ts`, `level`, `module` and `msg`.
    static func withLine<R>(level: LogLevel, label: String, message: String, _ body: (inout LogLine) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: stackCapacity) { buffer in
            var line = LogLine(buffer: buffer)
            line.put("ts=")
            line.reserve(24)
            line.used += LogLine.writeTimestamp(into: line.base + line.used)
            line.put(" level=")
            line.put(level.staticName)
            line.put(" module=")
            line.appendValue(label)
            line.put(" msg=")
            line.appendValue(message)
            return try body(&line)
        }
    }

    /// Calls `body` with an empty line (for quoting a value alone).
    static func withEmptyLine<R>(_ body: (inout LogLine) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer in
            var line = LogLine(buffer: buffer)
            return try body(&line)
        }
    }

    /// The UTF-8 bytes so far, without a trailing newline.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: used)) }

    /// Calls `body` with the bytes so far, without copying them.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: used))
    }

    /// Adds ` key=value`, quoting `value` when logfmt needs it. Keys are constants (facts in
    /// metadata, habit 7): a `StaticString` is copied as is, with no String to look into.
    public mutating func append(_ key: StaticString, _ value: String) {
        put(key: key)
        appendValue(value)
    }

    /// Adds ` key=<decimal integer>`.
    public mutating func append(_ key: StaticString, _ value: Int) {
        put(key: key)
        appendDecimal(value)
    }

    /// Adds ` key=<units / 10^scale>` with exactly `scale` decimals (durations without a Double).
    public mutating func append(_ key: StaticString, fixedPoint units: Int, scale: Int) {
        put(key: key)
        var divisor = 1
        for _ in 0..<scale { divisor *= 10 }
        if units < 0 { put(0x2D) }
        let magnitude = units.magnitude
        appendDecimal(Int(magnitude / UInt(divisor)))
        guard scale > 0 else { return }
        put(0x2E)
        let fraction = Int(magnitude % UInt(divisor))
        var place = divisor / 10
        while place > 0 {
            put(UInt8(0x30 + fraction / place % 10))
            place /= 10
        }
    }

    /// Adds ` key=value` for a key known only at run time (a logger's metadata, `facts` pairs).
    mutating func append(field key: String, _ value: String) {
        put(0x20)
        append(raw: key)
        put(0x3D)
        appendValue(value)
    }

    /// Adds a newline (a sink writing the line as is).
    mutating func appendNewline() { put(0x0A) }

    // MARK: Writing bytes

    /// Makes room for `extra` more bytes, moving the line to a heap buffer twice as large.
    @inline(__always)
    private mutating func reserve(_ extra: Int) {
        if used + extra > capacity { grow(extra) }
    }

    private mutating func grow(_ extra: Int) {
        let larger = max(2 * capacity, used + extra)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
        moved.initialize(from: base, count: used)
        if ownsBase { base.deallocate() }
        base = moved
        capacity = larger
        ownsBase = true
    }

    @inline(__always)
    private mutating func put(_ byte: UInt8) {
        reserve(1)
        base[used] = byte
        used += 1
    }

    private mutating func put(_ text: StaticString) {
        put(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// ` key=`.
    private mutating func put(key: StaticString) {
        let count = key.utf8CodeUnitCount
        reserve(count + 2)
        base[used] = 0x20
        (base + used + 1).initialize(from: key.utf8Start, count: count)
        base[used + 1 + count] = 0x3D
        used += count + 2
    }

    private mutating func put(_ source: UnsafeBufferPointer<UInt8>) {
        let count = source.count
        guard count > 0 else { return }
        reserve(count)
        (base + used).initialize(from: source.baseAddress!, count: count)
        used += count
    }

    private mutating func append(raw text: String) {
        if let done: Void = text.utf8.withContiguousStorageIfAvailable({ put($0) }) { return done }
        for b in text.utf8 { put(b) }
    }

    private mutating func appendDecimal(_ value: Int) {
        if value < 0 { put(0x2D) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for 20 digits, no heap
        var count = 0
        withUnsafeMutableBytes(of: &digits) { raw in
            repeat {
                raw[23 - count] = UInt8(0x30 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            put(UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[(24 - count)...]))
        }
    }

    /// logfmt quoting: bare when safe, otherwise in double quotes with escapes; control
    /// characters are escaped so that one event is always one line.
    mutating func appendValue(_ value: String) {
        if let done: Void = value.utf8.withContiguousStorageIfAvailable({ appendValue(utf8: $0) }) { return done }
        Array(value.utf8).withUnsafeBufferPointer { appendValue(utf8: $0) }
    }

    private mutating func appendValue(utf8: UnsafeBufferPointer<UInt8>) {
        // Bytes of multi-byte UTF-8 sequences are all >= 0x80: only ASCII needs looking at.
        let needsQuotes = utf8.isEmpty || utf8.contains { $0 <= 0x20 || $0 == 0x3D || $0 == 0x22 || $0 == 0x5C || $0 == 0x7F }
        guard needsQuotes else {
            put(utf8)
            return
        }
        put(0x22)
        for b in utf8 {
            switch b {
            case 0x22: put(0x5C); put(0x22)
            case 0x5C: put(0x5C); put(0x5C)
            case 0x0A: put(0x5C); put(0x6E)
            case 0x0D: put(0x5C); put(0x72)
            case 0x09: put(0x5C); put(0x74)
            case 0..<0x20, 0x7F:
                let hex: StaticString = "0123456789abcdef"
                put(0x5C); put(0x75); put(0x30); put(0x30)
                put(hex.utf8Start[Int(b >> 4)])
                put(hex.utf8Start[Int(b & 0xF)])
            default:
                put(b)
            }
        }
        put(0x22)
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
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            let count = writeTimestamp(into: buffer.baseAddress!, now: now)
            bytes.append(contentsOf: buffer[..<count])
        }
    }

    /// Writes the timestamp's 24 bytes at `out`; returns how many.
    static func writeTimestamp(into out: UnsafeMutablePointer<UInt8>, now: Timestamp = .now()) -> Int {
        let prefix = secondCache.withLock { cache -> SIMD32<UInt8> in
            if cache.seconds != now.seconds {
                cache.seconds = now.seconds
                cache.text = formatSecond(now.seconds)
            }
            return cache.text
        }
        for i in 0..<19 { out[i] = prefix[i] }
        let millis = Int(now.nanoseconds / 1_000_000)
        out[19] = 0x2E
        out[20] = UInt8(0x30 + millis / 100)
        out[21] = UInt8(0x30 + millis / 10 % 10)
        out[22] = UInt8(0x30 + millis % 10)
        out[23] = 0x5A
        return 24
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
