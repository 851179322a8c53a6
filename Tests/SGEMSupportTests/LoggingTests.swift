#if canImport(Glibc)
import Glibc
#endif
@testable import SGEMSupport
import SGEMTestPolling
import Synchronization
import Testing

@Suite struct LoggingTests {
    // MARK: Format

    @Test func valuesAreQuotedAndControlCharactersEscaped() throws {
        let sink = MemorySink()
        Logger(label: "the module", sink: sink, level: .trace).notice("say \"hi\"", [
            "plain": "a.b-c/d", "empty": "", "equals": "a=b", "backslash": #"C:\dir"#, "tab": "a\tb", "cr": "a\rb",
            "escape": "\u{1B}[31m", "del": "x\u{7F}", "nul": "\u{0}", "accent": "café", "accent space": "é é",
        ])
        let line = try #require(sink.lines.first)
        let expected = #"level=notice module="the module" msg="say \"hi\"" plain=a.b-c/d empty="" equals="a=b" backslash="C:\\dir" tab="a\tb" cr="a\rb" escape="\u001b[31m" del="x\u007f" nul="\u0000" accent=café accent space="é é""#
        #expect(line.hasSuffix(" " + expected))
        #expect(!line.contains("\n"))
        #expect(Logger.quoted("ok") == "ok")
        #expect(Logger.quoted("new\nline") == #""new\nline""#)
    }

    @Test func typedFactsFormatWithoutStrings() throws {
        let sink = MemorySink()
        Logger(label: "http", sink: sink, level: .info).with("request.id", "r1").log(.info, "request") { line in
            line.append("status", 204)
            line.append("offset", -12)
            line.append("duration_ms", fixedPoint: 1234, scale: 3)
            line.append("small_ms", fixedPoint: 5, scale: 3)
            line.append("whole", fixedPoint: 7, scale: 0)
            line.append("negative", fixedPoint: -1005, scale: 2)
            line.append("max", Int.max)
            line.append("min", Int.min)
        }
        let line = try #require(sink.lines.first)
        #expect(line.hasSuffix(#" level=info module=http msg=request request.id=r1 status=204 offset=-12 duration_ms=1.234 small_ms=0.005 whole=7 negative=-10.05 max=9223372036854775807 min=-9223372036854775808"#))
        // Below the logger's level nothing is built.
        Logger(label: "http", sink: sink, level: .warning).log(.info, "hidden") { _ in Issue.record("facts built for a disabled level") }
        #expect(sink.lines.count == 1)
    }

    @Test(arguments: [Int64(0), 1_796_070_246, 951_782_400, 4_102_444_799, -1])
    func timestampsMatchRFC3339AcrossSeconds(_ seconds: Int64) {
        // Consecutive seconds and milliseconds exercise the cached calendar part and its refresh.
        for (offset, nanos) in [(Int64(0), Int32(0)), (0, 999_999_999), (1, 5_000_000), (1, 120_000_000), (0, 42_000_000)] {
            let now = Timestamp(seconds: seconds + offset, nanoseconds: nanos)
            var bytes: [UInt8] = []
            LogLine.appendTimestamp(to: &bytes, now: now)
            #expect(String(decoding: bytes, as: UTF8.self) == now.rfc3339(fractional: true))
        }
    }

    @Test func linesStartWithTheTimestamp() throws {
        let sink = MemorySink()
        let before = Timestamp.now()
        Logger(label: "t", sink: sink, level: .info).info("x")
        let line = try #require(sink.lines.first)
        let ts = try #require(line.split(separator: " ").first.map { String($0.dropFirst(3)) })
        let parsed = try #require(Timestamp(rfc3339: ts))
        #expect(parsed.seconds >= before.seconds && parsed.seconds <= before.seconds + 5)
        #expect(line.hasPrefix("ts=") && ts.utf8.count == 24)
    }

    // MARK: Never blocking

    /// A pipe whose read end is drained only when the test says so.
    final class StalledPipe: Sendable {
        let readEnd: Int32
        let writeEnd: Int32
        private let received = Mutex<[UInt8]>([])

        init() {
            var fds: [Int32] = [0, 0]
            precondition(pipe(&fds) == 0)
            readEnd = fds[0]
            writeEnd = fds[1]
        }

        /// Starts reading everything into memory on a dedicated thread, until end of file.
        func startDraining() throws {
            try startThread(name: "test-drain") { [self] in
                var chunk = [UInt8](repeating: 0, count: 1 << 16)
                while true {
                    let n = chunk.withUnsafeMutableBytes { read(readEnd, $0.baseAddress, $0.count) }
                    if n < 0 && errno == EINTR { continue }
                    if n <= 0 { return }
                    received.withLock { $0 += chunk[0..<n] }
                }
            }
        }

        var lines: [String] {
            received.withLock { String(decoding: $0, as: UTF8.self) }.split(separator: "\n").map(String.init)
        }

        func close() {
            Glibc.close(writeEnd)
            Glibc.close(readEnd)
        }
    }

    @Test func aStalledReaderNeitherBlocksCallersNorLosesLinesSilently() async throws {
        let pipe = StalledPipe()
        let registry = MetricsRegistry()
        let sink = BufferedLogSink(fd: pipe.writeEnd, capacityBytes: 1 << 20, metrics: registry)
        let logger = Logger(label: "flood", sink: sink, level: .info)
        let total = 100_000
        let done = Flag()
        // On its own thread: if logging blocked, it would block there, and the wait below fail.
        try startThread(name: "test-flood") {
            for i in 0..<total { logger.info("flooding", ["i": String(i), "path": "/api/v1/users/some/longer/path"]) }
            done.set()
        }
        #expect(await eventually(60) { done.isSet })
        let dropped = registry.counter("sgem_log_lines_dropped_total", help: "").value()
        #expect(dropped > 0)
        // While stalled, a flush gives up at its deadline instead of hanging.
        #expect(sink.flush(timeoutMilliseconds: 50) == false)

        try pipe.startDraining()
        // Once what was buffered is out, new lines have room again.
        #expect(await eventually(30) { sink.flush(timeoutMilliseconds: 0) })
        logger.info("resumed")
        #expect(await eventually(30) { pipe.lines.last?.contains("msg=resumed") == true })
        #expect(sink.flush(timeoutMilliseconds: 5000))
        let lines = pipe.lines
        let flood = lines.filter { $0.contains("msg=flooding") }
        let notices = lines.filter { $0.contains(#"msg="log lines dropped""#) }
        #expect(notices.count >= 1)
        let reported = notices.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("log.dropped=") }.flatMap { Int($0.dropFirst("log.dropped=".count)) }
        }.reduce(0, +)
        // Every line is either written or counted as dropped, and the notice says how many.
        #expect(Double(reported) == dropped)
        #expect(flood.count + reported == total)
        // What was written is whole lines, in order.
        let indices = flood.compactMap { line in line.split(separator: " ").first { $0.hasPrefix("i=") }.flatMap { Int($0.dropFirst(2)) } }
        #expect(indices.count == flood.count)
        #expect(indices == indices.sorted())
        pipe.close()
    }

    @Test func linesArriveInOrderAndFlushWaitsForThem() async throws {
        let pipe = StalledPipe()
        try pipe.startDraining()
        let sink = BufferedLogSink(fd: pipe.writeEnd, metrics: MetricsRegistry())
        let logger = Logger(label: "t", sink: sink, level: .info)
        for i in 0..<500 { logger.info("line", ["i": String(i)]) }
        #expect(sink.flush(timeoutMilliseconds: 5000))
        #expect(await eventually { pipe.lines.count == 500 })
        #expect(pipe.lines.map { $0.split(separator: " ").last.map(String.init) ?? "" } == (0..<500).map { "i=\($0)" })
        pipe.close()
    }
}

/// A flag shared between a test and a thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

