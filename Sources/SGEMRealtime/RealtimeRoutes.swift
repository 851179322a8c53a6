import SGEMCore
import SGEMHTTP
import SGEMSupport

/// `GET /api/v1/realtime`: authenticates (cookie with a same-origin upgrade, bearer header or
/// `?token=`), validates `since`, upgrades, replays what the client missed, then serves live.
struct RealtimeRoutes: Sendable {
    let hub: RealtimeHub
    let journal: any EventJournal
    let services: ServiceRegistry
    let logger: Logger
    /// Tests only: runs between the upgrade's credential check and the subscription, to end the
    /// session in that window. Production leaves it empty.
    var beforeSubscribe: @Sendable (AuthenticatedUser) async -> Void = { _ in }

    func register(_ routes: RouteGroup) {
        let group = routes.group("", middleware: [RequireUser(services: services, allowQueryToken: true), SinceParameter()])
        let routes = self
        group.webSocket("/realtime", doc: RealtimeRoutes.doc) { request, context, socket in
            await routes.serve(request, context: context, socket: socket)
        }
    }

    /// One connection, from subscription to close.
    func serve(_ request: Request, context: RequestContext, socket: WebSocket) async {
        guard let user = context[CurrentUser.self] else { return }
        let since = request.query["since"].flatMap { Int64($0) }
        await beforeSubscribe(user)
        // Held back until the credentials are confirmed below, so nothing reaches a socket whose
        // session ended before it subscribed.
        let (id, cursor) = hub.subscribe(user, request: request, socket: socket)
        defer { hub.unsubscribe(id) }
        guard await confirmCredentials(request, socket: socket, logger: context.logger) else { return }
        if let since {
            do {
                guard let through = try await replay(since: since, upTo: cursor, for: user, socket: socket),
                      await hub.goLive(id, replayedThrough: through, socket: socket) else { return }
            } catch {
                context.logger.error("realtime replay failed", ["error": String(describing: error)])
                socket.close(code: 1011, reason: "replay failed; reconnect")
                return
            }
        } else if await !hub.goLive(id, replayedThrough: cursor, socket: socket) {
            return
        }
        for await message in socket.messages {
            // Browsers cannot send ping frames; a text `{"type":"ping"}` is answered in kind.
            if case let .text(text) = message, text.utf8.count <= 64,
               (try? JSONValue.parse(Array(text.utf8)))?["type"]?.stringValue == "ping" {
                socket.send(text: RealtimeRoutes.pong)
            }
        }
    }

    /// Authenticates the upgrade request again, once subscribed; closes the socket unless it passes.
    ///
    /// A session that ended (or an account deactivated) between the middleware's check and the
    /// subscription may have had its control event processed by the hub before this socket
    /// existed. Every control event is either read by the hub after `subscribe`, and then closes
    /// this socket like any other, or was read before it: it had committed, and with it the change
    /// it records, before this check began, so this check sees that change.
    func confirmCredentials(_ request: Request, socket: WebSocket, logger: Logger) async -> Bool {
        do {
            if try await services.resolve((any SessionAuthenticator).self)?.authenticate(request, allowQueryToken: true) != nil {
                return true
            }
            socket.close(code: 1008, reason: "session ended")
        } catch let error as APIError where error.status == 401 || error.status == 403 {
            socket.close(code: 1008, reason: "session ended")
        } catch {
            logger.error("realtime credential check failed", ["error": String(describing: error)])
            socket.close(code: 1011, reason: "credential check failed; reconnect")
        }
        return false
    }

    /// Sends the events after `since` up to `cursor` that `user` may see now, or one resync
    /// when `since` is behind the retention horizon (or ahead of every id handed out). Returns
    /// the id the socket has everything up to (`cursor` after a resync, else the later of `since`
    /// and `cursor`); nil when the socket closed on the way. Goes at the reader's pace: a frame waits while the
    /// socket's queue is over its high-water mark, and the next page is read only once the last
    /// one is handed out, so a slow reader gets the whole backlog and the buffer stays bounded.
    func replay(since: Int64, upTo cursor: Int64, for user: AuthenticatedUser, socket: WebSocket) async throws -> Int64? {
        let horizon = try await journal.horizon()
        let newest = try await journal.lastEventID()
        if since < horizon || since > max(cursor, newest) {
            return socket.send(RealtimeHub.resync) ? cursor : nil
        }
        guard since < cursor else { return since }
        let chats = try await hub.chatAccess?.chatIDs(of: user.id) ?? []
        let directoryEntry = try await hub.directory?.user(id: user.id)
        let isAdmin = directoryEntry?.role == .admin && directoryEntry?.active == true
        var after = since
        while after < cursor {
            let batch = try await journal.events(after: after, limit: hub.limits.batch)
            guard let last = batch.last else { break }
            for recorded in batch where recorded.id <= cursor {
                guard RealtimeHub.may(user.id, see: recorded.event.audience, isAdmin: isAdmin, chats: chats) else { continue }
                guard await socket.waitUntilWritable(), socket.send(text: RealtimeHub.frame(recorded)) else { return nil }
                hub.metrics.delivered.increment()
            }
            after = last.id
        }
        return cursor
    }

    static let pong = #"{"type":"pong"}"#

    static let doc = RouteDoc(
        summary: "The realtime event stream (WebSocket)",
        description: """
            Upgrades to a WebSocket. Text frames `{"id", "type", "data"}` carry the events the user may see, in id order. \
            With `since` the events after that id come first, once, at the reader's pace, then the live stream; a client that \
            falls behind the live stream by more than its bounds gets `{"type":"resync"}` before the close (1013). `{"type":"resync"}` when `since` \
            is older than the retention window. `{"type":"ping"}` is answered with `{"type":"pong"}`. A cookie-authenticated \
            upgrade needs this server's Origin. A socket that cannot keep up is closed (1008 or 1013); a deactivated account's \
            or ended session's sockets are closed with 1008 wherever the change was made, before any later event; an \
            edited or deleted message or notice is replayed as it is now, never with its old text; shutdown closes with 1001.
            """,
        tags: ["realtime"],
        query: [QueryDoc("since", "the id of the last event received; replay what came after it",
                         schema: ["type": "integer", "minimum": 0, "format": "int64"]),
                QueryDoc("token", "a bearer token, for clients that cannot send headers")],
        responses: [
            ResponseDoc(status: 101, description: "Switching Protocols: the stream follows"),
            errorDoc(400, "bad_request: not a WebSocket upgrade"),
            errorDoc(401, "unauthenticated or session_expired"),
            errorDoc(403, "account_inactive, or csrf_failed: a cookie upgrade from a foreign Origin"),
            errorDoc(422, "validation_failed (since)"),
            errorDoc(426, "upgrade_required: an unsupported WebSocket version"),
        ],
        authenticated: true)
}

/// 422 unless `?since=` is absent or a non-negative event id.
struct SinceParameter: Middleware {
    func respond(to request: Request, context: RequestContext, next: Handler) async throws -> Response {
        if let since = request.query["since"] {
            guard since.utf8.count <= 19, since.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }), !since.isEmpty, Int64(since) != nil else {
                throw APIError.validationFailed(["since": "must be the id of an event (a non-negative integer)"])
            }
        }
        return try await next(request, context)
    }
}

func errorDoc(_ status: Int, _ description: String) -> ResponseDoc {
    ResponseDoc(status: status, description: description, schema: ["$ref": "#/components/schemas/Error"])
}
