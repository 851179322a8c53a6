import SGEMContracts
import SGEMCore
import SGEMSupport
import Testing

@Suite("Holiday notice wording from facts")
struct HolidayNoticeFactsTests {
    static func facts(_ start: String, _ end: String, halfStart: Bool = false, halfEnd: Bool = false, days: Double,
                      decider: String? = "Marta", note: String? = nil) -> HolidayNoticeFacts {
        facts(.approved, start, end, halfStart: halfStart, halfEnd: halfEnd, days: days, decider: decider, note: note)
    }

    static func facts(_ action: HolidayNoticeFacts.Action, _ start: String, _ end: String, halfStart: Bool = false,
                      halfEnd: Bool = false, days: Double, type: (String, String) = ("vacation", "Vacation"),
                      decider: String? = "Marta", note: String? = nil) -> HolidayNoticeFacts {
        HolidayNoticeFacts(action: action, start: start, end: end, halfStart: halfStart, halfEnd: halfEnd, workingDays: days,
                           typeKey: type.0, typeName: type.1, decider: decider, note: note)
    }

    @Test("one day and a span, in English and Spanish, in words (fixed dates)", arguments: [
        (facts("2026-12-11", "2026-12-11", halfEnd: true, days: 0.5), "en",
         "Vacation request approved", "Marta approved your vacation request: Friday 11 December 2026, morning only."),
        (facts("2026-12-11", "2026-12-11", halfEnd: true, days: 0.5), "es",
         "Solicitud de vacaciones aprobada", "Marta ha aprobado tu solicitud de vacaciones: viernes 11 de diciembre de 2026, solo por la mañana."),
        (facts("2026-12-28", "2027-01-08", days: 8), "en",
         "Vacation request approved", "Marta approved your vacation request: from 28 December 2026 to 8 January 2027, 8 working days."),
        (facts("2026-12-28", "2027-01-08", days: 8), "es",
         "Solicitud de vacaciones aprobada", "Marta ha aprobado tu solicitud de vacaciones: del 28 de diciembre de 2026 al 8 de enero de 2027, 8 días laborables."),
        (facts(.rejected, "2027-03-01", "2027-03-01", halfStart: true, days: 0.5, type: ("training", "Training")), "en",
         "Training request not approved", "Marta turned down your Training request: Monday 1 March 2027, afternoon only."),
        (facts(.cancelled, "2027-03-01", "2027-03-05", halfStart: true, halfEnd: true, days: 4, type: ("training", "Formación")), "es",
         "Solicitud de Formación cancelada",
         "Marta ha cancelado tu solicitud de Formación: del 1 de marzo de 2027 (por la tarde) al 5 de marzo de 2027 (por la mañana), 4 días laborables."),
        (facts(.reopened, "2027-02-01", "2027-02-03", days: 2.5, decider: nil), "es",
         "Solicitud de vacaciones reabierta", "Tu solicitud de vacaciones ha sido reabierta: del 1 de febrero de 2027 al 3 de febrero de 2027, 2,5 días laborables."),
        (facts("2027-02-01", "2027-02-02", days: 1), "en",
         "Vacation request approved", "Marta approved your vacation request: from 1 February 2027 to 2 February 2027, 1 working day."),
    ] as [(HolidayNoticeFacts, String, String, String)])
    func wording(facts: HolidayNoticeFacts, language: String, title: String, body: String) {
        let text = facts.text(in: language)
        #expect(text.title == title)
        #expect(text.body == body)
        #expect(!text.body.contains("-12-") && !text.body.contains("2026-"), "never YYYY-MM-DD")
    }

    @Test("a note follows the sentence under its label in the reader's language")
    func note() {
        let f = HolidayNoticeFactsTests.facts(.rejected, "2026-12-11", "2026-12-11", days: 1, note: "falta gente")
        #expect(f.text(in: "es").body == "Marta ha rechazado tu solicitud de vacaciones: viernes 11 de diciembre de 2026.\n\nNota: falta gente")
        #expect(f.text(in: "en").body == "Marta turned down your vacation request: Friday 11 December 2026.\n\nNote: falta gente")
    }

    @Test("the stored JSON reads back as the same facts; anything else is no facts")
    func storedForm() throws {
        let f = HolidayNoticeFactsTests.facts("2026-12-28", "2027-01-08", halfStart: true, days: 7.5, note: "ok")
        #expect(HolidayNoticeFacts(stored: f.json.serialized()) == f)
        #expect(HolidayNoticeFacts(stored: nil) == nil)
        #expect(HolidayNoticeFacts(stored: "not json") == nil)
        #expect(HolidayNoticeFacts(stored: #"{"action":"exploded","start":"2026-12-01","end":"2026-12-01","workingDays":1,"typeKey":"v","typeName":"V"}"#) == nil)
    }

    @Test("weekdays across years, leap days and centuries", arguments: [
        ("1970-01-01", "Thursday"), ("2000-02-29", "Tuesday"), ("2026-12-05", "Saturday"), ("2026-12-11", "Friday"),
        ("2027-01-01", "Friday"), ("2100-03-01", "Monday"), ("1969-12-31", "Wednesday"),
    ])
    func weekdays(iso: String, weekday: String) {
        let f = HolidayNoticeFactsTests.facts(iso, iso, days: 1, decider: nil)
        #expect(f.text(in: "en").body.contains(": \(weekday) "))
    }

    @Test("a personal notice made from facts carries them and their wording in the recipient's language")
    func personalNotice() {
        let f = HolidayNoticeFactsTests.facts("2026-12-11", "2026-12-11", days: 1)
        let n = PersonalNotice(recipientID: 7, facts: f, language: "es", authorID: 2)
        #expect(n.kind == "holiday" && n.recipientID == 7 && n.authorID == 2 && n.facts == f)
        #expect(n.title == "Solicitud de vacaciones aprobada")
        #expect(n.body == f.text(in: "es").body)
    }
}
