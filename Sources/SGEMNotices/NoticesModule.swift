import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `notices` module: the notice board. Company notices written by admins, personal notices
/// other modules publish through `NoticePublisher`, read state per person.
public struct NoticesModule: Module {
    public let id: ModuleID = "notices"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    public init() {}

    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "home", title: "Home", titleES: "Inicio", route: "#/home",
                              script: "screens/home.js", order: 5))
        pages.add(ConsolePage(id: "notices", title: "Notices", titleES: "Avisos", route: "#/notices",
                              script: "screens/notices.js", order: 30))
    }
}
