import SGEMSupport

/// The writer thread's loop: takes every queued write (up to `maxBatch`), runs them in one
/// `BEGIN IMMEDIATE` transaction with a savepoint each, commits, and only then resumes callers.
struct WriterLoop {
    let connection: Connection
    let queue: JobQueue<WriteJob>
    /// The readers' queue: the writer closes last, so that its close checkpoints and removes the WAL.
    let readers: JobQueue<ReadJob>
    let maxBatch: Int
    let metrics: StoreMetrics
    let logger: Logger

    private typealias Batched = (perform: @Sendable (Database) throws -> @Sendable () -> Void, fail: @Sendable (any Error) -> Void)

    private enum Outcome {
        case done(@Sendable () -> Void)
        case failed(any Error)
    }

    func run() {
        let db = Database(connection: connection)
        while let jobs = queue.take(limit: maxBatch, alone: \.isExclusive) {
            if case .exclusive(let body) = jobs[0] {
                body(db)
                // A body that left a transaction open must not swallow the next batch.
                if connection.isInTransaction { try? connection.execute("ROLLBACK") }
                continue
            }
            let batch = jobs.compactMap { job -> Batched? in
                if case .batched(let perform, let fail) = job { return (perform, fail) }
                return nil
            }
            commit(batch, db: db)
        }
        readers.blockUntilStopped()
        connection.close()
    }

    private func commit(_ batch: [Batched], db: Database) {
        do {
            try connection.execute("BEGIN IMMEDIATE")
        } catch {
            failAll(batch, error, reason: "begin failed")
            return
        }
        var outcomes: [Outcome] = []
        outcomes.reserveCapacity(batch.count)
        for (index, job) in batch.enumerated() {
            do {
                try connection.execute("SAVEPOINT sgem_job")
            } catch {
                abort(batch, done: index, error: error)
                return
            }
            do {
                let resume = try job.perform(db)
                if connection.hasDeferredForeignKeyViolations {
                    // The COMMIT would fail for the whole batch; this job alone is at fault.
                    throw StoreError(code: .sqlite, message: "FOREIGN KEY constraint failed (deferred)",
                                     sqliteCode: SQLITE_CONSTRAINT_FOREIGNKEY_CODE)
                }
                try connection.execute("RELEASE sgem_job")
                outcomes.append(.done(resume))
            } catch let jobError {
                guard connection.isInTransaction else {
                    // SQLite rolled the whole transaction back (I/O error, disk full…): the jobs
                    // before this one lost their work too.
                    abort(batch, done: index + 1, error: jobError)
                    return
                }
                do {
                    try connection.execute("ROLLBACK TO sgem_job")
                    try connection.execute("RELEASE sgem_job")
                } catch {
                    abort(batch, done: index + 1, error: error)
                    return
                }
                outcomes.append(.failed(jobError))
            }
        }
        do {
            try connection.execute("COMMIT")
        } catch {
            if connection.isInTransaction { try? connection.execute("ROLLBACK") }
            failAll(batch, error, reason: "commit failed")
            return
        }
        metrics.commits.increment()
        metrics.batchSize.observe(Double(batch.count))
        // Durable now (synchronous=FULL): callers may learn their outcome.
        for (job, outcome) in zip(batch, outcomes) {
            switch outcome {
            case .done(let resume):
                resume()
            case .failed(let error):
                metrics.writeErrors.increment()
                job.fail(error)
            }
        }
    }

    /// The transaction is lost: the first `done` jobs fail, the rest go back to the queue's front.
    private func abort(_ batch: [Batched], done: Int, error: any Error) {
        if connection.isInTransaction { try? connection.execute("ROLLBACK") }
        failAll(Array(batch[..<done]), error, reason: "transaction aborted")
        let untouched = batch[done...].map { WriteJob.batched(perform: $0.perform, fail: $0.fail) }
        queue.requeue(untouched)
    }

    private func failAll(_ jobs: [Batched], _ error: any Error, reason: String) {
        logger.error("write batch failed", ["store.reason": reason, "store.batch_size": String(jobs.count), "error": String(describing: error)])
        metrics.writeErrors.increment(by: Double(jobs.count))
        for job in jobs { job.fail(error) }
    }
}
