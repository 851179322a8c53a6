import SGEMSupport
import Synchronization

/// Per-origin bounds for the client: at most `maxPerHost` connections in use at once (callers
/// beyond wait their turn, within their deadline) and at most `maxIdlePerHost` kept alive
/// between requests. Origins with nothing in use, idle or waiting are forgotten.
final class ClientConnectionPool: Sendable {
    /// A turn to talk to an origin: on a kept-alive connection, or on one to open.
    enum Lease: Sendable { case reuse(ClientConnection), open }

    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Lease, any Error>
        let timer: Task<Void, Never>
    }

    private struct Host {
        var active = 0
        var idle: [ClientConnection] = []
        var waiters: [Waiter] = []
        var isEmpty: Bool { active == 0 && idle.isEmpty && waiters.isEmpty }
    }

    private struct State {
        var hosts: [String: Host] = [:]
        var nextID: UInt64 = 0
        var closed = false
    }

    private let state = Mutex(State())
    let maxPerHost: Int
    let maxIdlePerHost: Int
    let idleTimeout: UInt64

    init(maxPerHost: Int, maxIdlePerHost: Int, idleTimeout: Duration) {
        self.maxPerHost = max(1, maxPerHost)
        self.maxIdlePerHost = max(0, maxIdlePerHost)
        self.idleTimeout = idleTimeout.nanoseconds
    }

    /// Connections currently kept alive for `origin` (tests and metrics).
    func idleCount(_ origin: String) -> Int { state.withLock { $0.hosts[origin]?.idle.count ?? 0 } }

    /// Waits for a turn on `origin` until `deadline` (then `timeout`) or cancellation.
    func acquire(_ origin: String, deadline: UInt64) async throws -> Lease {
        closeExpired()
        if let lease = state.withLock({ takeTurn(origin, &$0) }) { return lease }
        let id = state.withLock { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Lease, any Error>) in
                let now = MonotonicClock.nanoseconds()
                let timer = Task { [weak self] in
                    try? await Task.sleep(for: .nanoseconds(deadline > now ? deadline - now : 0))
                    if Task.isCancelled { return }
                    self?.fail(origin, id, HTTPClientError(.timeout, "the request timed out waiting for a connection to \(origin)"))
                }
                let immediate = state.withLock { s -> Lease? in
                    if let lease = takeTurn(origin, &s) { return lease }
                    s.hosts[origin, default: Host()].waiters.append(Waiter(id: id, continuation: continuation, timer: timer))
                    return nil
                }
                if let immediate {
                    timer.cancel()
                    continuation.resume(returning: immediate)
                } else if Task.isCancelled {
                    // Cancelled before the waiter was listed: the handler found nothing to fail.
                    fail(origin, id, HTTPClientError(.cancelled, "the request was cancelled"))
                }
            }
        } onCancel: {
            fail(origin, id, HTTPClientError(.cancelled, "the request was cancelled"))
        }
    }

    /// Ends a turn: `connection` (if still usable) goes to the next waiter or the idle list;
    /// otherwise it is closed.
    func release(_ origin: String, _ connection: ClientConnection?) {
        let (handover, toClose) = state.withLock { s -> ((Waiter, Lease)?, [ClientConnection]) in
            var host = s.hosts[origin] ?? Host()
            defer { s.hosts[origin] = host.isEmpty ? nil : host }
            let usable = connection.flatMap { !s.closed && $0.isReusable ? $0 : nil }
            let unusable = usable == nil ? connection.map { [$0] } ?? [] : []
            if !host.waiters.isEmpty {
                let waiter = host.waiters.removeFirst()
                return ((waiter, usable.map(Lease.reuse) ?? .open), unusable)
            }
            host.active = max(0, host.active - 1)
            guard let usable else { return (nil, unusable) }
            host.idle.append(usable)
            return (nil, host.idle.count > maxIdlePerHost ? [host.idle.removeFirst()] : [])
        }
        for connection in toClose { connection.close() }
        if let (waiter, lease) = handover {
            waiter.timer.cancel()
            waiter.continuation.resume(returning: lease)
        }
    }

    /// Closes the idle connections and keeps none from now on.
    func shutdown() {
        let idle = state.withLock { s -> [ClientConnection] in
            s.closed = true
            var all: [ClientConnection] = []
            for key in s.hosts.keys {
                all += s.hosts[key]!.idle
                s.hosts[key]!.idle = []
                if s.hosts[key]!.isEmpty { s.hosts[key] = nil }
            }
            return all
        }
        for connection in idle { connection.close() }
    }

    /// Closes idle connections past the idle timeout, for every origin: one no one calls again
    /// does not keep its sockets open until shutdown.
    private func closeExpired() {
        let now = MonotonicClock.nanoseconds()
        let expired = state.withLock { s -> [ClientConnection] in
            var expired: [ClientConnection] = []
            for (origin, var host) in s.hosts where host.idle.contains(where: { $0.lastUsed + idleTimeout <= now }) {
                expired += host.idle.filter { $0.lastUsed + idleTimeout <= now }
                host.idle.removeAll { $0.lastUsed + idleTimeout <= now }
                s.hosts[origin] = host.isEmpty ? nil : host
            }
            return expired
        }
        for connection in expired { connection.close() }
    }

    /// A turn now if one is free: a fresh idle connection first, else a slot to open one.
    private func takeTurn(_ origin: String, _ s: inout State) -> Lease? {
        var host = s.hosts[origin] ?? Host()
        defer { s.hosts[origin] = host.isEmpty ? nil : host }
        let now = MonotonicClock.nanoseconds()
        while let connection = host.idle.popLast() {
            if connection.lastUsed + idleTimeout > now && connection.isReusable {
                host.active += 1
                return .reuse(connection)
            }
            connection.close()
        }
        guard host.active < maxPerHost, host.waiters.isEmpty else { return nil }
        host.active += 1
        return .open
    }

    private func fail(_ origin: String, _ id: UInt64, _ error: HTTPClientError) {
        let waiter = state.withLock { s -> Waiter? in
            guard var host = s.hosts[origin], let index = host.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            let waiter = host.waiters.remove(at: index)
            s.hosts[origin] = host.isEmpty ? nil : host
            return waiter
        }
        waiter?.timer.cancel()
        waiter?.continuation.resume(throwing: error)
    }
}
