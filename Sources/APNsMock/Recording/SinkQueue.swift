import DequeModule

/// What a sink's queue does when it is full.
public enum SinkQueuePolicy: String, Sendable, Equatable {
    /// Keep everything: the provider port stops reading (TCP flow control pushes back on the provider) until the
    /// queue has drained to half. Never blocks an event loop. For sinks that must not lose a recording (the file).
    case backPressure = "back-pressure"
    /// Let the oldest queued recordings go and count them, so the reader is told it skipped ahead. For viewers that
    /// must never slow the provider down (a live feed).
    case skipAhead = "skip-ahead"
}

/// A sink's bounded queue as a value: what to do on each push and take, with no threads, so its policy is tested
/// on its own. The sink guards it with a lock and carries out what it returns.
public struct SinkQueue<Element> {
    public let capacity: Int
    public let policy: SinkQueuePolicy
    /// A deque: a skip-ahead queue drops its oldest element on every push once full, in constant time.
    private var elements = Deque<Element>()
    /// An empty deque with capacity (see `recycle`).
    private var spare = Deque<Element>()
    /// A written batch the consumer handed back still holding its elements, for a producer to let go of (see
    /// `giveBack`).
    private var written = Deque<Element>()
    public private(set) var statistics: RecordingSinkStatistics
    /// The provider port was asked to pause and has not been released yet.
    public private(set) var isPushingBack = false
    /// The consumer comes back on its own within moments (see `linger()`): a push need not wake it.
    public private(set) var consumerLingers = false

    /// What the sink must do after a push.
    public enum PushAction: Equatable {
        case none
        /// Wake the consumer: the queue was empty and the consumer is not lingering.
        case wakeConsumer
        /// The queue reached its capacity: ask the provider port to pause reading (back-pressure policy).
        case engageBackPressure
    }

    /// What the sink must do after a take.
    public enum TakeAction: Equatable {
        case none
        /// The queue drained to half its capacity: let the provider port read again.
        case releaseBackPressure
    }

    public init(name: String, capacity: Int, policy: SinkQueuePolicy) {
        precondition(capacity > 1, "a sink's queue holds at least two recordings")
        self.capacity = capacity
        self.policy = policy
        self.statistics = RecordingSinkStatistics(name: name, policy: policy, capacity: capacity)
    }

    public var count: Int { elements.count }

    /// Queues an element. With back-pressure the queue may pass its capacity by what is already in flight (the
    /// requests of the read batches being handled when it filled): nothing is ever refused.
    public mutating func push(_ element: Element) -> PushAction {
        if policy == .skipAhead, elements.count >= capacity {
            elements.removeFirst()
            statistics.skipped += 1
        }
        let wasEmpty = elements.isEmpty
        elements.append(element)
        return settle(wasEmpty: wasEmpty)
    }

    /// Queues several elements in order; the action is the strongest any of them asked for.
    public mutating func push(contentsOf batch: [Element]) -> PushAction {
        guard !batch.isEmpty else { return .none }
        if policy == .backPressure {
            // What pushing them one at a time would do, in one append: an event loop hands over a read's
            // recordings at once, under the sink's lock.
            let wasEmpty = elements.isEmpty
            elements.append(contentsOf: batch)
            return settle(wasEmpty: wasEmpty)
        }
        var strongest = PushAction.none
        for element in batch {
            switch push(element) {
            case .none: break
            case .wakeConsumer: if strongest == .none { strongest = .wakeConsumer }
            case .engageBackPressure: strongest = .engageBackPressure
            }
        }
        return strongest
    }

    /// As `push(contentsOf:)`, moving the elements out of `batch` (left empty, with its capacity) instead of
    /// copying them: for elements holding references, a retain and a release fewer of each, on an event loop.
    public mutating func push(moving batch: inout [Element]) -> PushAction {
        guard policy == .backPressure, !batch.isEmpty else {
            defer { batch.removeAll(keepingCapacity: true) }
            return push(contentsOf: batch)
        }
        let wasEmpty = elements.isEmpty
        // Taken from the back after one reversal (a swap moves): `popLast` and `append` move, where appending the
        // array copied each element and dropping the array released it again.
        batch.reverseByMoving()
        while let element = batch.popLast() { elements.append(element) }
        return settle(wasEmpty: wasEmpty)
    }

    /// Takes everything queued (the consumer writes it as one batch), leaving the deque `recycle` kept in its
    /// place.
    public mutating func takeAll() -> (elements: Deque<Element>, action: TakeAction) {
        // Moved out, not copied: a copy retained every element (on the consumer's thread, while event loops retain
        // the same shared storage) only to release them again.
        var taken = Deque<Element>()
        swap(&taken, &spare)
        swap(&taken, &elements)
        statistics.queued = 0
        return (taken, releaseIfDrained())
    }

    /// Keeps a written batch's deque, emptied by the consumer (outside the lock) with its capacity, for the next
    /// `takeAll` to leave in the queue: a new deque for every batch made event loops grow it from nothing, each
    /// large growth fresh memory from the kernel (page faults) on the provider's path.
    public mutating func recycle(_ spent: inout Deque<Element>) {
        precondition(spent.isEmpty, "a recycled deque must be empty")
        swap(&spare, &spent)
    }

    /// Keeps a written batch with its elements in it, for an event loop to take (`takeWritten`, from
    /// `RecordingSink.releaseWritten`) and empty on its own thread, then `recycle`. Recordings share their storage
    /// with the event loop that made them, whose every new recording retains it: released on the consumer's
    /// thread, each release pulled that object's reference count to another core and back (with the file on, the
    /// loop's `swift_retain` and `swift_release` took 58% and 37% more time per request than without).
    /// Returns false, leaving `spent` as it was, while the last one given back has not been taken (the consumer
    /// then empties its own).
    public mutating func giveBack(_ spent: inout Deque<Element>) -> Bool {
        guard written.isEmpty else { return false }
        swap(&written, &spent)
        return true
    }

    /// The written batch given back, if any: the caller empties it outside the lock and hands it to `recycle`.
    public mutating func takeWritten() -> Deque<Element>? {
        guard !written.isEmpty else { return nil }
        var taken = Deque<Element>()
        swap(&taken, &written)
        return taken
    }

    /// The consumer will look again shortly without being woken: it just wrote a batch, and under load more is on
    /// its way. Waking a thread for every read's recordings cost more than writing them (a context switch, and an
    /// interrupt between processors, which in a virtual machine is an exit to the host).
    public mutating func linger() {
        consumerLingers = true
    }

    /// What the consumer does when its take found nothing.
    public enum IdleAction: Equatable {
        /// Something was queued since: take again.
        case takeAgain
        /// Wait a moment without being woken (a push does not wake a lingering consumer), then take again.
        case linger
        /// Sleep until woken: the next push wakes it.
        case sleep
    }

    /// The consumer's take found nothing; `lingeredAlready` says whether it has just lingered in vain.
    public mutating func idle(lingeredAlready: Bool) -> IdleAction {
        guard elements.isEmpty else { return .takeAgain }
        if consumerLingers, !lingeredAlready { return .linger }
        consumerLingers = false
        return .sleep
    }

    /// Counts elements the consumer has finished with.
    public mutating func finished(_ count: Int) {
        statistics.written += UInt64(count)
    }

    public mutating func failed(_ error: String) {
        statistics.lastError = error
    }

    /// After elements went in: the counts, and what the sink must do (see `PushAction`).
    private mutating func settle(wasEmpty: Bool) -> PushAction {
        statistics.queued = elements.count
        statistics.peakQueued = max(statistics.peakQueued, elements.count)
        if policy == .backPressure, !isPushingBack, elements.count >= capacity {
            isPushingBack = true
            statistics.backPressurePauses += 1
            return .engageBackPressure
        }
        return wasEmpty && !consumerLingers ? .wakeConsumer : .none
    }

    private mutating func releaseIfDrained() -> TakeAction {
        guard isPushingBack, elements.count <= capacity / 2 else { return .none }
        isPushingBack = false
        return .releaseBackPressure
    }
}

/// A recording sink's queue, its per-recording operations compiled for recordings here, in the queue's module.
///
/// Called from another module (the server's sinks), a generic method runs unspecialized: `Deque`'s append then
/// looked up its element type's metadata for every recording, under the store's lock on an event loop
/// (`swift_getGenericMetadata` in the loops' profile). These are specialized where they are compiled.
extension SinkQueue where Element == RecordedNotification {
    public mutating func pushRecording(_ recording: RecordedNotification) -> PushAction {
        push(recording)
    }

    public mutating func pushRecordings(contentsOf batch: [RecordedNotification]) -> PushAction {
        push(contentsOf: batch)
    }

    public mutating func pushRecordings(moving batch: inout [RecordedNotification]) -> PushAction {
        push(moving: &batch)
    }
}
