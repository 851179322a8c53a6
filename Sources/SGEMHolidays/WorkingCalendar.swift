/// Counts working days: the company's working weekdays minus its public holidays, with a half
/// day at either end, split by calendar year (a request across New Year counts against each
/// year for the days that fall in it).
struct WorkingCalendar: Sendable {
    /// ISO weekday numbers that are working days.
    let workingDays: Set<Int>
    let publicHolidays: Set<Day>

    func isWorkingDay(_ day: Day) -> Bool { workingDays.contains(day.isoWeekday) && !publicHolidays.contains(day) }

    /// The working days of `start…end` per year: a working first day counts ½ with `halfStart`,
    /// a working last day ½ with `halfEnd`. Years without any working day are left out.
    func days(from start: Day, to end: Day, halfStart: Bool, halfEnd: Bool) -> [Int: Double] {
        var perYear: [Int: Double] = [:]
        guard start <= end else { return perYear }
        for day in start...end where isWorkingDay(day) {
            var value = 1.0
            if day == start, halfStart { value = 0.5 }
            if day == end, halfEnd { value = 0.5 }
            perYear[day.year, default: 0] += value
        }
        return perYear
    }

    /// Total working days of `start…end`.
    func total(from start: Day, to end: Day, halfStart: Bool, halfEnd: Bool) -> Double {
        days(from: start, to: end, halfStart: halfStart, halfEnd: halfEnd).values.reduce(0, +)
    }
}
