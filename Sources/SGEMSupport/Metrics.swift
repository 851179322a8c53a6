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

/// One label set's running total of a `Counter`: looked up once, then bumped without hashing
/// a label array or taking a lock (hot paths keep the handle).
public final class CounterSeries: Sendable {
    /// The total's `Double` bit pattern, updated by compare-and-swap.
    private let bits = Atomic<UInt64>(0)

    init() {}

    /// Adds `amount` to the total.
    public func increment(by amount: Double = 1) {
        var current = bits.load(ordering: .relaxed)
        while true {
            let next = (Double(bitPattern: current) + amount).bitPattern
            let (exchanged, original) = bits.compareExchange(expected: current, desired: next, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    /// The total so far.
    public var value: Double { Double(bitPattern: bits.load(ordering: .relaxed)) }
}

/// A monotonically increasing count, optionally split by labels.
public final class Counter: MetricFamily {
    public let name: String
    let help: String
    let labelNames: [String]
    private let values = Mutex<[[String]: CounterSeries]>([:])

    public init(name: String, help: String, labelNames: [String] = []) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
    }

    /// The series for `labels`, created (and from then on rendered) on first use.
    public func series(_ labels: [String] = []) -> CounterSeries {
        values.withLock { all in
            if let series = all[labels] { return series }
            let series = CounterSeries()
            all[labels] = series
            return series
        }
    }

    public func increment(by amount: Double = 1, _ labels: [String] = []) {
        series(labels).increment(by: amount)
    }

    public func value(_ labels: [String] = []) -> Double { values.withLock { $0[labels] }?.value ?? 0 }

    public func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) counter\n"
        let snapshot = values.withLock { $0 }
        if snapshot.isEmpty && labelNames.isEmpty { out += "\(name) 0\n" }
        for (labels, series) in snapshot.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            out += "\(name)\(renderLabels(labelNames, labels)) \(formatNumber(series.value))\n"
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

/// One label set of a `Histogram`: looked up once, then observed without hashing a label array.
/// Its own lock keeps buckets, sum and count consistent with each other for a render.
public final class HistogramSeries: Sendable {
    struct State: Sendable {
        var counts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0
    }

    let buckets: [Double]
    private let state: Mutex<State>

    init(buckets: [Double]) {
        self.buckets = buckets
        state = Mutex(State(counts: Array(repeating: 0, count: buckets.count + 1)))
    }

    /// Counts `value` into its bucket.
    public func observe(_ value: Double) {
        let index = buckets.firstIndex(where: { value <= $0 }) ?? buckets.count
        state.withLock { state in
            state.counts[index] += 1
            state.sum += value
            state.count += 1
        }
    }

    var snapshot: State { state.withLock { $0 } }
}

/// Observations counted into cumulative buckets, with their sum and count.
public final class Histogram: MetricFamily {
    public static let defaultBuckets: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    public let name: String
    let help: String
    let labelNames: [String]
    let buckets: [Double]
    private let series = Mutex<[[String]: HistogramSeries]>([:])

    public init(name: String, help: String, labelNames: [String] = [], buckets: [Double] = Histogram.defaultBuckets) {
        self.name = name
        self.help = help
        self.labelNames = labelNames
        self.buckets = buckets.sorted()
    }

    /// The series for `labels`, created (and from then on rendered) on first use.
    public func series(_ labels: [String] = []) -> HistogramSeries {
        series.withLock { all in
            if let found = all[labels] { return found }
            let made = HistogramSeries(buckets: buckets)
            all[labels] = made
            return made
        }
    }

    public func observe(_ value: Double, _ labels: [String] = []) {
        series(labels).observe(value)
    }

    /// Number of observations and their sum for one label set.
    public func totals(_ labels: [String] = []) -> (count: UInt64, sum: Double) {
        guard let found = series.withLock({ $0[labels] }) else { return (0, 0) }
        let state = found.snapshot
        return (state.count, state.sum)
    }

    public func render(into out: inout String) {
        out += "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        let all = series.withLock { $0 }
        for (labels, series) in all.sorted(by: { $0.key.joined() < $1.key.joined() }) {
            let s = series.snapshot
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
