import APNsMock
import Prometheus

/// One connection's share of the per-request metrics, added to the registry once per read batch.
///
/// The counter handles are looked up in the registry once per connection, not per request. Counts are kept
/// here while a batch is carried out and added with one atomic increment per counter when it ends
/// (`flush`): per request, two increments, their lookups and a clock reading were about 4% of a request's
/// CPU in profiles. A scrape can therefore miss the requests of a batch still being answered.
struct ConnectionMetrics {
    private let metrics: ProviderMetrics
    private var requestCounters: [ResponseKey: Counter] = [:]
    private var pushTypeCounters: [String: Counter] = [:]
    private var kindCounters: [BroadcastRecord.Kind: Counter] = [:]
    private var warningCounters: [String: Counter] = [:]
    /// The answer and push type counted last, with how many are not yet added: a connection mostly repeats
    /// them, so most requests only compare and add one.
    private var currentAnswer: (key: ResponseKey, counter: Counter, pending: Int64)?
    private var currentPushType: (type: String, counter: Counter, pending: Int64)?

    private struct ResponseKey: Hashable {
        var status: Int
        var reason: Reason?
    }

    init(_ metrics: ProviderMetrics) {
        self.metrics = metrics
    }

    /// Counts one answer, by status and reason and by the request's `apns-push-type` (`nil`: none sent), or by
    /// its kind for the broadcast API.
    mutating func count(_ response: APNsResponse, pushType: String?, broadcastKind: BroadcastRecord.Kind? = nil) {
        let key = ResponseKey(status: response.status, reason: response.reason)
        if let current = currentAnswer, current.key == key {
            currentAnswer!.pending += 1
        } else {
            flushAnswer()
            let counter = requestCounters[key] ?? makeRequestCounter(key)
            currentAnswer = (key, counter, 1)
        }
        if let broadcastKind {
            // Not the hot path: a counter per kind, incremented at once.
            let counter = kindCounters[broadcastKind] ?? metrics.requests(kind: broadcastKind.rawValue)
            kindCounters[broadcastKind] = counter
            counter.increment()
            return
        }
        let type = pushType ?? "none"
        if let current = currentPushType, current.type == type {
            currentPushType!.pending += 1
        } else {
            flushPushType()
            currentPushType = (type, pushTypeCounter(type), 1)
        }
    }

    /// Counts an answered request's payload warnings by code (a fixed set: the registry stays small).
    mutating func count(_ warnings: [PayloadWarning]) {
        for warning in warnings {
            let counter = warningCounters[warning.code] ?? metrics.warnings(code: warning.code)
            warningCounters[warning.code] = counter
            counter.increment()
        }
    }

    /// Records how long a batch's answers took, once for each of `requests`.
    func recordLatency(_ duration: Duration, requests: Int) {
        metrics.latency.record(duration, requests: requests)
    }

    /// Adds the counts kept so far to the registry.
    mutating func flush() {
        flushAnswer()
        flushPushType()
    }

    private mutating func flushAnswer() {
        guard let current = currentAnswer, current.pending > 0 else { return }
        current.counter.increment(by: current.pending)
        currentAnswer!.pending = 0
    }

    private mutating func flushPushType() {
        guard let current = currentPushType, current.pending > 0 else { return }
        current.counter.increment(by: current.pending)
        currentPushType!.pending = 0
    }

    private mutating func makeRequestCounter(_ key: ResponseKey) -> Counter {
        let counter = metrics.requests(status: key.status, reason: key.reason)
        requestCounters[key] = counter
        return counter
    }

    /// A push type APNs does not know is counted as `invalid`, so a client inventing push types cannot grow
    /// the registry without end.
    private mutating func pushTypeCounter(_ type: String) -> Counter {
        let label = PushType(rawValue: type) != nil || type == "none" ? type : "invalid"
        if let counter = pushTypeCounters[label] { return counter }
        let counter = metrics.requests(pushType: label)
        pushTypeCounters[label] = counter
        return counter
    }
}
