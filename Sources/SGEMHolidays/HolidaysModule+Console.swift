import SGEMCore

extension HolidaysModule {
    /// My holidays, the team calendar, and the admins' requests and reference lists.
    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "holidays", title: "Holidays", titleES: "Vacaciones", route: "#/holidays",
                              script: "screens/holidays.js", order: 20))
        pages.add(ConsolePage(id: "calendar", title: "Team calendar", titleES: "Calendario del equipo", route: "#/calendar",
                              script: "screens/holidays-calendar.js", order: 22))
        pages.add(ConsolePage(id: "admin-holidays", title: "Holiday requests", titleES: "Solicitudes de vacaciones",
                              route: "#/admin/holidays", script: "screens/admin-holidays.js", order: 104, adminOnly: true))
        pages.add(ConsolePage(id: "admin-leave", title: "Public holidays and leave types", titleES: "Festivos y tipos de ausencia",
                              route: "#/admin/leave", script: "screens/admin-leave.js", order: 106, adminOnly: true))
    }
}
