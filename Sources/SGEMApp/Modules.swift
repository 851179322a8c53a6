import SGEMAccounts
import SGEMCompany
import SGEMConsole
import SGEMCore
import SGEMSystem
import Synchronization

/// The one place that lists sgem-server's modules. Order matters only as a tie-break after
/// dependencies; feature modules join this list as they land.
func modules(configuration: Configuration, consolePages: ConsolePageBox) -> [any Module] {
    var list: [any Module] = [
        SystemModule(version: Version.current),
        ConsoleModule(pages: { consolePages.pages }),
        CompanyModule(),
        AccountsModule(),
    ]
    if configuration.bool("bench-module") { list.append(BenchModule()) }
    return list
}

/// The console pages collected from every module, filled in once at start-up.
final class ConsolePageBox: Sendable {
    private let storage = Mutex<[ConsolePage]>([])
    var pages: [ConsolePage] {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }
}

/// The server's version, printed by `version` and served in the OpenAPI document.
public enum Version {
    public static let current = "0.1.0"
}
