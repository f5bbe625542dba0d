/// Cumulative-bucket histogram data in the Prometheus style (seconds).
struct Histogram {
    static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    var counts = [UInt64](repeating: 0, count: Histogram.bounds.count)
    var sum: Double = 0
    var count: UInt64 = 0

    mutating func observe(_ seconds: Double) {
        for index in Histogram.bounds.indices where seconds <= Histogram.bounds[index] {
            counts[index] += 1
            break
        }
        sum += seconds
        count += 1
    }

    /// The two histograms' observations together.
    func adding(_ other: Histogram) -> Histogram {
        var sum = self
        for index in counts.indices { sum.counts[index] += other.counts[index] }
        sum.sum += other.sum
        sum.count += other.count
        return sum
    }

    /// The `_bucket`, `_sum` and `_count` lines for metric `name` with label text `labels` (may be empty).
    func lines(_ name: String, _ labels: String) -> [String] {
        var lines: [String] = []
        var cumulative: UInt64 = 0
        let separator = labels.isEmpty ? "" : ","
        for (index, bound) in Histogram.bounds.enumerated() {
            cumulative += counts[index]
            lines.append("\(name)_bucket{\(labels)\(separator)le=\"\(bound)\"} \(cumulative)")
        }
        lines.append("\(name)_bucket{\(labels)\(separator)le=\"+Inf\"} \(count)")
        let suffix = labels.isEmpty ? "" : "{\(labels)}"
        lines.append("\(name)_sum\(suffix) \(sum)")
        lines.append("\(name)_count\(suffix) \(count)")
        return lines
    }
}

extension Metrics.RouteStats {
    mutating func record(status: Int, duration: Double) {
        statuses[status, default: 0] += 1
        durations.observe(duration)
    }
}
