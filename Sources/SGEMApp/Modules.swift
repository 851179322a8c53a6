import SGEMAccounts
import SGEMCompany
import SGEMConsole
import SGEMCore
import SGEMHolidays
import SGEMMessaging
import SGEMNotices
import SGEMPush
import SGEMRealtime
import SGEMSystem
import SGEMTranslation

/// The one place that lists sgem-server's modules, the benchmark module included (it joins the
/// server only with `--bench-module`). Order matters only as a tie-break after dependencies;
/// feature modules join this list as they land.
func allModules() -> [any Module] {
    let features: [any Module] = [
        CompanyModule(),
        AccountsModule(),
        NoticesModule(),
        HolidaysModule(),
        MessagingModule(),
        RealtimeModule(),
        TranslationModule(),
        PushModule(),
        BenchModule(),
    ]
    // The console lists every module's screens; they are known before anything boots.
    var pages = ConsoleRegistry()
    for module in features { module.registerConsolePages(&pages) }
    return [SystemModule(version: Version.current), ConsoleModule(pages: pages.pages)] + features
}

/// The modules this configuration runs.
func modules(configuration: Configuration) -> [any Module] {
    allModules().filter { $0.id != "bench" || configuration.bool(BenchModule.enabled) }
}

/// Every setting the command line, environment and config file accept: the platform's and each
/// module's.
let settingsCatalogue = SettingsCatalogue(Settings.platform + allModules().flatMap(\.settings))

/// The server's version, printed by `version` and served in the OpenAPI document.
public enum Version {
    public static let current = "0.1.0"
}
