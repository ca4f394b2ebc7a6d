import APNsMock
import Prometheus

/// One connection's share of the per-request metrics, added to the registry once per read batch.
///
/// The counter handles are looked up in the registry once per connection, not per request. Counts are kept
/// here while a batch is carried out and added with one atomic increment per counter when it ends
/// (`flush`): per request, two increments, their lookups and a clock reading showed in profiles. A scrape can
/// therefore miss the requests of a batch still being answered.
struct ConnectionMetrics {
    private let metrics: ProviderMetrics
    private var requestCounters: [ResponseKey: Counter] = [:]
    private var pushTypeCounters: [String: Counter] = [:]
    private var kindCounters: [BroadcastRecord.Kind: Counter] = [:]
    private var warningCounters: [String: Counter] = [:]
    /// The answer, push type, broadcast kind and payload warnings counted last, with how many are not yet added:
    /// a connection mostly repeats them, so most requests only compare and add one (for warnings, the lint's memo
    /// hands on the same array, which `==` recognises by its buffer). The keys are kept apart from the counters
    /// so that a request touches no counter object: they are shared by every event loop, and retaining one per
    /// request moved its reference count's cache line between the loops' cores. A lookup and an increment per
    /// warning per answer showed in broadcasts' profiles.
    private var answers = Run<ResponseKey>()
    private var pushTypes = Run<String>()
    private var kinds = Run<BroadcastRecord.Kind>()
    private var warnings = Run<[PayloadWarning]>()

    /// Answers counted for one key in a row, and the counters they go to.
    private struct Run<Key: Equatable> {
        private(set) var key: Key?
        private var counters: [Counter] = []
        private var pending: Int64 = 0

        /// Adds what is pending and begins a run of `key`, counted to `counters`.
        mutating func restart(_ key: Key, counters: [Counter]) {
            flush()
            self.key = key
            self.counters = counters
        }

        mutating func add() { pending += 1 }

        mutating func flush() {
            guard pending > 0 else { return }
            for counter in counters { counter.increment(by: pending) }
            pending = 0
        }
    }

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
        if answers.key != key {
            let counter = requestCounters[key] ?? makeRequestCounter(key)
            answers.restart(key, counters: [counter])
        }
        answers.add()
        if let broadcastKind {
            if kinds.key != broadcastKind {
                let counter = kindCounter(broadcastKind)
                kinds.restart(broadcastKind, counters: [counter])
            }
            kinds.add()
            return
        }
        let type = pushType ?? "none"
        if pushTypes.key != type {
            let counter = pushTypeCounter(type)
            pushTypes.restart(type, counters: [counter])
        }
        pushTypes.add()
    }

    /// Counts an answered request's payload warnings by code (a fixed set: the registry stays small).
    mutating func count(_ warnings: [PayloadWarning]) {
        if self.warnings.key != warnings {
            let counters = warnings.map { warningCounter($0.code) }
            self.warnings.restart(warnings, counters: counters)
        }
        self.warnings.add()
    }

    /// Records how long a batch's answers took, once for each of `requests`.
    func recordLatency(_ duration: Duration, requests: Int) {
        metrics.latency.record(duration, requests: requests)
    }

    /// Adds the counts kept so far to the registry.
    mutating func flush() {
        answers.flush()
        pushTypes.flush()
        kinds.flush()
        warnings.flush()
    }

    private mutating func kindCounter(_ kind: BroadcastRecord.Kind) -> Counter {
        if let counter = kindCounters[kind] { return counter }
        let counter = metrics.requests(kind: kind.rawValue)
        kindCounters[kind] = counter
        return counter
    }

    private mutating func warningCounter(_ code: String) -> Counter {
        if let counter = warningCounters[code] { return counter }
        let counter = metrics.warnings(code: code)
        warningCounters[code] = counter
        return counter
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
