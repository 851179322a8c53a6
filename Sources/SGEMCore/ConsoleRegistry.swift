/// A screen of the web console that a module contributes: where it sits in the navigation and
/// which ES module (under `/assets/`) draws it.
public struct ConsolePage: Sendable, Equatable {
    public let id: String
    public let title: String
    /// Spanish title; the console is bilingual.
    public let titleES: String
    /// The hash route, e.g. `#/holidays`.
    public let route: String
    /// The ES module, relative to `/assets/`, that renders the page.
    public let script: String
    public let order: Int
    public let adminOnly: Bool
    /// Listed in the navigation; false for pages reached from another (a person's page).
    public let inNavigation: Bool

    public init(id: String, title: String, titleES: String, route: String, script: String, order: Int, adminOnly: Bool = false,
                inNavigation: Bool = true) {
        self.id = id
        self.title = title
        self.titleES = titleES
        self.route = route
        self.script = script
        self.order = order
        self.adminOnly = adminOnly
        self.inNavigation = inNavigation
    }
}

/// The console screens every module registered, in navigation order.
public struct ConsoleRegistry: Sendable {
    public private(set) var pages: [ConsolePage] = []

    public init() {}

    public mutating func add(_ page: ConsolePage) {
        precondition(!pages.contains { $0.id == page.id }, "console page '\(page.id)' registered twice")
        pages.append(page)
        pages.sort { ($0.order, $0.id) < ($1.order, $1.id) }
    }
}
