#if canImport(Glibc)
import Testing
import Glibc
#endif
import SGEMStore
import SGEMSupport
import Synchronization

/// A fresh directory under /tmp, removed with its files when released.
final class TemporaryDirectory: Sendable {
    let path: String

    init() {
        var template = Array("/tmp/sgem-store-test-XXXXXX".utf8CString)
        let created = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(created != nil, "mkdtemp failed: \(errno)")
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func file(_ name: String) -> String { path + "/" + name }

    deinit {
        if let dir = opendir(path) {
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { unlink(path + "/" + name) }
            }
            closedir(dir)
        }
        rmdir(path)
    }
}

let testLogger = Logger(label: "store-test")

func makeStore(_ dir: TemporaryDirectory, name: String = "test.db", metrics: MetricsRegistry = MetricsRegistry(),
               configure: (inout StoreConfiguration) -> Void = { _ in }) throws -> Store {
    var configuration = StoreConfiguration()
    configure(&configuration)
    return try Store(path: dir.file(name), configuration: configuration, logger: testLogger, metrics: metrics)
}

func fileExists(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0
}

func monotonicSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Blocks the calling (store) thread until `condition` holds or `timeout` passes; true when it held.
@discardableResult
func blockUntil(timeout: Double = 60, _ condition: () -> Bool) -> Bool {
    let deadline = monotonicSeconds() + timeout
    while !condition() {
        if monotonicSeconds() > deadline { return false }
        usleep(200)
    }
    return true
}

/// A flag shared between a test and a store thread.
final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .sequentiallyConsistent) }
    var isSet: Bool { value.load(ordering: .sequentiallyConsistent) }
}

struct Boom: Error, Equatable {
    let tag: Int
}

func histogramTotals(_ registry: MetricsRegistry) -> (count: UInt64, sum: Double) {
    registry.histogram("sgem_store_commit_batch_size", help: "").totals()
}

func commitsTotal(_ registry: MetricsRegistry) -> Double {
    registry.counter("sgem_store_commits_total", help: "").value()
}

extension SQLValue: CustomTestStringConvertible {
    // Keeps argument names short in test output (some values are 100 kB).
    public var testDescription: String {
        switch self {
        case .null: "null"
        case .integer(let v): "integer(\(v))"
        case .real(let d): "real(\(d))"
        case .text(let s): s.count > 40 ? "text(\(s.count) characters)" : "text(\(s.debugDescription))"
        case .blob(let b): "blob(\(b.count) bytes)"
        }
    }
}
