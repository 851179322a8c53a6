import SGEMCore
import SGEMMessaging
import Testing

@Suite("Messaging module")
struct MessagingModuleTests {
    @Test("registers the chat screen in the console")
    func consolePages() {
        var pages = ConsoleRegistry()
        MessagingModule().registerConsolePages(&pages)
        #expect(pages.pages.map(\.id) == ["chat"])
    }
}
