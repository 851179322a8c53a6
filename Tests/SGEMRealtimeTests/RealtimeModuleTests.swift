import SGEMCore
import SGEMRealtime
import Testing

@Suite("Realtime module")
struct RealtimeModuleTests {
    @Test("boots after the system and accounts modules")
    func dependencies() {
        #expect(RealtimeModule().dependencies == ["system", "accounts"])
    }
}
