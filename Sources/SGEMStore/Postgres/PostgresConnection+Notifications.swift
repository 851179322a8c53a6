import SGEMSupport
#if canImport(Glibc)
import Glibc
#endif
import CLibPQ

/// `LISTEN`/`NOTIFY`: notifications arrive on the socket and are read without busy-looping.
extension PostgresConnection {
    /// `LISTEN "channel"`: this session receives the channel's notifications from now on.
    public func listen(_ channel: String) throws { try execute("LISTEN \(Self.quoted(channel))") }

    /// `UNLISTEN "channel"`.
    public func unlisten(_ channel: String) throws { try execute("UNLISTEN \(Self.quoted(channel))") }

    /// Sends a notification (delivered when the sending transaction commits).
    public func notify(_ channel: String, payload: String = "") throws {
        try query("SELECT pg_notify($1, $2)", [.text(channel), .text(payload)])
    }

    /// The notifications already received, without waiting.
    public func pendingNotifications() throws -> [PostgresNotification] {
        try consumeInput()
        var found: [PostgresNotification] = []
        while let next = nextNotification() { found.append(next) }
        return found
    }

    /// The next notification, waiting on the socket up to `milliseconds`; nil when none came.
    public func waitForNotification(timeoutMilliseconds milliseconds: Int) throws -> PostgresNotification? {
        if let ready = nextNotification() { return ready }
        let deadline = Self.now() + UInt64(max(0, milliseconds)) * 1_000_000
        while true {
            try consumeInput()
            if let next = nextNotification() { return next }
            let now = Self.now()
            guard now < deadline else { return nil }
            var descriptor = pollfd(fd: socketDescriptor, events: Int16(POLLIN), revents: 0)
            let waitMilliseconds = Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
            let rc = poll(&descriptor, 1, waitMilliseconds)
            if rc < 0 && errno != EINTR {
                throw StoreError(code: .system, message: "poll on the PostgreSQL socket failed: errno \(errno)")
            }
        }
    }

    private func consumeInput() throws {
        guard PQconsumeInput(handleForNotifications) == 1 else {
            throw StoreError(code: .connectionLost, message: "the PostgreSQL connection broke while waiting for notifications")
        }
    }

    private func nextNotification() -> PostgresNotification? {
        guard let notify = PQnotifies(handleForNotifications) else { return nil }
        defer { PQfreemem(notify) }
        return PostgresNotification(channel: String(cString: notify.pointee.relname),
                                    payload: notify.pointee.extra.map { String(cString: $0) } ?? "",
                                    senderPID: notify.pointee.be_pid)
    }

    static func quoted(_ identifier: String) -> String {
        "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
