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
        statuses.count(status)
        durations.observe(duration)
    }
}

/// Requests counted by status: a route answers with a handful of statuses, so a short list scanned in order (no
/// hashing on every request).
struct StatusCounts {
    private var counts: [(status: Int, count: UInt64)] = []

    mutating func count(_ status: Int) {
        for index in counts.indices where counts[index].status == status {
            counts[index].count += 1
            return
        }
        counts.append((status, 1))
    }

    func adding(_ other: StatusCounts) -> StatusCounts {
        var sum = self
        for (status, count) in other.counts {
            if let index = sum.counts.firstIndex(where: { $0.status == status }) {
                sum.counts[index].count += count
            } else {
                sum.counts.append((status, count))
            }
        }
        return sum
    }

    /// The counts by status, lowest status first.
    func sorted() -> [(status: Int, count: UInt64)] {
        counts.sorted { $0.status < $1.status }
    }
}
