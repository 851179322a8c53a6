import SGEMCore
import SGEMNotices
import Testing

@Suite("Notices module")
struct NoticesModuleTests {
    @Test("registers Home and the notice board in the console")
    func consolePages() {
        var pages = ConsoleRegistry()
        NoticesModule().registerConsolePages(&pages)
        #expect(pages.pages.map(\.id) == ["home", "notices"])
    }
}
