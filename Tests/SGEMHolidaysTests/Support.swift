import SGEMApp
import SGEMCore
@testable import SGEMHolidays
import SGEMShell
import SGEMStore
import SGEMSupport
import SGEMTestSupport

// Helpers that speak the holidays API to an `Office` (SGEMTestSupport).

extension Office {
    /// The module's clock, to pin "now".
    var clock: HolidaysClock { services.resolve(HolidaysClock.self)! }

    /// Pins the clock at `rfc3339` (e.g. "2026-06-01T10:00:00Z").
    func pin(_ rfc3339: String) { clock.pin(Timestamp(rfc3339: rfc3339)!) }

    /// Files a request as `who`; returns the created request.
    @discardableResult
    func request(_ who: String, _ start: String, _ end: String, type: String? = nil, halfStart: Bool = false, halfEnd: Bool = false,
                 note: String? = nil) async throws -> JSONValue {
        var body: [(String, JSONValue)] = [("start", .string(start)), ("end", .string(end))]
        if let type { body.append(("type", .string(type))) }
        if halfStart { body.append(("halfStart", true)) }
        if halfEnd { body.append(("halfEnd", true)) }
        if let note { body.append(("note", .string(note))) }
        return try await expect(201, "POST", "/holidays", as: who, .object(body))
    }

    /// `who`'s summary of `year`.
    func summary(_ who: String, _ year: Int) async throws -> JSONValue {
        try await expect(200, "GET", "/holidays?year=\(year)", as: who)["summary"] ?? .null
    }
}

extension JSONValue {
    var double: Double? { numberValue }
    var int64: Int64? { numberValue.map { Int64($0) } }
}
