import SGEMCore
import SGEMSupport
import Synchronization

/// The UTC offset of an IANA time zone at any instant, read from the system's compiled zone
/// files (`/usr/share/zoneinfo`, Debian's tzdata): the transition table, and past its end the
/// POSIX rule in the file's footer (`CET-1CEST,M3.5.0,M10.5.0/3`). Foundation's `TimeZone`
/// without its ICU half knows only fixed offsets, so the server reads the files itself.
struct ZoneInfo: Sendable {
    let name: String
    private let transitions: [Int64]
    /// The offset (seconds east of UTC) in force from each transition on.
    private let offsets: [Int32]
    /// The offset before the first transition.
    private let initial: Int32
    private let rule: PosixRule?

    static let utc = ZoneInfo(name: "UTC", transitions: [], offsets: [], initial: 0, rule: nil)

    private static let cache = Mutex<[String: ZoneInfo]>([:])

    /// The zone called `name`, or nil when no valid zone file has that name. Loaded zones are
    /// kept: a company has one zone, and it rarely changes.
    static func named(_ name: String) -> ZoneInfo? {
        if name == "UTC" || name == "Etc/UTC" { return .utc }
        if let hit = cache.withLock({ $0[name] }) { return hit }
        guard isSafeName(name), let bytes = readFileBytes("/usr/share/zoneinfo/" + name, limit: 1 << 20), let zone = parse(bytes, name: name) else { return nil }
        cache.withLock { c in
            if c.count > 64 { c.removeAll() }
            c[name] = zone
        }
        return zone
    }

    /// The zone the company settings name; UTC when it cannot be read (the settings check
    /// names, so that means the zone files changed under a running server).
    static func company(_ name: String) -> ZoneInfo { named(name) ?? .utc }

    /// Seconds east of UTC at `seconds` after the epoch.
    func offset(at seconds: Int64) -> Int {
        guard let last = transitions.last else { return Int(rule?.offset(at: seconds) ?? Int(initial)) }
        if seconds >= last, let rule { return rule.offset(at: seconds) }
        if seconds < transitions[0] { return Int(initial) }
        var lo = 0, hi = transitions.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if transitions[mid] <= seconds { lo = mid } else { hi = mid - 1 }
        }
        return Int(offsets[lo])
    }

    // MARK: Reading TZif (RFC 8536)

    private static func isSafeName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), name.first != "/" else { return false }
        return name.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { segment in
            !segment.isEmpty && segment != "." && segment != ".." && segment.utf8.allSatisfy {
                ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5F || $0 == 0x2B || $0 == 0x2D
            }
        }
    }

    static func parse(_ b: [UInt8], name: String) -> ZoneInfo? {
        func be(_ at: Int, _ size: Int) -> Int64? {
            guard at >= 0, at + size <= b.count else { return nil }
            var v: UInt64 = 0
            for i in 0..<size { v = v << 8 | UInt64(b[at + i]) }
            if size == 4 { return Int64(Int32(bitPattern: UInt32(v))) }
            return Int64(bitPattern: v)
        }
        func header(_ at: Int) -> (isut: Int, isstd: Int, leap: Int, time: Int, type: Int, char: Int)? {
            guard at + 44 <= b.count, Array(b[at..<at + 4]) == Array("TZif".utf8) else { return nil }
            var c: [Int] = []
            for i in 0..<6 { guard let v = be(at + 20 + 4 * i, 4), v >= 0, v < 100_000 else { return nil }; c.append(Int(v)) }
            return (c[0], c[1], c[2], c[3], c[4], c[5])
        }
        guard let h1 = header(0) else { return nil }
        let version = b[4]
        var at = 44
        var timeSize = 4
        var h = h1
        if version >= 0x32 {
            // Skip the 32-bit block; the 64-bit one follows with its own header.
            at += h1.time * 4 + h1.time + h1.type * 6 + h1.char + h1.leap * 8 + h1.isstd + h1.isut
            guard let h2 = header(at) else { return nil }
            h = h2
            at += 44
            timeSize = 8
        }
        guard h.type > 0 else { return nil }
        var transitions: [Int64] = []
        for i in 0..<h.time { guard let t = be(at + i * timeSize, timeSize) else { return nil }; transitions.append(t) }
        at += h.time * timeSize
        guard at + h.time <= b.count else { return nil }
        let indices = Array(b[at..<at + h.time])
        at += h.time
        var types: [(offset: Int32, dst: Bool)] = []
        for i in 0..<h.type {
            guard let off = be(at + i * 6, 4), at + i * 6 + 4 < b.count else { return nil }
            types.append((Int32(off), b[at + i * 6 + 4] != 0))
        }
        at += h.type * 6 + h.char + h.leap * (timeSize + 4) + h.isstd + h.isut
        guard indices.allSatisfy({ Int($0) < types.count }) else { return nil }
        var rule: PosixRule?
        if version >= 0x32, at < b.count, b[at] == 0x0A, let end = b[(at + 1)...].firstIndex(of: 0x0A), end > at + 1 {
            rule = PosixRule(String(decoding: b[(at + 1)..<end], as: UTF8.self))
        }
        let initial = types.first { !$0.dst }?.offset ?? types[0].offset
        return ZoneInfo(name: name, transitions: transitions, offsets: indices.map { types[Int($0)].offset },
                        initial: initial, rule: rule)
    }
}

/// A POSIX TZ rule (`<+14>-14`, `CET-1CEST,M3.5.0,M10.5.0/3`): a standard offset and an
/// optional daylight-saving offset with the rules that start and end it each year.
struct PosixRule: Sendable {
    let standard: Int
    let daylight: Int?
    let start: DateRule?
    let end: DateRule?

    /// When, in a year, daylight saving starts or ends: `Mm.w.d`, `Jn` or `n`, then the local time.
    enum DateRule: Sendable {
        case monthWeekDay(month: Int, week: Int, weekday: Int, time: Int)
        case julianNoLeap(day: Int, time: Int)
        case zeroBased(day: Int, time: Int)

        /// The local (wall-clock, before the switch) instant in `year`, in seconds from the epoch.
        func localSeconds(in year: Int) -> Int64 {
            let day: Int
            let time: Int
            switch self {
            case let .monthWeekDay(month, week, weekday, t):
                let first = CivilTime.daysFromCivil(year: year, month: month, day: 1)
                let firstWeekday = ((first % 7) + 7 + 4) % 7  // 0 = Sunday
                var d = 1 + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
                let length = CivilTime.daysIn(month: month, year: year)
                while d > length { d -= 7 }
                day = first + d - 1
                time = t
            case let .julianNoLeap(n, t):
                let leap = CivilTime.daysIn(month: 2, year: year) == 29
                day = CivilTime.daysFromCivil(year: year, month: 1, day: 1) + n - 1 + (leap && n >= 60 ? 1 : 0)
                time = t
            case let .zeroBased(n, t):
                day = CivilTime.daysFromCivil(year: year, month: 1, day: 1) + n
                time = t
            }
            return Int64(day) * 86400 + Int64(time)
        }
    }

    init?(_ text: String) {
        var s = Substring(text)
        guard PosixRule.skipName(&s), let std = PosixRule.time(&s) else { return nil }
        standard = -std
        if s.isEmpty { daylight = nil; start = nil; end = nil; return }
        guard PosixRule.skipName(&s) else { return nil }
        if s.first != ",", !s.isEmpty {
            guard let dst = PosixRule.time(&s) else { return nil }
            daylight = -dst
        } else {
            daylight = standard + 3600
        }
        guard s.first == "," else { start = nil; end = nil; return }
        s.removeFirst()
        guard let a = PosixRule.dateRule(&s), s.first == "," else { return nil }
        s.removeFirst()
        guard let b = PosixRule.dateRule(&s), s.isEmpty else { return nil }
        start = a
        end = b
    }

    func offset(at seconds: Int64) -> Int {
        guard let daylight, let start, let end else { return standard }
        let year = CivilTime(unixSeconds: seconds + Int64(standard)).year
        let on = start.localSeconds(in: year) - Int64(standard)
        let off = end.localSeconds(in: year) - Int64(daylight)
        let inDaylight = on < off ? (seconds >= on && seconds < off) : !(seconds >= off && seconds < on)
        return inDaylight ? daylight : standard
    }

    private static func skipName(_ s: inout Substring) -> Bool {
        if s.first == "<" {
            guard let close = s.firstIndex(of: ">") else { return false }
            s = s[s.index(after: close)...]
            return true
        }
        let name = s.prefix { $0.isLetter }
        guard name.count >= 3 else { return false }
        s = s.dropFirst(name.count)
        return true
    }

    /// `[+-]hh[:mm[:ss]]` in seconds.
    private static func time(_ s: inout Substring) -> Int? {
        var sign = 1
        if s.first == "+" { s.removeFirst() } else if s.first == "-" { sign = -1; s.removeFirst() }
        var parts: [Int] = []
        while parts.count < 3 {
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3, let v = Int(digits) else { return nil }
            parts.append(v)
            s = s.dropFirst(digits.count)
            guard s.first == ":" else { break }
            s.removeFirst()
        }
        let p = parts + [0, 0]
        return sign * (p[0] * 3600 + p[1] * 60 + p[2])
    }

    private static func dateRule(_ s: inout Substring) -> DateRule? {
        func number() -> Int? {
            let digits = s.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, digits.count <= 3 else { return nil }
            s = s.dropFirst(digits.count)
            return Int(digits)
        }
        func atTime() -> Int? {
            guard s.first == "/" else { return 7200 }
            s.removeFirst()
            return time(&s)
        }
        if s.first == "M" {
            s.removeFirst()
            guard let m = number(), (1...12).contains(m), s.first == "." else { return nil }
            s.removeFirst()
            guard let w = number(), (1...5).contains(w), s.first == "." else { return nil }
            s.removeFirst()
            guard let d = number(), (0...6).contains(d), let t = atTime() else { return nil }
            return .monthWeekDay(month: m, week: w, weekday: d, time: t)
        }
        if s.first == "J" {
            s.removeFirst()
            guard let n = number(), (1...365).contains(n), let t = atTime() else { return nil }
            return .julianNoLeap(day: n, time: t)
        }
        guard let n = number(), (0...365).contains(n), let t = atTime() else { return nil }
        return .zeroBased(day: n, time: t)
    }
}
