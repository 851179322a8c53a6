#if canImport(Glibc)
import Glibc
#endif
import CLibPQ

/// One statement sent in pipeline mode, waiting for its results.
struct PipelineCommand {
    /// Its text, for the error that names it.
    let sql: String
    /// True for what the caller sent to run its transaction (BEGIN, a lock, a savepoint): when one
    /// of these fails, the transaction cannot go on.
    let control: Bool
    /// For the Parse of a statement prepared on the way: its key in the cache, dropped again when
    /// the Parse failed or was skipped.
    let prepares: String?
    /// Receives the rows the statement changed, once it has run.
    var counter: RowCount? = nil
}

/// A statement sent through the pipeline failed (the first one to; those after it were skipped).
struct PostgresPipelineFailure: Error {
    let error: StoreError
    /// True when it was a control statement (see `PipelineCommand.control`).
    let control: Bool
}

/// Pipeline mode (libpq 14+): statements whose results can wait are sent at once and read
/// together with the next statement whose result is needed, in one round trip instead of one
/// each. The writer sends its batch's BEGIN, lock and savepoints this way, and a write job's
/// statements whose rows it does not read.
///
/// Errors arrive late: a statement that fails is reported by the next `flushPipeline` (or the
/// next `query`/`execute`, which flushes), as a `PostgresPipelineFailure` naming its SQL; the
/// statements sent after it were skipped by the server. Inside a transaction the Sync that ends
/// each flush does not commit anything.
extension PostgresConnection {
    /// True while statements wait in the pipeline.
    public var hasPipelinedStatements: Bool { !pipeline.isEmpty }

    /// Sends one statement without waiting for its result (prepared once per session, like
    /// `query`). `control` marks the caller's own transaction statements.
    func send(_ sql: String, _ bindings: [SQLValue], control: Bool, counter: RowCount? = nil) throws {
        let params = try Parameter.list(bindings, sql: sql)
        if PQpipelineStatus(handle) == PQ_PIPELINE_OFF {
            guard PQenterPipelineMode(handle) == 1 else {
                throw StoreError(code: .postgres, message: "cannot enter pipeline mode: \(lastErrorMessage)", sql: sql)
            }
        }
        let sent = withParameters(params) { values, lengths, formats, types -> Bool in
            let count = Int32(params.count)
            guard let statement = preparedName(for: sql, types: types) else {
                return PQsendQueryParams(handle, sql, count, types, values, lengths, formats, 0) == 1
            }
            if statement.isNew {
                guard PQsendPrepare(handle, statement.name, sql, count, types) == 1 else { return false }
                prepared[statement.key] = statement.name
                pipeline.append(PipelineCommand(sql: sql, control: control, prepares: statement.key))
            }
            return PQsendQueryPrepared(handle, statement.name, count, values, lengths, formats, 0) == 1
        }
        guard sent else {
            // libpq could not queue it (the connection broke): nothing sent is worth reading.
            let message = lastErrorMessage
            abandonPipeline()
            throw StoreError(code: .connectionLost, message: message, sql: sql)
        }
        pipeline.append(PipelineCommand(sql: sql, control: control, prepares: nil, counter: counter))
    }

    /// Hands the statements waiting in libpq's output buffer to the server without ending the
    /// pipeline (no Sync, nothing read): the server runs them while the caller prepares more,
    /// and their results are read by the next `flushPipeline`. libpq itself sends only once 64 kB
    /// wait. Throws `PostgresPipelineFailure` when the connection broke.
    func pushPipeline() throws {
        guard !pipeline.isEmpty else { return }
        guard PQflush(handle) == 0 else { throw lostPipeline(pipeline) }
    }

    /// The connection broke with `commands` sent: forgets what waits, and returns the failure,
    /// which names the last of them.
    private func lostPipeline(_ commands: [PipelineCommand]) -> PostgresPipelineFailure {
        let message = lastErrorMessage
        abandonPipeline()
        return PostgresPipelineFailure(error: StoreError(code: .connectionLost, message: message, sql: commands.last?.sql),
                                       control: commands.contains(where: \.control))
    }

    /// Ends the pipeline with a Sync and reads every result in one round trip. Throws the first
    /// failure as a `PostgresPipelineFailure`. With `keepingLast`, returns the last statement's
    /// result (the caller clears it); otherwise nil.
    @discardableResult
    func flushPipeline(keepingLast: Bool = false) throws -> OpaquePointer? {
        guard !pipeline.isEmpty else { return nil }
        let commands = pipeline
        pipeline.removeAll(keepingCapacity: true)
        roundTrips += 1
        guard PQpipelineSync(handle) == 1 else { throw lostPipeline(commands) }
        var failure: PostgresPipelineFailure?
        var kept: OpaquePointer?
        for (index, command) in commands.enumerated() {
            // Each statement's results end with a NULL.
            while let result = PQgetResult(handle) {
                let status = PQresultStatus(result)
                switch status {
                case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY:
                    if command.prepares == nil {
                        lastChangedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
                        command.counter?.set(lastChangedRows)
                    }
                    if keepingLast && index == commands.count - 1 && kept == nil {
                        kept = result
                        continue
                    }
                case PGRES_PIPELINE_ABORTED:
                    if let key = command.prepares { prepared[key] = nil }
                default:
                    if let key = command.prepares { prepared[key] = nil }
                    if failure == nil {
                        do { try check(result, sql: command.sql) } catch let error as StoreError {
                            failure = PostgresPipelineFailure(error: error, control: command.control)
                        } catch {}
                    }
                }
                PQclear(result)
            }
            if PQstatus(handle) != CONNECTION_OK { break }
        }
        finishSync()
        if failure == nil, PQstatus(handle) != CONNECTION_OK {
            failure = PostgresPipelineFailure(error: StoreError(code: .connectionLost, message: lastErrorMessage, sql: commands.last?.sql),
                                              control: commands.contains(where: \.control))
        }
        if let failure {
            if let kept { PQclear(kept) }
            throw failure
        }
        return kept
    }

    /// Reads up to the Sync's result and leaves pipeline mode.
    private func finishSync() {
        var emptyReads = 0
        while PQstatus(handle) == CONNECTION_OK {
            guard let result = PQgetResult(handle) else {
                emptyReads += 1
                if emptyReads > 2 { break }
                continue
            }
            let status = PQresultStatus(result)
            PQclear(result)
            if status == PGRES_PIPELINE_SYNC { break }
        }
        _ = PQexitPipelineMode(handle)
    }

    /// Forgets what was sent after the connection broke (a reconnect starts a new session).
    private func abandonPipeline() {
        for command in pipeline { if let key = command.prepares { prepared[key] = nil } }
        pipeline.removeAll()
    }
}
