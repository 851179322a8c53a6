import SGEMCore

extension AccountsModule {
    /// The console screens of accounts: the team directory, my profile and the admin users screen.
    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "directory", title: "Team directory", titleES: "Directorio", route: "#/directory",
                              script: "screens/directory.js", order: 10))
        pages.add(ConsolePage(id: "profile", title: "My profile", titleES: "Mi perfil", route: "#/profile",
                              script: "screens/profile.js", order: 90))
        pages.add(ConsolePage(id: "admin-users", title: "Users", titleES: "Usuarios", route: "#/admin/users",
                              script: "screens/admin-users.js", order: 100, adminOnly: true))
        pages.add(ConsolePage(id: "person", title: "Person", titleES: "Persona", route: "#/person",
                              script: "screens/person.js", order: 15, inNavigation: false))
        pages.add(ConsolePage(id: "admin-audit", title: "Audit log", titleES: "Registro de auditoría", route: "#/admin/audit",
                              script: "screens/admin-audit.js", order: 120, adminOnly: true))
    }
}
