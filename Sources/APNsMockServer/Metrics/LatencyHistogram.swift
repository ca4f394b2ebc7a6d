import Synchronization

/// `apns_mock_request_duration_seconds`: a Prometheus histogram that a read batch adds all its requests to at once.
///
/// swift-prometheus' `Histogram` records one value per call under its lock, so every event loop took that one lock
/// once per request: with two loops under load it was the last contended lock in the process. Here a batch of N
/// requests with one duration is one acquisition.
final class LatencyHistogram: Sendable {
    /// Upper bounds of the buckets, and how the text format writes them.
    static let buckets: [(bound: Duration, label: String)] = [
        (.microseconds(50), "0.00005"), (.microseconds(100), "0.0001"), (.microseconds(250), "0.00025"),
        (.microseconds(500), "0.0005"), (.milliseconds(1), "0.001"), (.milliseconds(5), "0.005"),
        (.milliseconds(25), "0.025"), (.milliseconds(100), "0.1"), (.milliseconds(500), "0.5"), (.seconds(1), "1.0"),
        (.seconds(5), "5.0"),
    ]

    private struct State {
        /// Per bucket, not cumulative: the text format's running totals are made when rendering.
        var counts = [Int](repeating: 0, count: LatencyHistogram.buckets.count + 1)
        var total = 0
        var sum: Duration = .zero
    }

    let name: String
    let help: String
    private let state = Mutex(State())

    init(name: String, help: String) {
        self.name = name
        self.help = help
    }

    /// Adds `requests` observations of `duration`.
    func record(_ duration: Duration, requests: Int) {
        guard requests > 0 else { return }
        let index = Self.buckets.firstIndex { duration <= $0.bound } ?? Self.buckets.count
        state.withLock { state in
            state.counts[index] += requests
            state.total += requests
            state.sum += duration * requests
        }
    }

    /// The histogram in Prometheus' text format (HELP, TYPE, cumulative buckets, +Inf, sum, count).
    func render() -> String {
        let snapshot = state.withLock { $0 }
        var text = "# HELP \(name) \(help)\n# TYPE \(name) histogram\n"
        var cumulative = 0
        for (index, bucket) in Self.buckets.enumerated() {
            cumulative += snapshot.counts[index]
            text += "\(name)_bucket{le=\"\(bucket.label)\"} \(cumulative)\n"
        }
        let seconds = Double(snapshot.sum.components.seconds) + Double(snapshot.sum.components.attoseconds) / 1e18
        text += "\(name)_bucket{le=\"+Inf\"} \(snapshot.total)\n"
        text += "\(name)_sum \(seconds)\n\(name)_count \(snapshot.total)\n"
        return text
    }
}
