/// A wake-up shared by the server instances on one database: `ring` tells the others that
/// something was committed, `rings()` hears theirs. A ring only says "look now": what changed is
/// in the database, and a ring can be missed (a lost connection), so a listener also looks on a
/// timer and once after each `.listening`.
///
/// On PostgreSQL a thread of its own with a connection of its own `LISTEN`s on the channel and
/// sends `NOTIFY` (`pg_notify`) in autocommit: never inside a write transaction, where it would
/// take the cluster's notification lock at commit and hold up every writer. On SQLite it does
/// nothing: other processes on the file are seen by the listeners' timers.
///
/// Get one from `Store.doorbell(channel:)`; the store stops it when it closes.
public final class Doorbell: Sendable {
    /// What a listener hears.
    public enum Ring: Sendable, Equatable {
        /// Another instance rang, with this payload (the newest of several that came together).
        case rang(payload: String)
        /// The doorbell listens: for the first time, or again after its connection was lost.
        /// Rings sent meanwhile were missed: look once.
        case listening
    }

    /// Rings a stream keeps for a listener that has not read them: the newest.
    static let buffered = 8

    /// The channel's name (a PostgreSQL identifier: at most 63 bytes).
    public let channel: String
    /// The listening thread; nil on SQLite and for a doorbell asked of a closed store.
    let listener: PostgresDoorbell?

    init(channel: String, listener: PostgresDoorbell?) {
        self.channel = channel
        self.listener = listener
    }

    /// Tells the other instances to look, with `payload` (short text, such as the newest id).
    /// Never blocks: rings given while one is being sent become one, carrying the last payload.
    /// Call it after the commit (from `Database.afterCommit`), so that whoever looks finds the change.
    public func ring(payload: String) { listener?.ring(payload: payload) }

    /// The other instances' rings, and `.listening` each time the doorbell starts listening
    /// (at once when it already does). A slow reader keeps the newest `buffered`; its own rings
    /// never come back. Ends when the store closes, and at once on SQLite.
    public func rings() -> AsyncStream<Ring> {
        guard let listener else {
            let (stream, continuation) = AsyncStream<Ring>.makeStream()
            continuation.finish()
            return stream
        }
        return listener.rings()
    }

    /// Calls `handler` with each of the other instances' rings and each `.listening` (at once when
    /// the doorbell already listens), on the doorbell's own thread, until the store closes: for a
    /// listener that only needs to be woken, with no task between the ring and it. Keep it short;
    /// it must not block. Nothing on SQLite.
    public func onRing(_ handler: @escaping @Sendable (Ring) -> Void) { listener?.onRing(handler) }

    /// The server process of the listening connection; nil while it does not listen (tests end
    /// it with `pg_terminate_backend`).
    var listenerPID: Int32? { listener?.listeningPID }

    /// Sends the ring still waiting, stops listening, and returns once the thread has ended.
    func stop() async { await listener?.stop() }

    /// Asks the thread to end without waiting for it (a store released without `close()`).
    func requestStop() { listener?.requestStop() }
}
