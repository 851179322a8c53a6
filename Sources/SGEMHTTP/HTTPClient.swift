#if canImport(Glibc)
import Glibc
#endif
import SGEMSupport
import Synchronization

/// An HTTP/1.1 client for outbound calls (translation providers, feeds): http and https with a
/// verified chain and host name, connect and total timeouts, a response-size cap, same-origin
/// redirects only, a bounded number of kept-alive connections per origin, and no destination
/// inside the network or on this machine unless allowed (`OutboundPolicy`, checked on the
/// resolved addresses of every connection opened, which then goes to an address checked).
/// Socket work, name resolution included, runs on the client's own threads, never on the
/// cooperative pool.
public final class HTTPClient: Sendable {
    /// Limits and trust settings, fixed when the client is made.
    public struct Configuration: Sendable {
        /// Time to establish the TCP connection (per request, across the host's addresses).
        public var connectTimeout: Duration = .seconds(10)
        /// Time for the whole call: waiting for a connection, connecting, TLS, every redirect
        /// and reading the full body.
        public var timeout: Duration = .seconds(30)
        /// Largest response body accepted; beyond it the call fails with `too_large`.
        public var maxResponseBytes = 8 * 1024 * 1024
        /// Largest response head (status line and fields).
        public var maxHeaderBytes = 64 * 1024
        /// Redirects followed (to the same scheme, host and port) before `too_many_redirects`.
        public var maxRedirects = 5
        /// Connections in use at once per origin; further calls wait.
        public var maxConnectionsPerHost = 8
        /// Connections kept alive per origin between calls.
        public var maxIdleConnectionsPerHost = 4
        /// An idle connection older than this is closed rather than reused.
        public var idleTimeout: Duration = .seconds(30)
        /// PEM file of trusted CAs instead of the system store (tests, private CAs).
        public var caFile: String?
        /// Dedicated threads doing the blocking socket work: calls in flight at once.
        public var threads = 4
        /// Sent when the request has no `User-Agent` of its own.
        public var userAgent = "sgem-server"
        /// `.background` for a client whose callers are background work.
        public var threadPriority: ThreadPriority = .normal
        /// Internal destinations refused, and the exceptions allowed (`--outbound-allow`).
        public var outboundPolicy = OutboundPolicy()

        public init() {}
    }

    public let configuration: Configuration
    private let threads: BlockingPool
    private let tls: ClientTLSContext
    let connections: ClientConnectionPool

    /// A client with its threads started; throws `tls_failed` when the CA store cannot be loaded.
    public init(configuration: Configuration = Configuration()) throws(HTTPClientError) {
        self.configuration = configuration
        // OpenSSL writes to the socket with write(2), not send(MSG_NOSIGNAL): a peer that reset
        // the connection must give EPIPE, not kill the process (`serve` ignores SIGPIPE too).
        signal(SIGPIPE, SIG_IGN)
        tls = try ClientTLSContext(caFile: configuration.caFile)
        threads = BlockingPool(name: "http-client", threads: configuration.threads, priority: configuration.threadPriority)
        connections = ClientConnectionPool(maxPerHost: configuration.maxConnectionsPerHost,
                                           maxIdlePerHost: configuration.maxIdleConnectionsPerHost,
                                           idleTimeout: configuration.idleTimeout)
    }

    deinit { shutdown() }

    /// Closes kept-alive connections and stops the threads once calls in flight end.
    public func shutdown() {
        connections.shutdown()
        threads.shutdown()
    }

    /// Sends `request` and returns the complete response, following same-origin redirects.
    /// Every failure is an `HTTPClientError`; cancelling the calling task ends the call promptly
    /// with `cancelled`.
    public func send(_ request: HTTPClientRequest) async throws -> HTTPClientResponse {
        let deadline = MonotonicClock.nanoseconds() + (request.timeout ?? configuration.timeout).nanoseconds
        var current = request
        var redirects = 0
        while true {
            let response = try await exchange(current, deadline: deadline)
            guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers["Location"] else { return response }
            guard redirects < configuration.maxRedirects else {
                throw HTTPClientError(.tooManyRedirects, "more than \(configuration.maxRedirects) redirects from \(request.url)")
            }
            redirects += 1
            let next: HTTPClientURL
            do { next = try current.url.resolving(location) } catch {
                throw HTTPClientError(.badResponse, "unusable redirect location \(location.prefix(200).debugDescription)")
            }
            guard next.origin == current.url.origin else {
                if let why = configuration.outboundPolicy.refusal(literal: next) {
                    throw HTTPClientError(.refusedDestination, "redirect to \(next.origin) refused: \(why)")
                }
                throw HTTPClientError(.redirectRefused, "redirect from \(current.url.origin) to another origin (\(next.origin)) refused")
            }
            // RFC 9110 §15.4: 303 always, and 301/302 after a POST in practice, turn into a GET.
            if (response.status == 303 && current.method != .HEAD) || ([301, 302].contains(response.status) && current.method == .POST) {
                current.method = .GET
                current.body = []
                current.headers.remove("Content-Type")
            }
            current.url = next
        }
    }

    /// One request and response on one connection; a kept-alive connection the server closed
    /// before answering is replaced once, for idempotent methods.
    private func exchange(_ request: HTTPClientRequest, deadline: UInt64) async throws -> HTTPClientResponse {
        let bytes = try request.serialized(userAgent: configuration.userAgent)
        let origin = request.url.origin
        while true {
            if Task.isCancelled { throw HTTPClientError(.cancelled, "the request was cancelled") }
            let lease = try await connections.acquire(origin, deadline: deadline)
            let handle = CancelHandle()
            let outcome: Outcome
            do {
                outcome = try await runBounded(deadline: deadline, handle: handle) { [self] in
                    perform(request, bytes, lease: lease, deadline: deadline, handle: handle)
                }
            } catch {
                // The pool is shut down: the job never ran, so the turn is returned here.
                if case .reuse(let connection) = lease { connection.close() }
                connections.release(origin, nil)
                throw HTTPClientError(.cancelled, "the client is shut down")
            }
            switch outcome {
            case .response(let response): return response
            case .retry: continue
            case .failed(let error): throw error
            }
        }
    }

    /// Runs `job` on a client thread, but answers the caller by `deadline` even when the job
    /// cannot: every wait inside it is bounded except `getaddrinfo` and the wait for a free
    /// thread. The late job is then told to stop (it cleans up after itself when it runs).
    private func runBounded(deadline: UInt64, handle: CancelHandle, _ job: @escaping @Sendable () -> Outcome) async throws -> Outcome {
        let once = ResumeOnce<Outcome>()
        return try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Outcome, any Error>) in
                once.set(continuation)
                let now = MonotonicClock.nanoseconds()
                // A little past the deadline, so the job's own timeout normally answers first.
                let wait = (deadline > now ? deadline - now : 0) + 100_000_000
                let timer = Task {
                    try? await Task.sleep(for: .nanoseconds(wait))
                    if Task.isCancelled { return }
                    if once.resume(.success(.failed(HTTPClientError(.timeout, "the request timed out (no client thread free, or name resolution hanging)")))) {
                        handle.cancel()
                    }
                }
                let queued = threads.execute {
                    let outcome = job()
                    timer.cancel()
                    once.resume(.success(outcome))
                }
                if !queued {
                    timer.cancel()
                    once.resume(.failure(BlockingPoolStopped(name: threads.name)))
                }
            }
        } onCancel: {
            handle.cancel()
        }
    }

    private enum Outcome: Sendable {
        case response(HTTPClientResponse)
        case retry
        case failed(HTTPClientError)
    }

    /// The blocking part, on a client thread: open or reuse, exchange, hand the connection back.
    private func perform(_ request: HTTPClientRequest, _ bytes: [UInt8], lease: ClientConnectionPool.Lease, deadline: UInt64,
                         handle: CancelHandle) -> Outcome {
        let origin = request.url.origin
        var connection: ClientConnection?
        var reused = false
        do throws(HTTPClientError) {
            guard MonotonicClock.nanoseconds() < deadline else { throw HTTPClientError(.timeout, "the request timed out waiting for a client thread") }
            switch lease {
            case .reuse(let kept):
                connection = kept
                reused = true
                guard handle.attach(kept.fd) else { throw HTTPClientError(.cancelled, "the request was cancelled") }
            case .open:
                connection = try ClientConnection.open(request.url, tls: request.url.scheme == .https ? tls : nil,
                                                       policy: configuration.outboundPolicy, connectTimeout: configuration.connectTimeout, deadline: deadline, handle: handle)
            }
            let (head, body) = try connection!.exchange(bytes, method: request.method, maxHeaderBytes: configuration.maxHeaderBytes,
                                                        maxBodyBytes: min(configuration.maxResponseBytes, request.maxResponseBytes ?? .max),
                                                        deadline: deadline, handle: handle)
            handle.detach()
            if !head.keepAlive { connection!.close() }
            connections.release(origin, head.keepAlive ? connection : nil)
            return .response(HTTPClientResponse(status: head.status, headers: head.headers, body: body, url: request.url))
        } catch {
            handle.detach()
            let staleConnection = reused && !(connection?.receivedAny ?? true) && error.code == .badResponse
            connection?.close()
            connections.release(origin, nil)
            if handle.isCancelled { return .failed(HTTPClientError(.cancelled, "the request was cancelled")) }
            return staleConnection && request.isIdempotent ? .retry : .failed(error)
        }
    }
}

/// A continuation that the first of several parties resumes; the others find it gone.
final class ResumeOnce<T: Sendable>: Sendable {
    private let continuation = Mutex<UnsafeContinuation<T, any Error>?>(nil)

    func set(_ continuation: UnsafeContinuation<T, any Error>) { self.continuation.withLock { $0 = continuation } }

    /// Resumes with `result` unless someone already did; true when this call did.
    @discardableResult
    func resume(_ result: Result<T, any Error>) -> Bool {
        guard let continuation = continuation.withLock({ c -> UnsafeContinuation<T, any Error>? in
            defer { c = nil }
            return c
        }) else { return false }
        continuation.resume(with: result)
        return true
    }
}
