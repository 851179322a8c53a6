import SGEMCore
import SGEMSupport

/// What happened to a holiday request, kept with its notice so the notice is worded when it is
/// read, in the reader's language ("Friday 11 December 2026, morning only"), never as
/// `YYYY-MM-DD`. The push helper words holiday pushes with the same `text(in:)`.
public struct HolidayNoticeFacts: Sendable, Equatable {
    /// What was done to the request.
    public enum Action: String, Sendable, CaseIterable {
        case recorded, submitted, reopened, approved, rejected, cancelled
    }

    public let action: Action
    /// The first and last day, `YYYY-MM-DD` (stored as facts, shown in words).
    public let start: String
    public let end: String
    /// The first day starts at midday (afternoon only); the last day ends at midday (morning only).
    public let halfStart: Bool
    public let halfEnd: Bool
    /// Working days the request counts.
    public let workingDays: Double
    /// The leave type's key (`vacation` is named in each language) and the name admins gave it.
    public let typeKey: String
    public let typeName: String
    /// Who decided (a display name), when someone else did.
    public let decider: String?
    /// The decider's note, as written.
    public let note: String?

    public init(action: Action, start: String, end: String, halfStart: Bool, halfEnd: Bool, workingDays: Double,
                typeKey: String, typeName: String, decider: String? = nil, note: String? = nil) {
        self.action = action
        self.start = start
        self.end = end
        self.halfStart = halfStart
        self.halfEnd = halfEnd
        self.workingDays = workingDays
        self.typeKey = typeKey
        self.typeName = typeName
        self.decider = decider
        self.note = note
    }

    /// The notice in `language` ("es" Spanish, anything else English): a title and a body.
    public func text(in language: String) -> (title: String, body: String) {
        let spanish = language.lowercased().hasPrefix("es")
        let words = spanish ? HolidayNoticeFacts.spanish : HolidayNoticeFacts.english
        let type = typeKey == "vacation" ? words.vacation : typeName
        let title = words.title(type, action)
        var body = words.sentence(type, action, decider?.isEmpty == false ? decider : nil, period(words)) + "."
        if let note, !note.isEmpty { body += "\n\n\(words.note): \(note)" }
        return (String(title.prefix(200)), String(body.prefix(20_000)))
    }

    /// `start`–`end` (`YYYY-MM-DD`) in words in `language`: "11 December 2026", "from 28 December
    /// 2026 to 8 January 2027", "del 28 de diciembre de 2026 al 8 de enero de 2027" (pushes, lists).
    public static func dates(_ start: String, _ end: String, in language: String) -> String {
        let words = language.lowercased().hasPrefix("es") ? spanish : english
        guard let first = CalendarDate(start), let last = CalendarDate(end) else { return start == end ? start : "\(start) – \(end)" }
        if first == last { return words.longDate(first, weekday: false) }
        return words.span(words.longDate(first, weekday: false), words.longDate(last, weekday: false))
    }

    /// The dates in words: one day with its half, or a span with its halves and working days.
    func period(_ words: Words) -> String {
        guard let first = CalendarDate(start), let last = CalendarDate(end) else { return "\(start) – \(end)" }
        if first == last {
            let day = words.longDate(first, weekday: true)
            if halfStart { return day + ", " + words.afternoonOnly }
            if halfEnd { return day + ", " + words.morningOnly }
            return day
        }
        var from = words.longDate(first, weekday: false)
        var to = words.longDate(last, weekday: false)
        if halfStart { from += " (\(words.afternoon))" }
        if halfEnd { to += " (\(words.morning))" }
        return words.span(from, to) + ", " + words.workingDays(workingDays)
    }

    // MARK: Stored form

    /// The facts as JSON, for the notice's `facts` column.
    public var json: JSONValue {
        var fields: [(String, JSONValue)] = [
            ("action", .string(action.rawValue)), ("start", .string(start)), ("end", .string(end)),
            ("halfStart", .bool(halfStart)), ("halfEnd", .bool(halfEnd)), ("workingDays", .number(workingDays)),
            ("typeKey", .string(typeKey)), ("typeName", .string(typeName)),
        ]
        if let decider { fields.append(("decider", .string(decider))) }
        if let note { fields.append(("note", .string(note))) }
        return .object(fields)
    }

    /// Facts read back from `json`; nil when they are not facts this release knows.
    public init?(json: JSONValue) {
        guard let action = json["action"]?.stringValue.flatMap(Action.init(rawValue:)),
              let start = json["start"]?.stringValue, let end = json["end"]?.stringValue,
              let days = json["workingDays"]?.numberValue, let key = json["typeKey"]?.stringValue,
              let name = json["typeName"]?.stringValue else { return nil }
        self.init(action: action, start: start, end: end, halfStart: json["halfStart"]?.boolValue ?? false,
                  halfEnd: json["halfEnd"]?.boolValue ?? false, workingDays: days, typeKey: key, typeName: name,
                  decider: json["decider"]?.stringValue, note: json["note"]?.stringValue)
    }

    /// Facts from the stored JSON text; nil for none or for text that is not facts.
    public init?(stored text: String?) {
        guard let text, let value = try? JSONValue.parse(Array(text.utf8)) else { return nil }
        self.init(json: value)
    }

    // MARK: Words

    /// One language's words; dates are written here rather than by the platform's formatter, so
    /// the wording is the same on every system and in every test.
    struct Words: Sendable {
        let months: [String]
        let weekdays: [String]  // Monday first
        let vacation: String
        let note: String
        let morning: String
        let afternoon: String
        let morningOnly: String
        let afternoonOnly: String
        let dateText: @Sendable (CalendarDate, Bool) -> String
        let span: @Sendable (String, String) -> String
        let workingDays: @Sendable (Double) -> String
        let title: @Sendable (String, Action) -> String
        let sentence: @Sendable (String, Action, String?, String) -> String

        func longDate(_ date: CalendarDate, weekday: Bool) -> String { dateText(date, weekday) }
    }

    static func number(_ n: Double, decimalComma: Bool) -> String {
        let text = n == n.rounded() ? String(Int(n)) : String(n)
        return decimalComma ? text.replacingOccurrences(of: ".", with: ",") : text
    }

    static let english: Words = {
        let months = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                      "November", "December"]
        let weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
        let verbs: [Action: String] = [.recorded: "recorded", .submitted: "sent", .reopened: "reopened", .approved: "approved",
                                       .rejected: "turned down", .cancelled: "cancelled"]
        return Words(
            months: months, weekdays: weekdays, vacation: "Vacation", note: "Note", morning: "morning", afternoon: "afternoon",
            morningOnly: "morning only", afternoonOnly: "afternoon only",
            dateText: { d, weekday in (weekday ? weekdays[d.weekday - 1] + " " : "") + "\(d.day) \(months[d.month - 1]) \(d.year)" },
            span: { "from \($0) to \($1)" },
            workingDays: { n in n == 1 ? "1 working day" : "\(number(n, decimalComma: false)) working days" },
            title: { type, action in
                let words: [Action: String] = [.recorded: "recorded", .submitted: "sent", .reopened: "reopened", .approved: "approved",
                                               .rejected: "not approved", .cancelled: "cancelled"]
                return "\(type) request \(words[action] ?? action.rawValue)"
            },
            sentence: { type, action, decider, period in
                let kind = type == "Vacation" ? "vacation" : type
                if let decider { return "\(decider) \(verbs[action] ?? action.rawValue) your \(kind) request: \(period)" }
                return "Your \(kind) request was \(verbs[action] ?? action.rawValue): \(period)"
            })
    }()

    static let spanish: Words = {
        let months = ["enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                      "noviembre", "diciembre"]
        let weekdays = ["lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"]
        let done: [Action: String] = [.recorded: "ha registrado", .submitted: "ha enviado", .reopened: "ha reabierto",
                                      .approved: "ha aprobado", .rejected: "ha rechazado", .cancelled: "ha cancelado"]
        let passive: [Action: String] = [.recorded: "registrada", .submitted: "enviada", .reopened: "reabierta",
                                         .approved: "aprobada", .rejected: "rechazada", .cancelled: "cancelada"]
        return Words(
            months: months, weekdays: weekdays, vacation: "vacaciones", note: "Nota", morning: "por la mañana",
            afternoon: "por la tarde", morningOnly: "solo por la mañana", afternoonOnly: "solo por la tarde",
            dateText: { d, weekday in (weekday ? weekdays[d.weekday - 1] + " " : "") + "\(d.day) de \(months[d.month - 1]) de \(d.year)" },
            span: { "del \($0) al \($1)" },
            workingDays: { n in n == 1 ? "1 día laborable" : "\(number(n, decimalComma: true)) días laborables" },
            title: { type, action in "Solicitud de \(type) \(passive[action] ?? action.rawValue)" },
            sentence: { type, action, decider, period in
                if let decider { return "\(decider) \(done[action] ?? action.rawValue) tu solicitud de \(type): \(period)" }
                return "Tu solicitud de \(type) ha sido \(passive[action] ?? action.rawValue): \(period)"
            })
    }()
}

/// A day of the proleptic Gregorian calendar read from `YYYY-MM-DD`, with its weekday.
struct CalendarDate: Sendable, Equatable {
    let year: Int
    let month: Int
    let day: Int

    init?(_ iso: String) {
        let parts = iso.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1...12).contains(m), (1...31).contains(d) else { return nil }
        (year, month, day) = (y, m, d)
    }

    /// 1 Monday … 7 Sunday (from the days since 1970-01-01, a Thursday).
    var weekday: Int {
        // Howard Hinnant's days_from_civil.
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146_097 + doe - 719_468
        let monday0 = ((days % 7) + 7 + 3) % 7  // 1970-01-01 is a Thursday: index 3 from Monday
        return monday0 + 1
    }
}
