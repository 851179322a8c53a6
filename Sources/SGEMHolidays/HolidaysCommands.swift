#if canImport(Glibc)
import Glibc
#endif
import SGEMCore
import SGEMShell
import SGEMStore
import SGEMSupport

/// `admin set-allowance` and `admin holidays add-public | import-public`, on the database
/// directly (so they work while the server runs), with the API's checks.
struct HolidaysCommands: Sendable {
    let context: CommandModuleContext

    /// Largest public-holiday file read: far more than any year's list.
    static let maxImportBytes = 1 << 20

    func register(_ commands: inout CommandRegistry) {
        let context = self.context
        commands.register(Command("set-allowance", summary: "set one employee's holiday allowance for one year",
                                  usage: "USER YEAR DAYS   (USER: username, email or id; DAYS: 0 to 366 in half days)",
                                  positionals: 3...3) { args, ctx in
            let (who, rawYear, rawDays) = (args.positionals[0], args.positionals[1], args.positionals[2])
            guard let year = Int(rawYear), Day.years.contains(year) else {
                throw CommandError.usage("YEAR must be a year from \(Day.years.lowerBound) to \(Day.years.upperBound)")
            }
            guard let days = Double(rawDays), days >= 0, days <= 366, days * 2 == (days * 2).rounded() else {
                throw CommandError.usage("DAYS must be a number of days from 0 to 366, in half days (e.g. 23 or 22.5)")
            }
            guard let directory = context.services.resolve((any UserDirectory).self) else {
                throw CommandError.failure("the user directory is not available (the accounts module is missing)")
            }
            var user = try await directory.user(login: who)
            if user == nil, let id = Int64(who) { user = try await directory.user(id: id) }
            guard let user else { throw CommandError.failure("no user '\(who)'") }
            try await HolidayBook.setAllowance(userID: user.id, year: year, days: days, store: try await context.openStore(), at: .now(),
                                               audit: context.services.resolve((any AuditTrail).self).map { ($0, .commandLine) })
            ctx.io.print("allowance of \(user.username) for \(year): \(HolidayBook.format(days)) days")
        })

        var holidayVerbs = CommandRegistry(noun: "holidays verb", helpHint: "admin holidays --help")
        holidayVerbs.register(Command("add-public", summary: "add a public holiday (a date nobody's leave counts)",
                               usage: "DATE NAME   (DATE as YYYY-MM-DD; quote a NAME with spaces)", positionals: 2...2) { args, ctx in
            guard let date = Day(iso: args.positionals[0]) else { throw CommandError.usage("DATE \(HolidaysAPI.dateProblem)") }
            let name = try HolidaysCommands.name(args.positionals[1], line: nil)
            try await HolidaysCommands.add([(date, name)], lines: [1], context: context)
            ctx.io.print("public holiday \(date.iso): \(name)")
        })
        holidayVerbs.register(Command("import-public", summary: "add a list of public holidays from a CSV file, all of them or none",
                               usage: "FILE.csv   (columns date,name; a header row is optional; names with commas in \"quotes\")",
                               positionals: 1...1) { args, ctx in
            let path = args.positionals[0]
            guard let bytes = CommandFile.read(path, limit: HolidaysCommands.maxImportBytes + 1) else {
                throw CommandError.failure("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            guard bytes.count <= HolidaysCommands.maxImportBytes else { throw CommandError.failure("\(path) is larger than 1 MiB") }
            guard let text = String(validating: bytes, as: UTF8.self) else { throw CommandError.failure("\(path) is not UTF-8 text") }
            let (entries, lines) = try HolidaysCommands.parseImport(text, file: path)
            try await HolidaysCommands.add(entries, lines: lines, context: context)
            ctx.io.print("imported \(entries.count) public holiday\(entries.count == 1 ? "" : "s") from \(path)")
        })
        let verbs = holidayVerbs
        let overview = verbs.overview()
        commands.register(Command("holidays", summary: "manage public holidays",
                                  usage: "add-public DATE NAME | import-public FILE.csv (run 'holidays VERB --help')\n\nverbs:\n\(overview)",
                                  positionals: 0...100, passThrough: true) { args, ctx in
            guard !args.positionals.isEmpty else {
                throw CommandError.usage("missing holidays verb: add-public or import-public (see 'holidays --help')")
            }
            try await verbs.run(args.positionals, context: ctx, prefix: "sgem-server admin holidays")
        })
    }

    /// Adds the entries in one transaction; a date already taken fails the lot, naming its line.
    static func add(_ entries: [(Day, String)], lines: [Int], context: CommandModuleContext) async throws {
        do {
            _ = try await HolidayBook.addPublicHolidays(entries, store: try await context.openStore(), at: .now(),
                                                        audit: context.services.resolve((any AuditTrail).self).map { ($0, .commandLine) })
        } catch let error as HolidaysError {
            guard case let .publicHolidayExists(date) = error else { throw CommandError.failure(error.description) }
            let taken = entries.firstIndex { $0.0 == date }
            let line = taken.map { lines.count > 1 ? "line \(lines[$0]): " : "" } ?? ""
            throw CommandError.failure("\(line)\(error.message); nothing was added")
        }
    }

    /// The rows of an import file with their line numbers; throws naming the first bad line.
    static func parseImport(_ text: String, file: String) throws -> ([(Day, String)], [Int]) {
        var entries: [(Day, String)] = []
        var lines: [Int] = []
        var seen: [Day: Int] = [:]
        // Split on scalars: "\r\n" is one Character, so a Character split would miss it.
        let rows = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
        for (index, rawLine) in rows.enumerated() {
            let number = index + 1
            var line = String(String.UnicodeScalarView(rawLine))
            if line.hasSuffix("\r") { line.removeLast() }
            if number == 1, line.hasPrefix("\u{FEFF}") { line.removeFirst() }
            if line.trimmingWhitespace().isEmpty { continue }
            guard let cells = csvCells(line) else { throw CommandError.failure("\(file) line \(number): unbalanced quotes") }
            if entries.isEmpty, lines.isEmpty, cells.count == 2, cells[0].trimmingWhitespace().lowercased() == "date",
               cells[1].trimmingWhitespace().lowercased() == "name" { continue }
            guard cells.count == 2 else {
                throw CommandError.failure("\(file) line \(number): expected 2 columns (date,name), found \(cells.count)")
            }
            guard let date = Day(iso: cells[0].trimmingWhitespace()) else {
                throw CommandError.failure("\(file) line \(number): '\(cells[0])' \(HolidaysAPI.dateProblem)")
            }
            if let first = seen[date] { throw CommandError.failure("\(file) line \(number): \(date.iso) is already on line \(first)") }
            seen[date] = number
            entries.append((date, try name(cells[1], line: "\(file) line \(number)")))
            lines.append(number)
        }
        guard !entries.isEmpty else { throw CommandError.failure("\(file) holds no public holiday") }
        return (entries, lines)
    }

    /// One line's cells, RFC 4180 quoting; nil when a quote is left open.
    static func csvCells(_ line: String) -> [String]? {
        var cells: [String] = []
        var cell = ""
        var quoted = false
        var chars = Array(line)[...]
        while let c = chars.popFirst() {
            if quoted {
                if c == "\"" {
                    if chars.first == "\"" { cell.append("\""); chars.removeFirst() } else { quoted = false }
                } else { cell.append(c) }
            } else if c == "\"" {
                quoted = true
            } else if c == "," {
                cells.append(cell)
                cell = ""
            } else { cell.append(c) }
        }
        if quoted { return nil }
        cells.append(cell)
        return cells
    }

    static func name(_ raw: String, line: String?) throws -> String {
        let name = raw.trimmingWhitespace()
        guard (1...100).contains(name.count), !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw CommandError.failure("\(line.map { $0 + ": " } ?? "")NAME must be 1 to 100 characters on one line")
        }
        return name
    }
}
