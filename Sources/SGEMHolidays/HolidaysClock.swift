import SGEMSupport
import Synchronization

/// Where the holidays module reads "now": the system clock, unless a test pinned a time. The
/// module publishes its clock in the service registry so in-process tests can pin it (to see
/// "today" in a time zone far from UTC, or a request's start date pass).
public final class HolidaysClock: Sendable {
    private let pinned = Mutex<Timestamp?>(nil)

    public init() {}

    /// The current time: the pinned one when set.
    public func now() -> Timestamp { pinned.withLock { $0 } ?? .now() }

    /// Pins the clock at `time` (nil lets it run again). For tests.
    public func pin(_ time: Timestamp?) { pinned.withLock { $0 = time } }
}
