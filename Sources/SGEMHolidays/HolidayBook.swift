import SGEMContracts
import SGEMCore
import SGEMStore
import SGEMSupport

/// The holidays module's operations in domain words: what the routes and the admin verbs call.
/// Every change of a request writes its history, the employee's `holiday` notice and the
/// `holiday.updated` event in the one write transaction that changes it.
struct HolidayBook: Sendable {
    let store: Store
    let journal: any EventJournal
    let notices: any NoticePublisher
    let settingsProvider: (any CompanySettingsProvider)?
    let directory: (any UserDirectory)?
    let clock: HolidaysClock
    /// Where admins' changes (decisions, leave types, public holidays, allowances) are recorded.
    var audit: (any AuditTrail)? = nil

    /// The module's SQL, for what stands alone in one transaction.
    var repository: HolidaysRepository { HolidaysRepository(store: store) }

    /// The audit event names this module writes.
    static let auditEvents = ["holiday.approved", "holiday.rejected", "holiday.reopened", "holiday.cancelled",
                              "holiday.public_added", "holiday.public_deleted", "holiday.leave_type_added",
                              "holiday.leave_type_updated", "holiday.leave_type_deleted", "holiday.allowance_set"]

    /// Longest request: a year (a leap year's 366 days).
    static let maxSpanDays = 366
    /// Longest team-calendar window: a quarter.
    static let maxCalendarDays = 92
    /// Most rows one list or export answers with.
    static let maxRows = 5000
    static let maxNote = 2000

    // MARK: Time and settings

    func settings() async throws -> CompanySettingsValue {
        try await settingsProvider?.current() ?? CompanySettingsValue()
    }

    /// Today's date in the company's time zone.
    func today(_ settings: CompanySettingsValue) -> Day {
        Day.on(clock.now(), in: ZoneInfo.company(settings.timeZone))
    }

    // MARK: Summaries

    /// `userID`'s numbers for `year`, as of `today`.
    static func summary(userID: Int64, year: Int, settings: CompanySettingsValue, today: Day, in db: Database) throws -> HolidaySummary {
        func allowance(_ y: Int) throws -> Double {
            try HolidaysRepository.allowance(userID: userID, year: y, in: db) ?? Double(settings.defaultAllowanceDays)
        }
        let own = try allowance(year)
        let ledger = try HolidaysRepository.ledger(userID: userID, year: year, in: db)
        var carried = 0.0
        if settings.carryOverMaxDays > 0, year - 1 >= Day.years.lowerBound {
            // Unused days of last year: its allowance less what was approved or is still pending
            // (pending days count as used, so a later approval cannot overbook this year).
            let previous = try HolidaysRepository.ledger(userID: userID, year: year - 1, in: db)
            let unused = try allowance(year - 1) - previous.approved - previous.pending
            carried = min(Double(settings.carryOverMaxDays), max(0, unused))
            if carried > 0, let expires = settings.carryOverExpires, let expiry = expiryDay(expires, year: year), today > expiry {
                // Past the expiry date only the carried days already taken by then still count.
                let used = try daysTaken(userID: userID, from: Day.firstOf(year), to: expiry, settings: settings, in: db)
                carried = min(carried, used)
            }
        }
        return HolidaySummary(year: year, allowance: own, carriedOver: carried, approvedDays: ledger.approved, pendingDays: ledger.pending)
    }

    /// "MM-DD" in `year`; 02-29 is refused by the settings, so every year has it.
    static func expiryDay(_ monthDay: String, year: Int) -> Day? {
        let parts = monthDay.split(separator: "-")
        guard parts.count == 2, let m = Int(parts[0]), let d = Int(parts[1]) else { return nil }
        return Day(year: year, month: m, day: d)
    }

    /// Counting days of pending and approved requests that fall in `from…to`.
    static func daysTaken(userID: Int64, from: Day, to: Day, settings: CompanySettingsValue, in db: Database) throws -> Double {
        let requests = try HolidaysRepository.countingRequests(userID: userID, from: from, to: to, in: db)
        guard !requests.isEmpty else { return 0 }
        let calendar = try workingCalendar(from: from, to: to, settings: settings, in: db)
        return requests.reduce(0) { sum, r in
            let start = max(r.start, from), end = min(r.end, to)
            return sum + calendar.total(from: start, to: end, halfStart: r.halfStart && r.start == start, halfEnd: r.halfEnd && r.end == end)
        }
    }

    static func workingCalendar(from: Day, to: Day, settings: CompanySettingsValue, in db: Database) throws -> WorkingCalendar {
        WorkingCalendar(workingDays: Set(settings.workingDays),
                        publicHolidays: Set(try HolidaysRepository.publicHolidays(from: from, to: to, in: db).map(\.date)))
    }

    /// An employee's year: the summary, the requests with a day in it, and the company's working
    /// weekdays (so a form can count days as dates are picked).
    func year(of userID: Int64, year: Int?) async throws -> HolidayYear {
        let settings = try await self.settings()
        let today = today(settings)
        let year = year ?? today.year
        return try await store.read { db in
            HolidayYear(summary: try HolidayBook.summary(userID: userID, year: year, settings: settings, today: today, in: db),
                        requests: try HolidaysRepository.requests(userID: userID, year: year, in: db), workingDays: settings.workingDays)
        }
    }

    /// Refuses `viewer` a look at `userID`'s year unless it is their own or they are an admin;
    /// `userNotFound` when an admin names nobody.
    func checkYearAccess(of userID: Int64, viewer: AuthenticatedUser) async throws {
        guard viewer.isAdmin || viewer.id == userID else { throw HolidaysError.forbidden("only an admin sees another person's holidays") }
        if viewer.id != userID, try await directory?.user(id: userID) == nil { throw HolidaysError.userNotFound }
    }

    // MARK: Requests

    /// A new request as the API or a test sends it, its dates already parsed.
    struct Draft: Sendable {
        let start: Day
        let end: Day
        let typeKey: String?
        let halfStart: Bool
        let halfEnd: Bool
        let note: String?
    }

    /// Files `draft` for `userID`: checked, counted, checked against overlaps and the allowance
    /// and inserted in one write transaction, so two requests at the same moment never overbook.
    func create(_ draft: Draft, for userID: Int64) async throws -> HolidayRequest {
        try HolidayBook.checkDates(draft)
        let settings = try await self.settings()
        let today = today(settings)
        let language = try await language(of: userID)
        let now = clock.now()
        let (journal, notices) = (self.journal, self.notices)
        let request = try await store.write { db -> HolidayRequest in
            guard let type = try HolidaysRepository.leaveType(key: draft.typeKey ?? "vacation", in: db) else {
                throw HolidaysError.invalid(["type": "must be the key of a leave type (see GET /leave-types)"])
            }
            let calendar = try HolidayBook.workingCalendar(from: draft.start, to: draft.end, settings: settings, in: db)
            let perYear = calendar.days(from: draft.start, to: draft.end, halfStart: draft.halfStart, halfEnd: draft.halfEnd)
            guard perYear.values.reduce(0, +) > 0 else {
                throw HolidaysError.invalid(["end": "the dates hold no working day (weekends and public holidays do not count)"])
            }
            if try HolidaysRepository.overlaps(userID: userID, start: draft.start, end: draft.end, in: db) {
                throw HolidaysError.overlap
            }
            if type.countsAgainstAllowance {
                for (year, days) in perYear.sorted(by: { $0.key < $1.key }) {
                    let summary = try HolidayBook.summary(userID: userID, year: year, settings: settings, today: today, in: db)
                    if days > summary.remainingDays {
                        throw HolidaysError.allowanceExceeded(year: year, requestedDays: days, remainingDays: summary.remainingDays)
                    }
                }
            }
            let status: HolidayStatus = type.needsApproval ? .pending : .approved
            let id = try HolidaysRepository.insertRequest(HolidaysRepository.NewRequest(
                userID: userID, type: type, start: draft.start, end: draft.end, halfStart: draft.halfStart, halfEnd: draft.halfEnd,
                perYear: perYear, status: status, note: draft.note, createdAt: now), in: db)
            return try HolidayBook.recordChange(id, from: nil, to: status, by: userID, note: nil, at: now, language: language,
                                                decider: nil, notices: notices, journal: journal, in: db)
        }
        return request
    }

    /// The date checks that need no database: order, span, half days.
    static func checkDates(_ draft: Draft) throws {
        if draft.end < draft.start { throw HolidaysError.invalid(["end": "must not be before start"]) }
        if draft.start.distance(to: draft.end) + 1 > maxSpanDays {
            throw HolidaysError.invalid(["end": "a request spans at most \(maxSpanDays) days; file longer leave as several requests"])
        }
        if draft.start == draft.end, draft.halfStart, draft.halfEnd {
            throw HolidaysError.invalid(["halfEnd": "a one-day request cannot both start at midday and end at midday; use one half day"])
        }
    }

    /// Writes the history step, the employee's notice and the `holiday.updated` event of a
    /// change in `db`'s transaction, and returns the request as it now is. The one path every
    /// change takes, so none can happen without the others. The employee's own actions (sending,
    /// cancelling) make no notice; someone else's decision does, kept as facts and worded when
    /// read. `audit`: an admin's decision, recorded in the same transaction.
    static func recordChange(_ id: Int64, from: HolidayStatus?, to: HolidayStatus, by actor: Int64, note: String?, at time: Timestamp,
                             language: String, decider: String?, notices: any NoticePublisher, journal: any EventJournal,
                             audit: (trail: any AuditTrail, actor: AuditActor)? = nil, in db: Database) throws -> HolidayRequest {
        try HolidaysRepository.appendHistory(requestID: id, HistoryEntry(from: from, to: to, byUserID: actor, at: time, note: note), in: db)
        guard let request = try HolidaysRepository.request(id: id, in: db) else { throw HolidaysError.requestNotFound }
        let facts = noticeFacts(request, from: from, note: note, decider: decider)
        if actor != request.userID {
            _ = try notices.publish(PersonalNotice(recipientID: request.userID, facts: facts, language: language, authorID: actor), in: db)
        }
        if let (trail, who) = audit, actor != request.userID || facts.action != .cancelled {
            let detail = "#\(request.id) \(request.type.name) \(request.start.iso) – \(request.end.iso) (\(format(request.days)) days)"
                + (note.map { $0.isEmpty ? "" : ": \(String($0.prefix(200)))" } ?? "")
            try trail.record(who.record("holiday.\(facts.action.rawValue)", detail, target: request.userID), in: db)
        }
        _ = try journal.append(RealtimeEvent(type: "holiday.updated", audience: .userAndAdmins(request.userID), data: [
            "request": request.jsonValue, "from": from.map { .string($0.rawValue) } ?? .null, "to": .string(to.rawValue),
        ]), in: db)
        return request
    }

    /// What happened to `r`, for its notice: worded when read, in the reader's language.
    static func noticeFacts(_ r: HolidayRequest, from: HolidayStatus?, note: String?, decider: String?) -> HolidayNoticeFacts {
        let action: HolidayNoticeFacts.Action
        switch (from, r.status) {
        case (nil, .approved): action = .recorded
        case (nil, _): action = .submitted
        case (.approved?, .pending): action = .reopened
        case (_, .approved): action = .approved
        case (_, .rejected): action = .rejected
        case (_, .cancelled): action = .cancelled
        default: action = .reopened
        }
        return HolidayNoticeFacts(action: action, start: r.start.iso, end: r.end.iso, halfStart: r.halfStart, halfEnd: r.halfEnd,
                                  workingDays: r.days, typeKey: r.type.key, typeName: r.type.name, decider: decider, note: note)
    }

    /// The notice an employee gets about their request, in `language`.
    static func noticeText(_ r: HolidayRequest, from: HolidayStatus?, note: String?, language: String) -> (String, String) {
        noticeFacts(r, from: from, note: note, decider: nil).text(in: language)
    }

    /// The language `userID` reads the console in ("en" when unknown).
    func language(of userID: Int64) async throws -> String {
        try await directory?.user(id: userID)?.language ?? "en"
    }

    /// One request, for its owner or an admin; 404 for anyone else (it is not theirs to know of).
    func request(_ id: Int64, viewer: AuthenticatedUser) async throws -> HolidayRequest {
        guard let request = try await repository.request(id: id),
              viewer.isAdmin || request.userID == viewer.id else {
            throw HolidaysError.requestNotFound
        }
        return request
    }

    /// Applies `action` to request `id` for `actor`, under the state machine's rules.
    func apply(_ action: HolidayTransitions.Action, to id: Int64, by actor: AuthenticatedUser, note: String?,
               ip: String? = nil) async throws -> HolidayRequest {
        let settings = try await self.settings()
        let today = today(settings)
        let admins = try await directory?.activeAdminIDs() ?? []
        let anotherAdmin = admins.contains { $0 != actor.id }
        // The owner's language for their notice, read before the write (the directory is not part
        // of this module's transaction); a request that is not there fails inside the write.
        let owner = try await repository.request(id: id)?.userID
        let language: String
        if let owner { language = try await self.language(of: owner) } else { language = "en" }
        // The decider's name goes in the notice's facts; the directory is read before the write.
        let decider = try await directory?.user(id: actor.id).map { $0.displayName.isEmpty ? $0.username : $0.displayName } ?? actor.username
        let now = clock.now()
        let (journal, notices) = (self.journal, self.notices)
        let audited = audit.map { (trail: $0, actor: AuditActor(userID: actor.id, ip: ip)) }
        let request = try await store.write { db -> HolidayRequest in
            guard let current = try HolidaysRepository.request(id: id, in: db), actor.isAdmin || current.userID == actor.id else {
                throw HolidaysError.requestNotFound
            }
            let who = HolidayTransitions.Actor(userID: actor.id, isAdmin: actor.isAdmin, anotherActiveAdmin: anotherAdmin)
            let next: HolidayStatus
            switch HolidayTransitions.next(action, from: current.status, owner: current.userID, start: current.start, today: today, actor: who) {
            case let .success(status): next = status
            case let .failure(.invalidTransition(from, action)):
                throw HolidaysError.invalidTransition(from: from, action: action)
            case let .failure(.forbidden(message)):
                throw HolidaysError.forbidden(message)
            }
            let decision = action != .cancel
            try HolidaysRepository.setStatus(id: id, to: next, decidedBy: decision ? actor.id : nil, at: now, note: decision ? note : nil, in: db)
            return try HolidayBook.recordChange(id, from: current.status, to: next, by: actor.id, note: note, at: now,
                                                language: language, decider: decider,
                                                notices: notices, journal: journal, audit: audited, in: db)
        }
        return request
    }

    static func pastTense(_ action: HolidayTransitions.Action) -> String {
        switch action {
        case .approve: "approved"
        case .reject: "rejected"
        case .reopen: "reopened"
        case .cancel: "cancelled"
        }
    }

    /// `2`, `2.5`.
    static func format(_ days: Double) -> String {
        days == days.rounded() ? String(Int(days)) : String(days)
    }

    // MARK: Admin views

    /// The admin list with filters, pending first, each with the employee's display name.
    func adminList(status: HolidayStatus?, year: Int?, userID: Int64?, typeKey: String?, limit: Int) async throws -> [AdminListItem] {
        let requests = try await repository.adminRequests(status: status, year: year, userID: userID, typeKey: typeKey, limit: limit)
        let names = try await displayNames(Set(requests.map(\.userID)))
        return requests.map { AdminListItem(request: $0, displayName: names[$0.userID]?.displayName ?? "") }
    }

    /// The export of `year` as CSV for a spreadsheet: a UTF-8 byte order mark (so Excel reads
    /// "Lucía" as UTF-8), then every request with a day in the year by start date, people and
    /// leave types named beside their ids.
    func csv(year: Int) async throws -> String {
        let settings = try await self.settings()
        let (first, last) = (Day.firstOf(year), Day.lastOf(year))
        let (requests, calendar) = try await store.read { db in
            (try HolidaysRepository.adminRequests(status: nil, year: year, userID: nil, typeKey: nil, limit: HolidayBook.maxRows, in: db),
             try HolidayBook.workingCalendar(from: first, to: last, settings: settings, in: db))
        }
        let users = try await displayNames(Set(requests.map(\.userID) + requests.compactMap(\.decidedBy)))
        var rows = [["id", "userId", "displayName", "username", "type", "typeName", "start", "end", "halfStart", "halfEnd", "days",
                     "daysInYear", "status", "note", "createdAt", "decidedBy", "decidedByName", "decidedAt", "decisionNote"]]
        for r in requests.sorted(by: { ($0.start, $0.id) < ($1.start, $1.id) }) {
            let from = max(r.start, first), to = min(r.end, last)
            let inYear = calendar.total(from: from, to: to, halfStart: r.halfStart && from == r.start, halfEnd: r.halfEnd && to == r.end)
            let decider = r.decidedBy.flatMap { users[$0] }
            rows.append([String(r.id), String(r.userID), users[r.userID]?.displayName ?? "", users[r.userID]?.username ?? "",
                         r.type.key, r.type.name, r.start.iso, r.end.iso, String(r.halfStart), String(r.halfEnd),
                         HolidayBook.format(r.days), HolidayBook.format(inYear), r.status.rawValue, r.note ?? "", r.createdAt.rfc3339(),
                         r.decidedBy.map(String.init) ?? "", decider.map { $0.displayName.isEmpty ? $0.username : $0.displayName } ?? "",
                         r.decidedAt?.rfc3339() ?? "", r.decisionNote ?? ""])
        }
        return "\u{FEFF}" + CSVTable.text(rows)
    }

    /// The users of `ids`, in one directory lookup.
    func displayNames(_ ids: Set<Int64>) async throws -> [Int64: DirectoryUser] {
        guard let directory, !ids.isEmpty else { return [:] }
        return try await directory.users(ids: Array(ids))
    }

    /// What an admin sees before deciding.
    struct Detail: Sendable {
        let request: HolidayRequest
        let user: DirectoryUser?
        let summary: HolidaySummary
        let otherRequests: [HolidayRequest]
        let alsoAway: [Overlap]
        let overLimit: Bool
        let limit: Int?
    }

    /// Someone else away, or asking to be, on a day of the request being decided.
    struct Overlap: Sendable {
        let request: HolidayRequest
        let displayName: String
    }

    func detail(_ id: Int64) async throws -> Detail {
        let settings = try await self.settings()
        let today = today(settings)
        let found = try await store.read { db -> (HolidayRequest, HolidaySummary, [HolidayRequest], [HolidayRequest], WorkingCalendar)? in
            guard let request = try HolidaysRepository.request(id: id, in: db) else { return nil }
            let year = request.start.year
            let summary = try HolidayBook.summary(userID: request.userID, year: year, settings: settings, today: today, in: db)
            let others = try HolidaysRepository.requests(userID: request.userID, year: year, in: db).filter { $0.id != id }
            let away = try HolidaysRepository.requests(from: request.start, to: request.end, statuses: [.approved, .pending],
                                                       limit: HolidayBook.maxRows, in: db)
                .filter { $0.userID != request.userID }
            let calendar = try HolidayBook.workingCalendar(from: request.start, to: request.end, settings: settings, in: db)
            return (request, summary, others, away, calendar)
        }
        guard let (request, summary, others, away, calendar) = found else { throw HolidaysError.requestNotFound }
        let users = try await displayNames(Set(away.map(\.userID) + [request.userID]))
        let awayActive = away.filter { users[$0.userID]?.active ?? true }
        let overLimit = settings.maxSimultaneousAbsences.map {
            HolidayBook.passesLimit($0, request, approved: awayActive.filter { $0.status == .approved }, calendar: calendar)
        } ?? false
        return Detail(request: request, user: users[request.userID], summary: summary, otherRequests: others,
                      alsoAway: awayActive.map { Overlap(request: $0, displayName: users[$0.userID]?.displayName ?? "") },
                      overLimit: overLimit, limit: settings.maxSimultaneousAbsences)
    }

    /// Whether approving `request` puts more than `limit` people away on one of its working days:
    /// the distinct people of `approved` away that day, plus this employee. Pending requests are
    /// not counted (they may yet be refused); the detail lists them with their status.
    static func passesLimit(_ limit: Int, _ request: HolidayRequest, approved: [HolidayRequest], calendar: WorkingCalendar) -> Bool {
        for day in request.start...request.end where calendar.isWorkingDay(day) {
            let people = Set(approved.filter { $0.start <= day && day <= $0.end }.map(\.userID)).count + 1
            if people > limit { return true }
        }
        return false
    }

    // MARK: Calendar

    /// One absence on the team calendar.
    struct Absence: Sendable {
        let request: HolidayRequest
        let displayName: String
        /// Whether the viewer may see the leave type (an admin, or their own).
        let typeVisible: Bool

        /// The calendar item (see its `Encodable` conformance), as a tree.
        var json: JSONValue { jsonValue }

        /// Appends the same JSON as `json` straight to `out`, keys sorted as `Response.json` sorts
        /// them: a month of a large company is hundreds of absences, and building the tree cost
        /// more than writing the text.
        func write(into out: inout [UInt8]) {
            func raw(_ k: StaticString) { out.append(contentsOf: UnsafeBufferPointer(start: k.utf8Start, count: k.utf8CodeUnitCount)) }
            let r = request
            raw(#"{"displayName":"#); JSONValue.writeString(displayName, into: &out)
            raw(#","end":""#); out.append(contentsOf: r.end.iso.utf8)
            raw(#"","halfEnd":"#); raw(r.halfEnd ? "true" : "false")
            raw(#","halfStart":"#); raw(r.halfStart ? "true" : "false")
            raw(#","start":""#); out.append(contentsOf: r.start.iso.utf8)
            raw(#"","status":"#); JSONValue.writeString(r.status.rawValue, into: &out)
            raw(#","type":"#)
            if typeVisible { JSONValue.writeString(r.type.key, into: &out) } else { raw("null") }
            raw(#","typeName":"#); JSONValue.writeString(typeVisible ? r.type.name : "away", into: &out)
            raw(#","userId":"#); out.append(contentsOf: String(r.userID).utf8)
            out.append(UInt8(ascii: "}"))
        }

        /// `{"items": [...]}` of `absences`, as JSON bytes.
        static func page(_ absences: [Absence]) -> [UInt8] {
            var out: [UInt8] = []
            out.reserveCapacity(16 + absences.count * 200)
            out.append(contentsOf: #"{"items":["#.utf8)
            for (i, absence) in absences.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                absence.write(into: &out)
            }
            out.append(contentsOf: "]}".utf8)
            return out
        }
    }

    /// Who is away in `from…to` (approved; admins also see pending), active employees only.
    func calendar(from: Day, to: Day, viewer: AuthenticatedUser) async throws -> [Absence] {
        let statuses: [HolidayStatus] = viewer.isAdmin ? [.approved, .pending] : [.approved]
        let requests = try await repository.requests(from: from, to: to, statuses: statuses, limit: HolidayBook.maxRows)
        let users = try await displayNames(Set(requests.map(\.userID)))
        return requests.compactMap { r in
            guard let user = users[r.userID], user.active else { return nil }
            return Absence(request: r, displayName: user.displayName, typeVisible: viewer.isAdmin || r.userID == viewer.id)
        }
    }

    /// Approved absences for the feed of `viewer` (a year back, two ahead).
    func feed(viewer: DirectoryUser) async throws -> [Absence] {
        let settings = try await self.settings()
        let today = today(settings)
        let me = AuthenticatedUser(id: viewer.id, username: viewer.username, role: viewer.role, sessionID: nil, viaCookie: false)
        let requests = try await repository.requests(from: today.advanced(by: -366), to: today.advanced(by: 2 * 366),
                                                     statuses: [.approved], limit: HolidayBook.maxRows)
        let users = try await displayNames(Set(requests.map(\.userID)))
        return requests.compactMap { r in
            guard let user = users[r.userID], user.active else { return nil }
            return Absence(request: r, displayName: user.displayName, typeVisible: me.isAdmin || r.userID == me.id)
        }
    }

    /// Issues a new feed token for `userID`, revoking the previous one; returns the token.
    func newCalendarToken(for userID: Int64) async throws -> String {
        let token = Crypto.base64URL(Crypto.randomBytes(32))
        let hash = HolidayBook.tokenHash(token)
        let now = clock.now()
        try await repository.setCalendarToken(userID: userID, hash: hash, at: now)
        return token
    }

    /// The owner of a feed token, if it is the current one of an active user.
    func calendarTokenOwner(_ token: String) async throws -> DirectoryUser? {
        guard (20...100).contains(token.utf8.count) else { return nil }
        let hash = HolidayBook.tokenHash(token)
        guard let owner = try await repository.calendarTokenOwner(hash: hash),
              let user = try await directory?.user(id: owner), user.active else { return nil }
        return user
    }

    static func tokenHash(_ token: String) -> String { Crypto.hex(Crypto.sha256(Array(token.utf8))) }

    // MARK: Leave types, public holidays, allowances

    func leaveTypes() async throws -> [LeaveType] {
        try await repository.leaveTypes()
    }

    func publicHolidays(year: Int) async throws -> [PublicHoliday] {
        try await repository.publicHolidays(year: year)
    }

    /// Adds public holidays all together or none; throws naming the first taken date.
    /// Existing requests keep the `days` they were counted with.
    func addPublicHolidays(_ entries: [(Day, String)], by actor: AuditActor) async throws -> [PublicHoliday] {
        try await HolidayBook.addPublicHolidays(entries, store: store, at: clock.now(), audit: audit.map { ($0, actor) })
    }

    /// `audit`: the trail and who adds them; one entry per holiday, in the same transaction.
    static func addPublicHolidays(_ entries: [(Day, String)], store: Store, at now: Timestamp,
                                  audit: (any AuditTrail, AuditActor)? = nil) async throws -> [PublicHoliday] {
        try await store.write { db in
            var added: [PublicHoliday] = []
            for (date, name) in entries {
                guard let holiday = try HolidaysRepository.insertPublicHoliday(date: date, name: name, at: now, in: db) else {
                    throw HolidaysError.publicHolidayExists(date)
                }
                try audit?.0.record(audit!.1.record("holiday.public_added", "\(date.iso) \(name)"), in: db)
                added.append(holiday)
            }
            return added
        }
    }

    /// Removes a public holiday; `publicHolidayNotFound` when there is none with `id`.
    func deletePublicHoliday(_ id: Int64, by actor: AuditActor) async throws {
        let audit = self.audit
        try await store.write { db in
            let holiday = try HolidaysRepository.publicHoliday(id: id, in: db)
            guard try HolidaysRepository.deletePublicHoliday(id: id, in: db) else { throw HolidaysError.publicHolidayNotFound }
            try audit?.record(actor.record("holiday.public_deleted", holiday.map { "\($0.date.iso) \($0.name)" } ?? "#\(id)"), in: db)
        }
    }

    /// Sets `userID`'s allowance for `year`; `userNotFound` when the directory has nobody with that id.
    func setAllowance(userID: Int64, year: Int, days: Double, by actor: AuditActor) async throws {
        guard try await directory?.user(id: userID) != nil else { throw HolidaysError.userNotFound }
        try await HolidayBook.setAllowance(userID: userID, year: year, days: days, store: store, at: clock.now(),
                                           audit: audit.map { ($0, actor) })
    }

    static func setAllowance(userID: Int64, year: Int, days: Double, store: Store, at now: Timestamp,
                             audit: (any AuditTrail, AuditActor)? = nil) async throws {
        try await store.write { db in
            let before = try HolidaysRepository.allowance(userID: userID, year: year, in: db)
            try HolidaysRepository.setAllowance(userID: userID, year: year, days: days, at: now, in: db)
            if let (trail, actor) = audit {
                let detail = "\(year): \(before.map(format) ?? "company default") → \(format(days)) days"
                try trail.record(actor.record("holiday.allowance_set", detail, target: userID), in: db)
            }
        }
    }

    // MARK: Leave types

    /// Adds a leave type; `leaveTypeExists` when its key is taken.
    func addLeaveType(key: String, name: String, countsAgainstAllowance: Bool, needsApproval: Bool, by actor: AuditActor) async throws -> LeaveType {
        let (audit, now) = (self.audit, clock.now())
        return try await store.write { db in
            guard let type = try HolidaysRepository.insertLeaveType(key: key, name: name, countsAgainstAllowance: countsAgainstAllowance,
                                                                    needsApproval: needsApproval, at: now, in: db) else {
                throw HolidaysError.leaveTypeExists(key: key)
            }
            try audit?.record(actor.record("holiday.leave_type_added", "\(key) \"\(name)\"" + LeaveType.rules(type)), in: db)
            return type
        }
    }

    /// Changes what is given of a leave type; `leaveTypeNotFound` when there is none with `id`.
    func updateLeaveType(_ id: Int64, name: String?, countsAgainstAllowance: Bool?, needsApproval: Bool?, by actor: AuditActor) async throws -> LeaveType {
        let audit = self.audit
        return try await store.write { db -> LeaveType in
            guard let before = try HolidaysRepository.leaveType(id: id, in: db) else { throw HolidaysError.leaveTypeNotFound }
            try HolidaysRepository.updateLeaveType(id: id, name: name, countsAgainstAllowance: countsAgainstAllowance,
                                                   needsApproval: needsApproval, in: db)
            guard let after = try HolidaysRepository.leaveType(id: id, in: db) else { throw HolidaysError.leaveTypeNotFound }
            var what: [String] = []
            if before.name != after.name { what.append("name \"\(before.name)\" → \"\(after.name)\"") }
            if before.countsAgainstAllowance != after.countsAgainstAllowance {
                what.append(after.countsAgainstAllowance ? "counts against the allowance" : "does not count against the allowance")
            }
            if before.needsApproval != after.needsApproval { what.append(after.needsApproval ? "needs approval" : "needs no approval") }
            if !what.isEmpty {
                try audit?.record(actor.record("holiday.leave_type_updated", "\(after.key): " + what.joined(separator: ", ")), in: db)
            }
            return after
        }
    }

    func deleteLeaveType(_ id: Int64, by actor: AuditActor) async throws {
        let audit = self.audit
        try await store.write { db in
            guard let type = try HolidaysRepository.leaveType(id: id, in: db) else { throw HolidaysError.leaveTypeNotFound }
            if type.key == "vacation" { throw HolidaysError.defaultLeaveType }
            if try HolidaysRepository.isLeaveTypeUsed(id: id, in: db) {
                throw HolidaysError.leaveTypeInUse
            }
            _ = try HolidaysRepository.deleteLeaveType(id: id, in: db)
            try audit?.record(actor.record("holiday.leave_type_deleted", "\(type.key) \"\(type.name)\""), in: db)
        }
    }
}

extension LeaveType {
    /// " (does not count against the allowance, needs no approval)" for a type that differs from
    /// the defaults; "" otherwise.
    static func rules(_ type: LeaveType) -> String {
        var rules: [String] = []
        if !type.countsAgainstAllowance { rules.append("does not count against the allowance") }
        if !type.needsApproval { rules.append("needs no approval") }
        return rules.isEmpty ? "" : " (" + rules.joined(separator: ", ") + ")"
    }
}

/// `AbsenceDirectory` for accounts and messaging: who is on approved leave today.
struct HolidayAbsences: AbsenceDirectory {
    let book: HolidayBook

    func awayUntil(userIDs: [Int64]) async throws -> [Int64: String] {
        guard !userIDs.isEmpty else { return [:] }
        let today = book.today(try await book.settings())
        let found = try await book.repository.awayUntil(userIDs: userIDs, on: today)
        return found.mapValues(\.iso)
    }
}
