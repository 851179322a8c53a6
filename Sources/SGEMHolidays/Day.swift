import SGEMSupport

/// A calendar date with no time of day and no time zone ("2026-12-24"), counted as days since
/// 1970-01-01. Holidays are about such dates: they are compared, stepped and counted here, and
/// stored as `YYYY-MM-DD` text.
struct Day: Hashable, Comparable, Sendable, Strideable, CustomStringConvertible {
    /// Days since 1970-01-01 (negative before).
    let number: Int

    init(_ number: Int) { self.number = number }

    /// The years a date may fall in: wide enough for any real leave, narrow enough that every
    /// date prints as four digits.
    static let years = 1900...2199

    init?(year: Int, month: Int, day: Int) {
        guard Day.years.contains(year), (1...12).contains(month), day >= 1, day <= CivilTime.daysIn(month: month, year: year) else { return nil }
        number = CivilTime.daysFromCivil(year: year, month: month, day: day)
    }

    /// Parses exactly `YYYY-MM-DD` naming a real date; nil otherwise (2026-02-30, 2026-2-3, …).
    init?(iso text: String) {
        let b = Array(text.utf8)
        guard b.count == 10, b[4] == 0x2D, b[7] == 0x2D else { return nil }
        var fields: [Int] = []
        for range in [0..<4, 5..<7, 8..<10] {
            var v = 0
            for i in range {
                guard b[i] >= 0x30, b[i] <= 0x39 else { return nil }
                v = v * 10 + Int(b[i] - 0x30)
            }
            fields.append(v)
        }
        self.init(year: fields[0], month: fields[1], day: fields[2])
    }

    private var civil: (year: Int, month: Int, day: Int) {
        let (y, m, d) = CivilTime.civil(fromDays: number)
        return (y, m, d)
    }

    var year: Int { civil.year }
    var month: Int { civil.month }
    var dayOfMonth: Int { civil.day }

    /// ISO weekday: 1 = Monday … 7 = Sunday (1970-01-01 was a Thursday).
    var isoWeekday: Int { ((number % 7) + 7 + 3) % 7 + 1 }

    /// `YYYY-MM-DD`.
    var iso: String {
        let c = civil
        return Day.pad(c.year, 4) + "-" + Day.pad(c.month, 2) + "-" + Day.pad(c.day, 2)
    }

    /// `YYYYMMDD`, the iCalendar DATE form.
    var basic: String {
        let c = civil
        return Day.pad(c.year, 4) + Day.pad(c.month, 2) + Day.pad(c.day, 2)
    }

    var description: String { iso }

    /// January 1st and December 31st of `year`.
    static func firstOf(_ year: Int) -> Day { Day(CivilTime.daysFromCivil(year: year, month: 1, day: 1)) }
    static func lastOf(_ year: Int) -> Day { Day(CivilTime.daysFromCivil(year: year, month: 12, day: 31)) }

    /// The date at `time` on the wall clocks of `zone`.
    static func on(_ time: Timestamp, in zone: ZoneInfo) -> Day {
        let local = time.seconds + Int64(zone.offset(at: time.seconds))
        return Day(Int(local >= 0 ? local / 86400 : (local - 86399) / 86400))
    }

    static func < (a: Day, b: Day) -> Bool { a.number < b.number }
    func distance(to other: Day) -> Int { other.number - number }
    func advanced(by n: Int) -> Day { Day(number + n) }

    private static func pad(_ n: Int, _ width: Int) -> String {
        let s = String(n)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }
}
