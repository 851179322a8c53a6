import SGEMSupport

/// The writer thread's loop: takes every queued write (up to `maxBatch`), runs them in one
/// writer transaction (`beginWriteBatch`) with a savepoint each, commits, and only then resumes callers.
struct WriterLoop {
    let connection: any StoreConnection
    let queue: JobQueue<WriteJob>
    /// The readers' queue: the writer closes last, so that its close checkpoints and removes the WAL.
    let readers: JobQueue<ReadJob>
    let maxBatch: Int
    let metrics: StoreMetrics
    let logger: Logger
    /// The store's doorbells, for `Database.ringAfterCommit`.
    let doorbells: @Sendable (String) -> Doorbell
    /// Batches still to run with savepoints after one had to run again (see `commit`).
    private let savepointBatchesLeft = Box(0)
    /// When the running batch got the writers' lock another process shares (0: not yet, or none).
    private let lockHeldSince = Box<UInt64>(0)

    /// A value the loop changes from its own thread.
    private final class Box<T> {
        var value: T
        init(_ value: T) { self.value = value }
    }

    private typealias Batched = (perform: @Sendable (Database) throws -> @Sendable () -> Void, fail: @Sendable (any Error) -> Void,
                                 background: Bool)

    private enum Outcome {
        /// The caller's resumption, and what the job asked to run after the commit.
        case done(@Sendable () -> Void, [@Sendable () -> Void])
        case failed(any Error)
    }

    func run() {
        let db = Database(connection: connection, doorbells: doorbells)
        while let jobs = queue.take(limit: maxBatch, alone: \.isExclusive) {
            let started = MonotonicClock.nanoseconds()
            // Background work reads how busy others keep the writer: batches of background
            // writes alone do not count.
            var foreground = jobs.contains { !$0.isBackground }
            // Counted once the batch is done, before its callers resume: a caller that reads the
            // busy time after its write sees that write in it.
            var accounted = false
            let account = {
                guard !accounted else { return }
                accounted = true
                let busy = MonotonicClock.nanoseconds() - started
                if foreground { metrics.writerBusyNanoseconds.value.add(busy, ordering: .relaxed) }
                metrics.writerBusy.increment(by: Double(busy) / 1e9)
            }
            defer { account() }
            if case .exclusive(let body) = jobs[0] {
                body(db)
                // A body that left a transaction open must not swallow the next batch.
                if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                continue
            }
            let batch = jobs.compactMap(WriterLoop.batched)
            commit(batch, db: db, joined: { foreground = foreground || $0.contains { !$0.background } }, committed: account)
        }
        readers.blockUntilStopped()
        connection.close()
    }

    private static func batched(_ job: WriteJob) -> Batched? {
        if case .batched(let perform, let fail, let background) = job { return (perform, fail, background) }
        return nil
    }

    /// How a batch's run ended.
    private enum BatchRun {
        /// Committed: each job is answered with its outcome.
        case committed([Outcome])
        /// The COMMIT failed, or its outcome is unknown: no job may run again.
        case commitFailed([Outcome], any Error)
        /// Every job has been answered or put back in the queue.
        case answered
        /// A job failed in a batch without savepoints: run it again with them.
        case again
    }

    private func commit(_ taken: [Batched], db: Database, joined: ([Batched]) -> Void, committed: () -> Void) {
        var batch = taken
        var run = BatchRun.again
        if connection.prefersBatchesWithoutSavepoints, batch.count == 1 || savepointBatchesLeft.value == 0 {
            run = runWithoutSavepoints(&batch, db: db, joined: joined)
        }
        if case .again = run {
            // One batch fell back: the next few take the savepoints at once, so a stream of
            // failing writes costs each batch one run, not two.
            if savepointBatchesLeft.value > 0 { savepointBatchesLeft.value -= 1 }
            run = runWithSavepoints(&batch, db: db, joined: joined)
        }
        switch run {
        case .committed(let outcomes): finish(batch, outcomes: outcomes, db: db, committed: committed)
        case .commitFailed(let outcomes, let error): commitFailed(batch, outcomes: outcomes, error: error)
        case .answered, .again: break
        }
    }

    /// Where the writers' lock is shared with other processes (PostgreSQL), called once the
    /// batch's first job has run and settled (so the lock, sent before it, is held): takes
    /// into the batch the writes queued meanwhile, up to `maxBatch`. While another instance
    /// commits, this one's requests gather into the batch waiting for the lock and share its
    /// commit instead of waiting for the next. None of them has run, so a batch running again
    /// with savepoints may take in more as well.
    private func takeWaiting(into batch: inout [Batched], joined: ([Batched]) -> Void) {
        guard connection.writeLockIsShared, batch.count < maxBatch else { return }
        let more = queue.takeWaiting(limit: maxBatch - batch.count, alone: \.isExclusive).compactMap(WriterLoop.batched)
        guard !more.isEmpty else { return }
        batch += more
        metrics.batchJoined.increment(by: Double(more.count))
        joined(more)
    }

    /// The batch's jobs one after another in the transaction, no savepoint each: on PostgreSQL a
    /// savepoint is a subtransaction (two statements, an id of its own, and a multixact for every
    /// row a later one locks again), most of a small write's cost. When any job fails, the
    /// transaction is rolled back whole and `.again` returned: the batch runs again with savepoints,
    /// each job exactly as if it had run once (jobs leave their effects to the store and to
    /// `afterCommit`, which a rolled-back run never reaches). A batch of one needs no second run:
    /// its job's failure is answered at once. The statements left waiting and the COMMIT go in
    /// one round trip (`settleAndCommit`).
    private func runWithoutSavepoints(_ batch: inout [Batched], db: Database, joined: ([Batched]) -> Void) -> BatchRun {
        var failure: (any Error)?
        let begun = MonotonicClock.nanoseconds()
        lockHeldSince.value = 0
        do {
            try connection.beginWriteBatch()
        } catch {
            failure = error
        }
        db.beginBatch()
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(batch.count)
        // A job's last statements may run with the next job's: any failure reruns the batch.
        connection.deferJobChecks(true)
        defer { connection.deferJobChecks(false) }
        var index = 0
        while failure == nil {
            if index == 1, connection.writeLockIsShared {
                // The lock sent before the first job is held once a round trip has run past it:
                // usually the first job's own read did; otherwise what it left waiting runs now.
                do { try connection.settleWriteLock() } catch { failure = error; break }
                let held = MonotonicClock.nanoseconds()
                lockHeldSince.value = held
                metrics.writeLockWait.increment(by: Double(held - begun) / 1e9)
                takeWaiting(into: &batch, joined: joined)
            }
            guard index < batch.count else { break }
            let job = batch[index]
            index += 1
            db.beginCollectingAfterCommit()
            do {
                let resume = try connection.runGuarded { try job.perform(db) }
                let actions = db.endCollectingAfterCommit()
                guard connection.isInTransaction else {
                    throw StoreError(code: .transactionControl, message: "the write ended the batch transaction; its work was rolled back")
                }
                try connection.checkJobConstraints()
                db.keepJobStatements()
                outcomes.append(.done(resume, actions))
            } catch {
                _ = db.endCollectingAfterCommit()
                failure = error
            }
        }
        if failure == nil {
            // The statements that wait for the commit ride in the same round trip as the last
            // job's, and the COMMIT with them.
            do { return try commitRun(outcomes, db: db) } catch { failure = error }
        }
        guard let failure else { return .again }
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
        if batch.count == 1 {
            metrics.writeErrors.increment()
            batch[0].fail(failure)
            return .answered
        }
        metrics.batchesRerun.increment()
        savepointBatchesLeft.value = 8
        return .again
    }

    /// The batch with a savepoint per job: a job that fails is rolled back alone, and the rest
    /// commit. `.answered` when the batch was lost (its jobs have been answered or requeued).
    private func runWithSavepoints(_ batch: inout [Batched], db: Database, joined: ([Batched]) -> Void) -> BatchRun {
        do {
            try connection.beginWriteBatch()
        } catch {
            failAll(batch, error, reason: "begin failed")
            return .answered
        }
        db.beginBatch()
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(batch.count)
        var index = 0
        while true {
            if index == 1 { takeWaiting(into: &batch, joined: joined) }
            guard index < batch.count else { break }
            let job = batch[index]
            index += 1
            do {
                try connection.beginJob()
            } catch {
                abort(batch, outcomes: outcomes, culprit: nil, error: error)
                return .answered
            }
            do {
                db.beginCollectingAfterCommit()
                let resume: @Sendable () -> Void
                do {
                    resume = try connection.runGuarded { try job.perform(db) }
                } catch {
                    _ = db.endCollectingAfterCommit()
                    throw error
                }
                let actions = db.endCollectingAfterCommit()
                guard connection.isInTransaction else {
                    // Only the backend itself can end the transaction under a guarded body (an I/O
                // error, a lost connection); treat it as lost.
                    throw StoreError(code: .transactionControl, message: "the write ended the batch transaction; its work was rolled back")
                }
                // A violation the COMMIT would find fails the whole batch; this job alone is at fault.
                try connection.checkJobConstraints()
                try connection.releaseJob()
                db.keepJobStatements()
                outcomes.append(.done(resume, actions))
            } catch let jobError {
                guard connection.isInTransaction else {
                    // The backend rolled the whole transaction back (I/O error, disk full, lost
                    // connection): the jobs before this one lost their work too.
                    abort(batch, outcomes: outcomes, culprit: jobError, error: jobError)
                    return .answered
                }
                do {
                    try connection.rollbackJob()
                } catch {
                    abort(batch, outcomes: outcomes, culprit: jobError, error: error)
                    return .answered
                }
                outcomes.append(.failed(jobError))
            }
        }
        do {
            return try commitRun(outcomes, db: db)
        } catch {
            abort(batch, outcomes: outcomes, culprit: nil, error: error)
            return .answered
        }
    }

    /// Runs the batch's statements that wait for its commit, and commits: `.committed`, or
    /// `.commitFailed` when the COMMIT failed or its outcome is unknown. Throws a failure among
    /// those statements: then nothing is committed and the transaction is still open.
    private func commitRun(_ outcomes: [Outcome], db: Database) throws -> BatchRun {
        do {
            try db.runBatchStatements()
            let sent = MonotonicClock.nanoseconds()
            defer { metrics.commitWait.increment(by: Double(MonotonicClock.nanoseconds() - sent) / 1e9) }
            try connection.settleAndCommit()
            return .committed(outcomes)
        } catch let commit as CommitFailure {
            return .commitFailed(outcomes, commit.error)
        }
    }

    /// The COMMIT failed: it rolled back (or the ROLLBACK here does), so no job's rows are stored
    /// — or the connection broke and nobody knows. Every job fails; none runs again.
    private func commitFailed(_ batch: [Batched], outcomes: [Outcome], error: any Error) {
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
        logger.error("write batch failed", ["store.reason": "commit failed", "store.batch_size": String(batch.count), "error": String(describing: error)])
        metrics.writeErrors.increment(by: Double(batch.count))
        for (job, outcome) in zip(batch, outcomes) {
            if case .failed(let own) = outcome { job.fail(own) } else { job.fail(error) }
        }
    }

    /// The batch committed: answers each job, its resumption (after its after-commit actions) or its error.
    private func finish(_ batch: [Batched], outcomes: [Outcome], db: Database, committed: () -> Void) {
        metrics.commits.increment()
        metrics.batchSize.observe(Double(batch.count))
        if lockHeldSince.value != 0 {
            metrics.writeLockHeld.increment(by: Double(MonotonicClock.nanoseconds() - lockHeldSince.value) / 1e9)
            lockHeldSince.value = 0
        }
        committed()
        // The other processes' doorbell: once per channel for the whole batch.
        db.ringBatch()
        // Durable now (synchronous=FULL): callers may learn their outcome.
        for (job, outcome) in zip(batch, outcomes) {
            switch outcome {
            case .done(let resume, let actions):
                for action in actions { action() }
                resume()
            case .failed(let error):
                metrics.writeErrors.increment()
                job.fail(error)
            }
        }
    }

    /// The transaction is lost. The jobs that already ran (`outcomes`) fail: those that had
    /// succeeded with `.batchAborted` (nothing of theirs is stored), those that had failed with
    /// their own error. The job running when it was lost fails with `culprit` (nil: none was
    /// running). The rest never ran and go back to the queue's front.
    private func abort(_ batch: [Batched], outcomes: [Outcome], culprit: (any Error)?, error: any Error) {
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
        let ran = outcomes.count + (culprit == nil ? 0 : 1)
        logger.error("write batch failed", ["store.reason": "transaction aborted", "store.batch_size": String(ran),
                                             "store.requeued": String(batch.count - ran), "error": String(describing: error)])
        metrics.writeErrors.increment(by: Double(ran))
        let lost = StoreError(code: .batchAborted,
                              message: "the batch transaction was rolled back because another write in it failed; nothing was stored",
                              cause: error)
        for (job, outcome) in zip(batch, outcomes) {
            switch outcome {
            case .done: job.fail(lost)
            case .failed(let own): job.fail(own)
            }
        }
        if let culprit { batch[outcomes.count].fail(culprit) }
        let untouched = batch[ran...].map { WriteJob.batched(perform: $0.perform, fail: $0.fail, background: $0.background) }
        queue.requeue(untouched)
    }

    private func failAll(_ jobs: [Batched], _ error: any Error, reason: String) {
        logger.error("write batch failed", ["store.reason": reason, "store.batch_size": String(jobs.count), "error": String(describing: error)])
        metrics.writeErrors.increment(by: Double(jobs.count))
        for job in jobs { job.fail(error) }
    }
}
