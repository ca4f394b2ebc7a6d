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
    /// them, so most requests only compare and add one. The keys are kept apart from the counters so that a
    /// request touches no counter object: they are shared by every event loop, and retaining one per request
    /// moved its reference count's cache line between the loops' cores.
    private var currentAnswerKey: ResponseKey?
    private var currentAnswerCounter: Counter?
    private var pendingAnswers: Int64 = 0
    private var currentPushType: String?
    private var currentPushTypeCounter: Counter?
    private var pendingPushTypes: Int64 = 0

    private struct ResponseKey: Hashable {
        var status: Int
        var reason: Reason?
    }

    init(_ metrics: ProviderMetrics) {
        self.metrics = metrics
    }

    /// Counts one answer, by status and reason and by the request's `apns-push-type` (`nil`: none sent), or by
    /// its kind for the broadcast API.
    mutating func count(status: Int, reason: Reason?, pushType: String?, broadcastKind: BroadcastRecord.Kind? = nil) {
        let key = ResponseKey(status: status, reason: reason)
        if currentAnswerKey != key {
            flushAnswer()
            currentAnswerKey = key
            currentAnswerCounter = requestCounters[key] ?? makeRequestCounter(key)
        }
        pendingAnswers += 1
        if let broadcastKind {
            // Not the hot path: a counter per kind, incremented at once.
            let counter = kindCounters[broadcastKind] ?? metrics.requests(kind: broadcastKind.rawValue)
            kindCounters[broadcastKind] = counter
            counter.increment()
            return
        }
        let type = pushType ?? "none"
        if currentPushType != type {
            flushPushType()
            currentPushType = type
            currentPushTypeCounter = pushTypeCounter(type)
        }
        pendingPushTypes += 1
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
        guard pendingAnswers > 0 else { return }
        currentAnswerCounter?.increment(by: pendingAnswers)
        pendingAnswers = 0
    }

    private mutating func flushPushType() {
        guard pendingPushTypes > 0 else { return }
        currentPushTypeCounter?.increment(by: pendingPushTypes)
        pendingPushTypes = 0
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
