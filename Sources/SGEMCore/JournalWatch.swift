import SGEMSupport

/// Follows the journal on this instance for events addressed to the instances themselves
/// (`EventAudience.hubs`, never a client) of a few `types`, and hands each to `handle`, in
/// order, exactly once: how a change made on any instance, or by a command-line verb in another
/// process, reaches what every instance keeps in memory (a module's copy of a setting, of who
/// reads which chat translated).
///
/// It starts where the journal ends when the caller asks (`lastEventID()` before loading what it
/// keeps): what committed after that is handed over, what committed before is in what was loaded.
/// Commits wake it — this instance's at once, other instances' through the store's doorbell —
/// and it looks at most every `spacing`, so a stream of message commits costs a few narrow reads
/// a second. It also looks every `poll`: command-line verbs ring no doorbell, and on SQLite
/// another process's commit wakes nothing here.
public struct JournalWatch: Sendable {
    public let journal: any EventJournal
    public let types: Set<String>
    public let spacing: Duration
    public let poll: Duration
    public let logger: Logger

    /// Events read per look.
    static let window = 256

    public init(journal: any EventJournal, types: Set<String>, spacing: Duration = .milliseconds(100),
                poll: Duration = .seconds(1), logger: Logger) {
        self.journal = journal
        self.types = types
        self.spacing = spacing
        self.poll = poll
        self.logger = logger
    }

    /// Hands every event of `types` for the instances after `cursor` to `handle`, then waits for
    /// the next commit or poll; until cancelled. A failed read is tried again at the next wake-up
    /// from the same cursor, so nothing is skipped.
    public func run(from cursor: Int64, handle: @Sendable (RecordedEvent) async -> Void) async {
        let (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let commits = journal.wakeOnCommit(wake)
        let poll = self.poll
        let poller = Task { while (try? await Task.sleep(for: poll)) != nil { wake.yield() } }
        defer {
            commits.cancel()
            poller.cancel()
        }
        var cursor = cursor
        var spacing = LookSpacing(spacing)
        for await _ in wakeups {
            do {
                try await spacing.wait()
                while true {
                    let from = cursor
                    let window = try await journal.events(after: from, limit: JournalWatch.window, types: types, audiences: [.hubs])
                    for recorded in window.events {
                        try Task.checkCancellation()
                        await handle(recorded)
                        cursor = recorded.id
                    }
                    let more = journalLookMayHaveMore(after: from, scannedTo: window.scannedTo, limit: JournalWatch.window)
                    cursor = max(cursor, window.scannedTo)
                    if !more { break }
                }
            } catch is CancellationError {
                return
            } catch {
                // The store closing under a cancelled watch is no failure.
                if Task.isCancelled { return }
                logger.error("journal watch failed; looking again on the next wake-up", ["error": String(describing: error)])
            }
        }
    }
}

/// The journal event a runtime setting's change records, in the change's own transaction, for
/// the instances themselves (`.hubs`): data `{"key": KEY}`, never the value. Whatever an instance
/// keeps of a setting in memory is dropped on it (`JournalWatch`), whichever instance or command
/// line made the change.
public enum RuntimeSettingChange {
    public static let type = "settings.changed"

    public static func event(key: String) -> RealtimeEvent {
        RealtimeEvent(type: type, audience: .hubs, data: ["key": .string(key)])
    }

    /// The setting `event` says changed; nil for any other event.
    public static func key(of event: RealtimeEvent) -> String? {
        guard event.type == type, event.audience == .hubs else { return nil }
        return event.data["key"]?.stringValue
    }
}
