import SGEMSupport

/// Writes the iCalendar feed (RFC 5545) of approved absences: CRLF line ends, lines folded at
/// 75 octets (never inside a UTF-8 sequence), TEXT values escaped, all-day VEVENTs with an
/// exclusive DTEND.
enum CalendarFeed {
    static func ics(_ absences: [HolidayBook.Absence], stamp: Timestamp, host: String) -> String {
        var lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//sgem-server//holidays//EN", "CALSCALE:GREGORIAN",
                     "METHOD:PUBLISH", "X-WR-CALNAME:" + escape("Team absences")]
        let dtstamp = basicUTC(stamp)
        for absence in absences {
            let r = absence.request
            let what = absence.typeVisible ? r.type.name : "away"
            var summary = "\(absence.displayName): \(what)"
            if r.halfStart || r.halfEnd {
                var halves: [String] = []
                if r.halfStart { halves.append("from midday \(r.start.iso)") }
                if r.halfEnd { halves.append("until midday \(r.end.iso)") }
                summary += " (" + halves.joined(separator: ", ") + ")"
            }
            lines += [
                "BEGIN:VEVENT",
                "UID:holiday-\(r.id)@\(host)",
                "DTSTAMP:\(dtstamp)",
                "DTSTART;VALUE=DATE:\(r.start.basic)",
                "DTEND;VALUE=DATE:\(r.end.advanced(by: 1).basic)",
                "SUMMARY:" + escape(summary),
                "TRANSP:TRANSPARENT",
                "END:VEVENT",
            ]
        }
        lines.append("END:VCALENDAR")
        return lines.map(fold).joined(separator: "\r\n") + "\r\n"
    }

    /// A TEXT value: backslash, semicolon, comma and line breaks escaped; other controls dropped.
    static func escape(_ text: String) -> String {
        var out = ""
        var previousCR = false
        for scalar in text.unicodeScalars {
            defer { previousCR = scalar == "\r" }
            switch scalar {
            case "\\": out += "\\\\"
            case ";": out += "\\;"
            case ",": out += "\\,"
            case "\r": out += "\\n"
            case "\n": if !previousCR { out += "\\n" }
            default:
                if scalar.properties.generalCategory == .control { continue }
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Splits a content line into lines of at most 75 octets, continuations starting with a space.
    static func fold(_ line: String) -> String {
        var out: [UInt8] = []
        var count = 0
        for scalar in line.unicodeScalars {
            let bytes = Array(String(scalar).utf8)
            if count + bytes.count > 75 {
                out += [0x0D, 0x0A, 0x20]
                count = 1
            }
            out += bytes
            count += bytes.count
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `20261130T202406Z`.
    static func basicUTC(_ time: Timestamp) -> String {
        time.rfc3339().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
    }
}

/// RFC 4180 CSV, with cells that a spreadsheet would run as a formula defused.
enum CSVTable {
    /// Rows joined by CRLF; every cell quoted when it holds a comma, quote or line break.
    static func text(_ rows: [[String]]) -> String {
        rows.map { $0.map(cell).joined(separator: ",") }.joined(separator: "\r\n") + "\r\n"
    }

    /// One cell: a leading `= + - @` (or tab, carriage return) gets a `'` so spreadsheets show
    /// it as text instead of evaluating it (OWASP's CSV injection advice), then RFC 4180 quoting.
    static func cell(_ value: String) -> String {
        var v = value
        if let first = v.unicodeScalars.first, ["=", "+", "-", "@", "\t", "\r"].contains(first) { v = "'" + v }
        if v.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) {
            return "\"" + v.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        return v
    }
}
