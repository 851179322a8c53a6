import SGEMCore
import SGEMHTTP
import SGEMStore
import SGEMSupport

/// The `realtime` module: `GET /api/v1/realtime`, the hub that tails the event journal and fans
/// events out to the sockets whose user may see them, replay with `since`, retention.
public struct RealtimeModule: Module {
    public let id: ModuleID = "realtime"
    public var dependencies: [ModuleID] { ["system", "accounts"] }

    public init() {}
}
