import SGEMCore
import SGEMStore
import SGEMSupport

/// All of the holidays module's SQL. Every function takes the connection of the caller's
/// `store.read` / `store.write`, so a check and the insert it allows, or a decision with its
/// history, notice and event, share one transaction. Calendar dates are `YYYY-MM-DD` text (they
/// compare as dates), timestamps INTEGER milliseconds, day counts REAL (halves are exact).
struct HolidaysRepository: Sendable {
    static func registerMigrations(_ migrations: inout MigrationList) {
        migrations.add("holidays.001_holidays", sql: """
            CREATE TABLE holidays_leave_types (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                key TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                counts_against_allowance INTEGER NOT NULL CHECK (counts_against_allowance IN (0, 1)),
                needs_approval INTEGER NOT NULL CHECK (needs_approval IN (0, 1)),
                created_at INTEGER NOT NULL
            );
            INSERT INTO holidays_leave_types (key, name, counts_against_allowance, needs_approval, created_at)
            VALUES ('vacation', 'Vacation', 1, 1, 0);
            CREATE TABLE holidays_requests (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                user_id INTEGER NOT NULL,
                type_id INTEGER NOT NULL REFERENCES holidays_leave_types (id),
                start_date TEXT NOT NULL,
                end_date TEXT NOT NULL,
                half_start INTEGER NOT NULL CHECK (half_start IN (0, 1)),
                half_end INTEGER NOT NULL CHECK (half_end IN (0, 1)),
                days REAL NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('pending', 'approved', 'rejected', 'cancelled')),
                note TEXT,
                created_at INTEGER NOT NULL,
                decided_by INTEGER,
                decided_at INTEGER,
                decision_note TEXT,
                CHECK (start_date <= end_date)
            );
            CREATE INDEX holidays_requests_user ON holidays_requests (user_id, start_date);
            CREATE INDEX holidays_requests_dates ON holidays_requests (status, start_date, end_date);
            CREATE TABLE holidays_request_years (
                request_id INTEGER NOT NULL REFERENCES holidays_requests (id),
                year INTEGER NOT NULL,
                days REAL NOT NULL,
                PRIMARY KEY (request_id, year)
            );
            CREATE INDEX holidays_request_years_year ON holidays_request_years (year, request_id);
            CREATE TABLE holidays_history (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                request_id INTEGER NOT NULL REFERENCES holidays_requests (id),
                from_status TEXT,
                to_status TEXT NOT NULL,
                by_user_id INTEGER NOT NULL,
                at INTEGER NOT NULL,
                note TEXT
            );
            CREATE INDEX holidays_history_request ON holidays_history (request_id, id);
            CREATE TABLE holidays_allowances (
                user_id INTEGER NOT NULL,
                year INTEGER NOT NULL,
                days REAL NOT NULL,
                updated_at INTEGER NOT NULL,
                PRIMARY KEY (user_id, year)
            );
            CREATE TABLE holidays_public (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                date TEXT NOT NULL UNIQUE,
                name TEXT NOT NULL,
                created_at INTEGER NOT NULL
            );
            CREATE TABLE holidays_calendar_tokens (
                user_id INTEGER PRIMARY KEY,
                token_hash TEXT NOT NULL UNIQUE,
                created_at INTEGER NOT NULL
            );
            """)
    }

    // MARK: Leave types

    private static let typeColumns = "t.id AS type_id, t.key AS type_key, t.name AS type_name, t.counts_against_allowance, t.needs_approval"

    /// A leave type from `typeColumns`, which start at column `first` of the row.
    private static func leaveType(_ row: Row, first: Int) -> LeaveType? {
        guard let id = row.int64(at: first), let key = row.string(at: first + 1), let name = row.string(at: first + 2) else { return nil }
        return LeaveType(id: id, key: key, name: name, countsAgainstAllowance: row.bool(at: first + 3) ?? true,
                         needsApproval: row.bool(at: first + 4) ?? true)
    }

    private static func leaveType(_ row: Row) -> LeaveType? { leaveType(row, first: 0) }

    static func leaveTypes(in db: Database) throws -> [LeaveType] {
        try db.query("SELECT \(typeColumns) FROM holidays_leave_types t ORDER BY t.id").compactMap(leaveType)
    }

    static func leaveType(id: Int64, in db: Database) throws -> LeaveType? {
        try db.queryOne("SELECT \(typeColumns) FROM holidays_leave_types t WHERE t.id = ?", id).flatMap(leaveType)
    }

    static func leaveType(key: String, in db: Database) throws -> LeaveType? {
        try db.queryOne("SELECT \(typeColumns) FROM holidays_leave_types t WHERE t.key = ?", key).flatMap(leaveType)
    }

    /// Inserts a leave type; nil when the key is taken.
    static func insertLeaveType(key: String, name: String, countsAgainstAllowance: Bool, needsApproval: Bool,
                                at time: Timestamp, in db: Database) throws -> LeaveType? {
        guard let row = try db.queryOne("""
            INSERT INTO holidays_leave_types (key, name, counts_against_allowance, needs_approval, created_at)
            VALUES (?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING RETURNING id
            """, key, name, countsAgainstAllowance, needsApproval, time), let id = row.int64("id") else { return nil }
        return try leaveType(id: id, in: db)
    }

    static func updateLeaveType(id: Int64, name: String?, countsAgainstAllowance: Bool?, needsApproval: Bool?, in db: Database) throws {
        try db.execute("""
            UPDATE holidays_leave_types SET name = COALESCE(?, name),
                counts_against_allowance = COALESCE(?, counts_against_allowance), needs_approval = COALESCE(?, needs_approval)
            WHERE id = ?
            """, name, countsAgainstAllowance, needsApproval, id)
    }

    static func isLeaveTypeUsed(id: Int64, in db: Database) throws -> Bool {
        try db.queryOne("SELECT 1 AS used FROM holidays_requests WHERE type_id = ? LIMIT 1", id) != nil
    }

    static func deleteLeaveType(id: Int64, in db: Database) throws -> Bool {
        try db.execute("DELETE FROM holidays_leave_types WHERE id = ?", id)
        return db.changes > 0
    }

    // MARK: Public holidays

    private static func publicHoliday(_ row: Row) -> PublicHoliday? {
        guard let id = row.int64("id"), let date = row.string("date").flatMap(Day.init(iso:)), let name = row.string("name") else { return nil }
        return PublicHoliday(id: id, date: date, name: name)
    }

    static func publicHolidays(from: Day, to: Day, in db: Database) throws -> [PublicHoliday] {
        try db.query("SELECT id, date, name FROM holidays_public WHERE date >= ? AND date <= ? ORDER BY date", from.iso, to.iso)
            .compactMap(publicHoliday)
    }

    /// Inserts a public holiday; nil when that date already has one.
    static func insertPublicHoliday(date: Day, name: String, at time: Timestamp, in db: Database) throws -> PublicHoliday? {
        try db.queryOne("""
            INSERT INTO holidays_public (date, name, created_at) VALUES (?, ?, ?)
            ON CONFLICT (date) DO NOTHING RETURNING id, date, name
            """, date.iso, name, time).flatMap(publicHoliday)
    }

    static func publicHoliday(id: Int64, in db: Database) throws -> PublicHoliday? {
        try db.queryOne("SELECT id, date, name FROM holidays_public WHERE id = ?", id).flatMap(publicHoliday)
    }

    static func deletePublicHoliday(id: Int64, in db: Database) throws -> Bool {
        try db.execute("DELETE FROM holidays_public WHERE id = ?", id)
        return db.changes > 0
    }

    // MARK: Allowances

    /// The per-user allowance of `year`, nil when the company default applies.
    static func allowance(userID: Int64, year: Int, in db: Database) throws -> Double? {
        try db.queryOne("SELECT days FROM holidays_allowances WHERE user_id = ? AND year = ?", userID, year)?.double("days")
    }

    static func setAllowance(userID: Int64, year: Int, days: Double, at time: Timestamp, in db: Database) throws {
        try db.execute("""
            INSERT INTO holidays_allowances (user_id, year, days, updated_at) VALUES (?, ?, ?, ?)
            ON CONFLICT (user_id, year) DO UPDATE SET days = excluded.days, updated_at = excluded.updated_at
            """, userID, year, days, time)
    }

    // MARK: Requests

    /// A request's columns; `request(_:)` reads them by position, in this order (the type's last).
    private static let requestColumns = """
        r.id, r.user_id, r.start_date, r.end_date, r.half_start, r.half_end, r.days, r.status, r.note, r.created_at,
        r.decided_by, r.decided_at, r.decision_note, \(typeColumns)
        """
    private static let requestFrom = "holidays_requests r JOIN holidays_leave_types t ON t.id = r.type_id"

    private static func request(_ row: Row) -> HolidayRequest? {
        guard let id = row.int64(at: 0), let user = row.int64(at: 1), let type = leaveType(row, first: 13),
              let start = row.string(at: 2).flatMap(Day.init(iso:)), let end = row.string(at: 3).flatMap(Day.init(iso:)),
              let status = row.string(at: 7).flatMap(HolidayStatus.init(rawValue:)), let created = row.timestamp(at: 9) else { return nil }
        return HolidayRequest(id: id, userID: user, type: type, start: start, end: end, halfStart: row.bool(at: 4) ?? false,
                              halfEnd: row.bool(at: 5) ?? false, days: row.double(at: 6) ?? 0, status: status,
                              note: row.string(at: 8), createdAt: created, decidedBy: row.int64(at: 10),
                              decidedAt: row.timestamp(at: 11), decisionNote: row.string(at: 12), history: [])
    }

    /// What a new request is stored with.
    struct NewRequest: Sendable {
        let userID: Int64
        let type: LeaveType
        let start: Day
        let end: Day
        let halfStart: Bool
        let halfEnd: Bool
        let perYear: [Int: Double]
        let status: HolidayStatus
        let note: String?
        let createdAt: Timestamp
    }

    /// Inserts a request with its per-year ledger; returns its id.
    static func insertRequest(_ new: NewRequest, in db: Database) throws -> Int64 {
        let total = new.perYear.values.reduce(0, +)
        let decided = new.status == .approved
        guard let id = try db.queryOne("""
            INSERT INTO holidays_requests (user_id, type_id, start_date, end_date, half_start, half_end, days, status, note, created_at,
                decided_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """, new.userID, new.type.id, new.start.iso, new.end.iso, new.halfStart, new.halfEnd, total, new.status.rawValue, new.note,
            new.createdAt, decided ? new.createdAt : nil)?.int64("id") else {
            throw StoreError(code: .system, message: "inserting a holiday request returned no id")
        }
        for (year, days) in new.perYear.sorted(by: { $0.key < $1.key }) {
            try db.execute("INSERT INTO holidays_request_years (request_id, year, days) VALUES (?, ?, ?)", id, year, days)
        }
        return id
    }

    static func appendHistory(requestID: Int64, _ entry: HistoryEntry, in db: Database) throws {
        try db.execute("INSERT INTO holidays_history (request_id, from_status, to_status, by_user_id, at, note) VALUES (?, ?, ?, ?, ?, ?)",
                       requestID, entry.from?.rawValue, entry.to.rawValue, entry.byUserID, entry.at, entry.note)
    }

    /// Moves a request to `status`; a decision (approve, reject, reopen) records who and when.
    static func setStatus(id: Int64, to status: HolidayStatus, decidedBy: Int64?, at time: Timestamp, note: String?, in db: Database) throws {
        if let decidedBy {
            try db.execute("UPDATE holidays_requests SET status = ?, decided_by = ?, decided_at = ?, decision_note = ? WHERE id = ?",
                           status.rawValue, decidedBy, time, note, id)
        } else {
            try db.execute("UPDATE holidays_requests SET status = ? WHERE id = ?", status.rawValue, id)
        }
    }

    /// One request with its history.
    static func request(id: Int64, in db: Database) throws -> HolidayRequest? {
        guard var request = try db.queryOne("SELECT \(requestColumns) FROM \(requestFrom) WHERE r.id = ?", id).flatMap(request) else { return nil }
        request.history = try history(of: [id], in: db)[id] ?? []
        return request
    }

    /// The histories of `ids`, oldest step first.
    static func history(of ids: [Int64], in db: Database) throws -> [Int64: [HistoryEntry]] {
        var out: [Int64: [HistoryEntry]] = [:]
        var start = 0
        while start < ids.count {
            let chunk = Array(ids[start..<min(ids.count, start + 500)])
            start += chunk.count
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            for row in try db.query("""
                SELECT request_id, from_status, to_status, by_user_id, at, note FROM holidays_history
                WHERE request_id IN (\(marks)) ORDER BY id
                """, bindings: chunk.map { $0 as any SQLBindable }) {
                guard let rid = row.int64("request_id"), let to = row.string("to_status").flatMap(HolidayStatus.init(rawValue:)),
                      let by = row.int64("by_user_id"), let at = row.timestamp("at") else { continue }
                out[rid, default: []].append(HistoryEntry(from: row.string("from_status").flatMap(HolidayStatus.init(rawValue:)), to: to,
                                                          byUserID: by, at: at, note: row.string("note")))
            }
        }
        return out
    }

    private static func withHistory(_ requests: [HolidayRequest], in db: Database) throws -> [HolidayRequest] {
        let histories = try history(of: requests.map(\.id), in: db)
        return requests.map { var r = $0; r.history = histories[r.id] ?? []; return r }
    }

    /// `userID`'s requests with a day in `year`, newest start first.
    static func requests(userID: Int64, year: Int, in db: Database) throws -> [HolidayRequest] {
        try withHistory(db.query("""
            SELECT \(requestColumns) FROM \(requestFrom)
            WHERE r.user_id = ? AND r.start_date <= ? AND r.end_date >= ? ORDER BY r.start_date DESC, r.id DESC
            """, userID, Day.lastOf(year).iso, Day.firstOf(year).iso).compactMap(request), in: db)
    }

    /// Whether `userID` has a pending or approved request sharing a day with `start…end`.
    static func overlaps(userID: Int64, start: Day, end: Day, in db: Database) throws -> Bool {
        try db.queryOne("""
            SELECT 1 AS hit FROM holidays_requests
            WHERE user_id = ? AND status IN ('pending', 'approved') AND start_date <= ? AND end_date >= ? LIMIT 1
            """, userID, end.iso, start.iso) != nil
    }

    /// Approved and pending days of `year` in types that count against the allowance.
    static func ledger(userID: Int64, year: Int, in db: Database) throws -> (approved: Double, pending: Double) {
        var approved = 0.0, pending = 0.0
        for row in try db.query("""
            SELECT r.status, SUM(y.days) AS days FROM holidays_request_years y
            JOIN holidays_requests r ON r.id = y.request_id JOIN holidays_leave_types t ON t.id = r.type_id
            WHERE r.user_id = ? AND y.year = ? AND t.counts_against_allowance = 1 AND r.status IN ('pending', 'approved')
            GROUP BY r.status
            """, userID, year) {
            if row.string("status") == "approved" { approved = row.double("days") ?? 0 } else { pending = row.double("days") ?? 0 }
        }
        return (approved, pending)
    }

    /// `userID`'s pending and approved counting requests with a day in `from…to`.
    static func countingRequests(userID: Int64, from: Day, to: Day, in db: Database) throws -> [HolidayRequest] {
        try db.query("""
            SELECT \(requestColumns) FROM \(requestFrom)
            WHERE r.user_id = ? AND r.status IN ('pending', 'approved') AND t.counts_against_allowance = 1
              AND r.start_date <= ? AND r.end_date >= ?
            """, userID, to.iso, from.iso).compactMap(request)
    }

    /// The admin list: filters; pending first, the soonest start first (the most urgent decision
    /// leads); then the rest, the latest start first.
    static func adminRequests(status: HolidayStatus?, year: Int?, userID: Int64?, typeKey: String?, limit: Int,
                              in db: Database) throws -> [HolidayRequest] {
        let first = year.map { Day.firstOf($0).iso }
        let last = year.map { Day.lastOf($0).iso }
        return try withHistory(db.query("""
            SELECT \(requestColumns) FROM \(requestFrom)
            WHERE (?1 IS NULL OR r.status = ?1) AND (?2 IS NULL OR (r.start_date <= ?2 AND r.end_date >= ?3))
              AND (?4 IS NULL OR r.user_id = ?4) AND (?5 IS NULL OR t.key = ?5)
            ORDER BY CASE r.status WHEN 'pending' THEN 0 ELSE 1 END,
                CASE r.status WHEN 'pending' THEN r.start_date END, CASE r.status WHEN 'pending' THEN r.id END,
                r.start_date DESC, r.id DESC LIMIT ?6
            """, status?.rawValue, last, first, userID, typeKey, limit).compactMap(request), in: db)
    }

    /// Requests with a day in `from…to` whose status is in `statuses`, by start date; at most `limit`.
    static func requests(from: Day, to: Day, statuses: [HolidayStatus], limit: Int, in db: Database) throws -> [HolidayRequest] {
        let approved = statuses.contains(.approved), pending = statuses.contains(.pending)
        return try db.query("""
            SELECT \(requestColumns) FROM \(requestFrom)
            WHERE ((?1 = 1 AND r.status = 'approved') OR (?2 = 1 AND r.status = 'pending')) AND r.start_date <= ?3 AND r.end_date >= ?4
            ORDER BY r.start_date, r.user_id, r.id LIMIT ?5
            """, approved, pending, to.iso, from.iso, limit).compactMap(request)
    }

    /// For each of `userIDs` on approved leave on `day`, the last day of that leave.
    static func awayUntil(userIDs: [Int64], on day: Day, in db: Database) throws -> [Int64: Day] {
        var out: [Int64: Day] = [:]
        var start = 0
        while start < userIDs.count {
            let chunk = Array(userIDs[start..<min(userIDs.count, start + 500)])
            start += chunk.count
            let marks = Array(repeating: "?", count: chunk.count).joined(separator: ", ")
            let bindings: [any SQLBindable] = [day.iso, day.iso] + chunk.map { $0 as any SQLBindable }
            for row in try db.query("""
                SELECT user_id, MAX(end_date) AS until FROM holidays_requests
                WHERE status = 'approved' AND start_date <= ? AND end_date >= ? AND user_id IN (\(marks))
                GROUP BY user_id
                """, bindings: bindings) {
                if let user = row.int64("user_id"), let until = row.string("until").flatMap(Day.init(iso:)) { out[user] = until }
            }
        }
        return out
    }

    // MARK: Calendar feed tokens

    /// Stores `userID`'s feed token hash, replacing (revoking) the previous one.
    static func setCalendarToken(userID: Int64, hash: String, at time: Timestamp, in db: Database) throws {
        try db.execute("""
            INSERT INTO holidays_calendar_tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)
            ON CONFLICT (user_id) DO UPDATE SET token_hash = excluded.token_hash, created_at = excluded.created_at
            """, userID, hash, time)
    }

    static func calendarTokenOwner(hash: String, in db: Database) throws -> Int64? {
        try db.queryOne("SELECT user_id FROM holidays_calendar_tokens WHERE token_hash = ?", hash)?.int64("user_id")
    }
}
