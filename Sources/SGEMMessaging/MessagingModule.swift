import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `messaging` module: contacts, direct and group chats, messages, read markers, mentions,
/// search. Publishes `ChatAccess` for the realtime hub.
public struct MessagingModule: Module {
    public let id: ModuleID = "messaging"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    public init() {}

    public func registerConsolePages(_ pages: inout ConsoleRegistry) {
        pages.add(ConsolePage(id: "chat", title: "Chat", titleES: "Chat", route: "#/chat",
                              script: "screens/chat.js", order: 40))
    }
}
