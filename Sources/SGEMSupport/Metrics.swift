import Synchronization

/// A Prometheus metric family: renders itself in the text exposition format.
public protocol MetricFamily: Sendable {
    var name: String { get }
    func render(into out: inout String)
}

/// Holds every metric of the process; `/metrics` renders it. Families register once by name.
public final class MetricsRegistry: Sendable {
    private let families = Mutex<[(String, any MetricFamily)]>([])

    public init() {}

    /// The process-wide registry.
    public static let shared = MetricsRegistry()

    /// Returns the family registered under `family.name`, registering `family` if there is none.
    public func register<F: MetricFamily>(_ family: F) -> F {
        families.withLock { list in
            if let existing = list.first(where: { $0.0 == family.name })?.1 as? F { return existing }
            list.append((family.name, family))
            return family
        }
    }

    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        register(Counter(name: name, help: help, labelNames: labels))
    }

    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        register(Gauge(name: name, help: help, labelNames: labels))
    }

    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double] = Histogram.defaultBuckets) -> Histogram {
        register(Histogram(name: name, help: help, labelNames: labels, buckets: buckets))
    }

    /// Prometheus text format 0.0.4.
    public func render() -> String {
        var out = ""
        for (_, family) in families.withLock({ $0 }) { family.render(into: &out) }
        return out
    }
}

func renderLabels(_ names: [String], _ values: [String], extra: (String, String)? = nil) -> String {
    var pairs: [String] = []
    for (n, v) in zip(names, values) { pairs.append("\(n)=\"\(escapeLabel(v))\"") }
    if let extra { pairs.append("\(extra.0)=\"\(escapeLabel(extra.1))\"") }
    return pairs.isEmpty ? "" : "{" + pairs.joined(separator: ",") + "}"
}

func escapeLabel(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "\\": out += "\\\\"
        case "\"": out += "\\\""
        case "\n": out += "\\n"
        default: out.append(c)
        }
    }
    return out
}

func formatNumber(_ v: Double) -> String {
    if v == v.rounded(), abs(v) < 1e15 { return String(Int64(v)) }
    return String(v)
}

/// A monotonically increasing count, optionally split by labels.
public final class Counter: MetricFamily {
    public let name: String
    let help: String
    let labelNames: [String]
    private let values = Mutex<[[String]: Double]>([:])

    public init(name: String, help: String, labelNames: [String] = []) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    public func increment(by amount: Double = 1, _ labels: [String] = []) {
        values.withLock { $0[labels, default: 0] += amount }
    }

    public func value(_ labels: [String] = []) -> Double { values.withLock { $0[labels] ?? 0 } }

    public func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        let snapshot = values.withLock { $0 }
        if snapshot.isEmpty && labelNames.isEmpty { out += "\(name) 0\n" }
        for (labels, v) in snapshot.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            out += "\(name)\(renderLabels(labelNames, labels)) \(formatNumber(v))\n"
        }
    }
}

/// A value that goes up and down, optionally split by labels; or computed when rendered.
public final class Gauge: MetricFamily {
    public let name: String
    let help: String
    let labelNames: [String]
    private let values = Mutex<[[String]: Double]>([:])
    private let sampler = Mutex<(@Sendable () -> Double)?>(nil)

    public init(name: String, help: String, labelNames: [String] = []) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    public func set(_ value: Double, _ labels: [String] = []) { values.withLock { $0[labels] = value } }
    public func add(_ delta: Double, _ labels: [String] = []) { values.withLock { $0[labels, default: 0] += delta } }
    public func value(_ labels: [String] = []) -> Double {
        if let sample = sampler.withLock({ $0 }), labels.isEmpty { return sample() }
        return values.withLock { $0[labels] ?? 0 }
    }
    /// Computes the unlabelled value at render time instead of storing it.
    public func sample(with body: @escaping @Sendable () -> Double) { sampler.withLock { $0 = body } }

    public func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) gauge\n"
        if let sample = sampler.withLock({ $0 }) {
            out += "\(name) \(formatNumber(sample()))\n"
            return
        }
        let snapshot = values.withLock { $0 }
        if snapshot.isEmpty && labelNames.isEmpty { out += "\(name) 0\n" }
        for (labels, v) in snapshot.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            out += "\(name)\(renderLabels(labelNames, labels)) \(formatNumber(v))\n"
        }
    }
}

/// Observations counted into cumulative buckets, with their sum and count.
public final class Histogram: MetricFamily {
    public static let defaultBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    struct Series {
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0
    }

    public let name: String
    let help: String
    let labelNames: [String]
    let buckets: [Double]
    private let series = Mutex<[[String]: Series]>([:])

    public init(name: String, help: String, labelNames: [String] = [], buckets: [Double] = Histogram.defaultBuckets) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.buckets = buckets.sorted()
    }

    public func observe(_ value: Double, _ labels: [String] = []) {
        let index = buckets.firstIndex(where: { value <= $0 }) ?? buckets.count
        let empty = buckets.count + 1
        series.withLock { all in
            // Mutate in place: a copy-out/write-back would allocate a bucket array per call.
            all[labels, default: Series(counts: Array(repeating: 0, count: empty))].counts[index] += 1
            all[labels]!.sum += value
            all[labels]!.count += 1
        }
    }

    /// Number of observations and their sum for one label set.
    public func totals(_ labels: [String] = []) -> (count: UInt64, sum: Double) {
        series.withLock { all in all[labels].map { ($0.count, $0.sum) } ?? (0, 0) }
    }

    public func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        let snapshot = series.withLock { $0 }
        for (labels, s) in snapshot.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            var cumulative: UInt64 = 0
            for (i, bound) in buckets.enumerated() {
                cumulative += s.counts[i]
                out += "\(name)_bucket\(renderLabels(labelNames, labels, extra: ("le", formatNumber(bound)))) \(cumulative)\n"
            }
            cumulative += s.counts[buckets.count]
            out += "\(name)_bucket\(renderLabels(labelNames, labels, extra: ("le", "+Inf"))) \(cumulative)\n"
            out += "\(name)_sum\(renderLabels(labelNames, labels)) \(s.sum)\n"
            out += "\(name)_count\(renderLabels(labelNames, labels)) \(s.count)\n"
        }
    }
}
