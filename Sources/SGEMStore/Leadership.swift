import SGEMSupport
import Synchronization

/// A role one instance at a time holds among the processes serving one database: the push
/// worker, the chat translator's journal follower. On PostgreSQL it is a session-level advisory
/// lock (`pg_try_advisory_lock`) held on the store's coordination connection: the other instances
/// try again every poll, and when the holder stops or dies its session ends, the lock frees and
/// the next try takes it. The holder checks at every poll that its session still holds the lock,
/// and steps down when it does not (the connection was lost or ended by the server). SQLite has
/// one process, which always leads.
public struct Leadership: Sendable {
    /// The lock every instance names alike.
    public let lock: StoreLock
    let coordination: Coordination
    let hold: LeadershipHold
    let shared: Bool
    let logger: Logger

    /// True while this instance holds it, as of the last `refresh`.
    public var isHeld: Bool { hold.state.withLock { $0.session != nil } }

    /// How many times this instance has taken it: a worker that sees it change has taken over,
    /// from another instance or after its own session was lost.
    public var term: Int { hold.state.withLock { $0.terms } }

    /// Takes it when it is free, or checks that this instance still holds it; returns whether it
    /// does. An error (the database out of reach) counts as not holding it.
    @discardableResult
    public func refresh() async -> Bool {
        let hold = self.hold
        guard shared else {
            hold.state.withLock { if $0.session == nil { $0 = (0, $0.terms + 1) } }
            return true
        }
        let key = lock.key
        do {
            return try await coordination.perform { session in
                if let heldIn = hold.state.withLock({ $0.session }) {
                    if heldIn == session.generation, let live = session.usable {
                        if (try? live.connection.holdsAdvisoryLock(key)) == true { return true }
                        // A live session that cannot vouch for the lock lets go of any hold it has.
                        Leadership.unlockAll(key, on: live)
                    }
                    hold.state.withLock { $0.session = nil }
                }
                let connection = try session.connection()
                guard try connection.connection.tryAdvisoryLock(key) else { return false }
                hold.state.withLock { $0 = (session.generation, $0.terms + 1) }
                return true
            }
        } catch {
            hold.state.withLock { $0.session = nil }
            return false
        }
    }

    /// Gives it up, so that another instance takes it at its next try (closing the store does too).
    public func release() async {
        let hold = self.hold
        guard shared else {
            hold.state.withLock { $0.session = nil }
            return
        }
        let key = lock.key
        _ = try? await coordination.perform { session in
            guard let heldIn = hold.state.withLock({ $0.session }) else { return }
            hold.state.withLock { $0.session = nil }
            if heldIn == session.generation, let live = session.usable { Leadership.unlockAll(key, on: live) }
        }
    }

    /// Tries for it every `poll` while another instance holds it, and checks every `poll` that
    /// this one still does, until the task is cancelled; then gives it up. `polled` hears after
    /// every poll whether this instance leads.
    public func maintain(every poll: Duration, _ polled: @escaping @Sendable (Bool) -> Void = { _ in }) async {
        var leading = isHeld
        if leading { logger.notice("leadership taken", ["lock": lock.name, "term": String(term)]) }
        while !Task.isCancelled {
            let now = await refresh()
            if now != leading {
                leading = now
                if now {
                    logger.notice("leadership taken", ["lock": lock.name, "term": String(term)])
                } else {
                    logger.warning("leadership lost", ["lock": lock.name])
                }
            }
            polled(now)
            do { try await Task.sleep(for: poll) } catch { break }
        }
        await release()
    }

    /// How often instances that do not lead try for it, and the leader checks it still does: the
    /// most a worker stays without a leader after the last one's process ended.
    public static let defaultPoll: Duration = .seconds(2)

    /// Releases every hold this session has of `key` (taking a held lock again stacks a hold).
    private static func unlockAll(_ key: Int64, on connection: PostgresStoreConnection) {
        for _ in 0..<16 {
            guard (try? connection.connection.advisoryUnlock(key)) == true else { return }
        }
    }
}

/// What one store knows of its hold on a lock: the coordination session that took it (nil: not
/// held; SQLite: 0) and how many times it was taken.
final class LeadershipHold: Sendable {
    let state = Mutex<(session: Int?, terms: Int)>((nil, 0))
}
