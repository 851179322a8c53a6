import SGEMCore

extension CompanyModule {
    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "company", title: "Company", titleES: "Empresa", route: "#/company",
                              script: "screens/company.js", order: 50))
        pages.add(ConsolePage(id: "admin-settings", title: "Settings", titleES: "Ajustes", route: "#/admin/settings",
                              script: "screens/admin-settings.js", order: 110, adminOnly: true))
    }
}
