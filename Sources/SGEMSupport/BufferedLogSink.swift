#if canImport(Glibc)
import Glibc
#endif

/// A log sink that never blocks its callers: lines go into a buffer bounded in bytes, and one
/// dedicated thread writes the buffer to a file descriptor in large writes. When the reader of
/// that descriptor stalls (a full pipe nobody drains) and the buffer is full, new lines are
/// dropped and counted (`sgem_log_lines_dropped_total`); once writing resumes, one line says
/// how many were lost. The writer wakes once per `batchInterval` at most while lines trickle
/// in (a wake-up per line would cost a context switch per request), sooner when a quarter of the
/// buffer is filled or someone flushes.
public final class BufferedLogSink: LogSink, @unchecked Sendable {   // all mutable state is guarded by `mutex`; `fd` is written only by the writer thread
    /// Standard error behind a 1 MiB buffer: the process default. A normal `exit` flushes it
    /// (for up to 2 s), so that a command's last lines are not lost.
    public static let standardError: BufferedLogSink = {
        let sink = BufferedLogSink(fd: 2)
        atexit { _ = BufferedLogSink.standardError.flush(timeoutMilliseconds: 2000) }
        return sink
    }()

    /// The descriptor written to.
    public let fd: Int32
    /// Most bytes held while the writer is behind.
    public let capacityBytes: Int
    private let dropped: Counter

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signals the writer: lines arrived.
    private let work = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// Signals flushers: a batch was written.
    private let progress = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var pending: [UInt8] = []
    private var droppedSinceNotice = 0
    /// Lines the writer holds and has not finished writing.
    private var writing = false
    /// The writer sleeps with nothing to write: the next line wakes it.
    private var writerIdle = false
    /// The writer waits for more lines to batch: only a large backlog or a flush wakes it.
    private var writerGathering = false
    /// Threads waiting in `flush`: the writer skips its gathering pause for them.
    private var flushers = 0
    /// The longest a line waits for company before it is written.
    private let batchNanoseconds = 10_000_000
    /// False when the writer thread could not start: lines are then written by the caller.
    private var hasWriter = true

    /// A sink writing to `fd` (not closed by the sink) through a buffer of `capacityBytes`;
    /// drops are counted in `metrics`.
    public init(fd: Int32, capacityBytes: Int = 1 << 20, metrics: MetricsRegistry = .shared) {
        self.fd = fd
        self.capacityBytes = capacityBytes
        self.dropped = metrics.counter("sgem_log_lines_dropped_total",
                                       help: "Log lines dropped because the log's reader did not keep up.")
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(work, nil)
        pthread_cond_init(progress, nil)
        do {
            try startThread(name: "sgem-log") { [self] in runWriter() }
        } catch {
            hasWriter = false
        }
    }

    // The writer thread holds a reference for as long as the process runs: never deinitialised.

    public func write(line: String) {
        var text = line
        text.withUTF8 { write(bytes: UnsafeRawBufferPointer($0)) }
    }

    public func write(bytes: UnsafeRawBufferPointer) {
        pthread_mutex_lock(mutex)
        guard hasWriter else {
            pthread_mutex_unlock(mutex)
            var line = Array(bytes)
            line.append(0x0A)
            line.withUnsafeBytes { _ = BufferedLogSink.writeFully(fd, $0) }
            return
        }
        guard pending.count + bytes.count + 1 <= capacityBytes else {
            droppedSinceNotice += 1
            pthread_mutex_unlock(mutex)
            dropped.increment()
            return
        }
        pending.append(contentsOf: bytes)
        pending.append(0x0A)
        let wake = writerIdle || (writerGathering && pending.count >= capacityBytes / 4)
        pthread_mutex_unlock(mutex)
        if wake { pthread_cond_signal(work) }
    }

    /// Waits until every line taken before the call is written, at most `timeoutMilliseconds`.
    public func flush(timeoutMilliseconds: Int) -> Bool {
        var deadline = BufferedLogSink.realtime(after: max(0, timeoutMilliseconds) * 1_000_000)
        pthread_mutex_lock(mutex)
        flushers += 1
        defer {
            flushers -= 1
            pthread_mutex_unlock(mutex)
        }
        pthread_cond_signal(work)
        while hasWriter && (writing || !pending.isEmpty) {
            if pthread_cond_timedwait(progress, mutex, &deadline) == ETIMEDOUT {
                return !(writing || !pending.isEmpty)
            }
        }
        return true
    }

    private func runWriter() {
        var batch: [UInt8] = []
        pthread_mutex_lock(mutex)
        while true {
            while pending.isEmpty && droppedSinceNotice == 0 {
                writerIdle = true
                pthread_cond_wait(work, mutex)
                writerIdle = false
            }
            if pending.count < capacityBytes / 4 && flushers == 0 {
                // Let more lines join this batch: one write and one wake-up for many lines.
                var until = BufferedLogSink.realtime(after: batchNanoseconds)
                writerGathering = true
                _ = pthread_cond_timedwait(work, mutex, &until)
                writerGathering = false
            }
            // Swap buffers: callers fill the other one while this batch is written.
            swap(&batch, &pending)
            let lost = droppedSinceNotice
            droppedSinceNotice = 0
            writing = true
            pthread_mutex_unlock(mutex)

            if lost > 0 {
                LogLine.withLine(level: .warning, label: "log", message: "log lines dropped") { notice in
                    notice.append("log.dropped", lost)
                    notice.append("log.reason", "the log's reader did not keep up")
                    notice.appendNewline()
                    notice.withBytes { _ = BufferedLogSink.writeFully(fd, $0) }
                }
            }
            let written = batch.withUnsafeBytes { BufferedLogSink.writeFully(fd, $0) }
            if !written {
                // A closed or failing descriptor: the lines are gone; say so in the metric.
                dropped.increment(by: Double(batch.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }))
            }
            batch.removeAll(keepingCapacity: true)

            pthread_mutex_lock(mutex)
            writing = false
            pthread_cond_broadcast(progress)
        }
    }

    /// The CLOCK_REALTIME instant `nanoseconds` from now, as `pthread_cond_timedwait` takes it.
    private static func realtime(after nanoseconds: Int) -> timespec {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let total = now.tv_nsec + nanoseconds % 1_000_000_000
        now.tv_sec += nanoseconds / 1_000_000_000 + total / 1_000_000_000
        now.tv_nsec = total % 1_000_000_000
        return now
    }

    /// Writes all of `bytes` to `fd`, retrying EINTR and waiting out EAGAIN (a non-blocking
    /// descriptor inherited from the parent); false when the descriptor fails for good.
    static func writeFully(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
        guard var base = bytes.baseAddress else { return true }
        var left = bytes.count
        while left > 0 {
            let n = Glibc.write(fd, base, left)
            if n > 0 {
                base += n
                left -= n
                continue
            }
            if n == 0 { return false }
            switch errno {
            case EINTR:
                continue
            case EAGAIN:
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, -1)
            default:
                return false
            }
        }
        return true
    }
}
