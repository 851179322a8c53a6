#if canImport(Glibc)
import Glibc
#endif

/// A point in wall-clock time with nanosecond precision, formatted as RFC 3339 UTC.
public struct Timestamp: Sendable, Hashable, Comparable {
    public var seconds: Int64
    public var nanoseconds: Int32

    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        self.seconds = seconds
        self.nanoseconds = nanoseconds
    }

    /// The time `milliseconds` after the Unix epoch (UTC): how the database stores every timestamp.
    public init(milliseconds: Int64) {
        let (q, r) = milliseconds.quotientAndRemainder(dividingBy: 1000)
        self.seconds = r < 0 ? q - 1 : q
        self.nanoseconds = Int32((r < 0 ? r + 1000 : r) * 1_000_000)
    }

    /// Milliseconds since the Unix epoch (UTC), rounded down: the database's one timestamp form
    /// (an INTEGER column in SQLite, BIGINT in PostgreSQL), so that times compare and index as numbers.
    public var milliseconds: Int64 { seconds * 1000 + Int64(nanoseconds / 1_000_000) }

    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(seconds: Int64(ts.tv_sec), nanoseconds: Int32(ts.tv_nsec))
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// `2026-11-30T20:24:06Z`, or with milliseconds when `fractional` is true.
    public func rfc3339(fractional: Bool = false) -> String {
        let c = CivilTime(unixSeconds: seconds)
        var s = "\(c.year.padded(4))-\(c.month.padded(2))-\(c.day.padded(2))T\(c.hour.padded(2)):\(c.minute.padded(2)):\(c.second.padded(2))"
        if fractional { s += "." + Int(nanoseconds / 1_000_000).padded(3) }
        return s + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff](Z|±HH:MM)`; nil when malformed.
    public init?(rfc3339 text: String) {
        let b = Array(text.utf8)
        func num(_ from: Int, _ len: Int) -> Int? {
            guard from + len <= b.count else { return nil }
            var v = 0
            for i in from..<(from + len) {
                guard b[i] >= 48 && b[i] <= 57 else { return nil }
                v = v * 10 + Int(b[i] - 48)
            }
            return v
        }
        guard b.count >= 20, b[4] == 45, b[7] == 45, b[10] == 84 || b[10] == 116, b[13] == 58, b[16] == 58,
              let y = num(0, 4), let mo = num(5, 2), let d = num(8, 2), let h = num(11, 2), let mi = num(14, 2), let s = num(17, 2),
              (1...12).contains(mo), d >= 1, d <= CivilTime.daysIn(month: mo, year: y), h < 24, mi < 60, s < 61
        else { return nil }
        var i = 19
        var nanos = 0
        if i < b.count, b[i] == 46 {
            i += 1
            var digits = 0
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                if digits < 9 { nanos = nanos * 10 + Int(b[i] - 48); digits += 1 }
                i += 1
            }
            guard digits > 0 else { return nil }
            for _ in digits..<9 { nanos *= 10 }
        }
        var offset = 0
        guard i < b.count else { return nil }
        if b[i] == 90 || b[i] == 122 {
            i += 1
        } else if b[i] == 43 || b[i] == 45, let oh = num(i + 1, 2), i + 3 < b.count, b[i + 3] == 58, let om = num(i + 4, 2) {
            offset = (oh * 60 + om) * 60 * (b[i] == 45 ? -1 : 1)
            i += 6
        } else { return nil }
        guard i == b.count else { return nil }
        let days = CivilTime.daysFromCivil(year: y, month: mo, day: d)
        self.seconds = Int64(days) * 86400 + Int64(h * 3600 + mi * 60 + min(s, 59)) - Int64(offset)
        self.nanoseconds = Int32(nanos)
    }
}

/// Calendar arithmetic on the proleptic Gregorian calendar (Howard Hinnant's algorithms).
public struct CivilTime: Sendable, Equatable {
    public var year, month, day, hour, minute, second: Int

    public init(unixSeconds: Int64) {
        let days = Int(unixSeconds >= 0 ? unixSeconds / 86400 : (unixSeconds - 86399) / 86400)
        let rem = Int(unixSeconds - Int64(days) * 86400)
        (year, month, day) = CivilTime.civil(fromDays: days)
        hour = rem / 3600
        minute = (rem % 3600) / 60
        second = rem % 60
    }

    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    public static func civil(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }

    public static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }
}

/// Monotonic time for measuring durations.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, for comparing with `MonotonicClock`; 0 when negative.
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds / 1_000_000_000))
    }
}

extension Int {
    func padded(_ width: Int) -> String { String(self).leftPadded(to: width) }
}
