import DequeModule

/// What a sink's queue does when it is full.
package enum SinkQueuePolicy: String, Sendable, Equatable {
    /// Keep everything: the provider port stops reading (TCP flow control pushes back on the provider) until the
    /// queue has drained to half. Never blocks an event loop. For sinks that must not lose a recording (the file).
    case backPressure = "back-pressure"
    /// Let the oldest queued recordings go and count them, so the reader is told it skipped ahead. For viewers that
    /// must never slow the provider down (a live feed).
    case skipAhead = "skip-ahead"
}

/// A sink's bounded queue as a value: what to do on each push and take, with no threads, so its policy is tested
/// on its own. The sink guards it with a lock and carries out what it returns.
///
/// A skip-ahead queue keeps its elements in a deque (it drops its oldest on every push once full, in constant time).
/// A back-pressure queue keeps the arrays it is given as they are (`chunks`): an event loop hands over a read's
/// recordings as one array, and the consumer takes the arrays, so no element is moved or copied between them.
package struct SinkQueue<Element> {
    package let capacity: Int
    package let policy: SinkQueuePolicy
    /// A skip-ahead queue's elements.
    private var elements = Deque<Element>()
    /// A back-pressure queue's elements, in order: the arrays pushed, each kept whole.
    private var chunks: [[Element]] = []
    /// Elements queued, in either form.
    private var queued = 0
    /// Emptied arrays with their capacity (see `recycle`), swapped for the arrays pushed by moving, so that the
    /// pusher fills one it already has room in.
    private var spareArrays: [[Element]] = []
    /// A written batch the consumer handed back still holding its elements, for an event loop to let go of (see
    /// `giveBack`).
    private var written: [[Element]] = []
    package private(set) var statistics: RecordingSinkStatistics
    /// The provider port was asked to pause and has not been released yet.
    package private(set) var isPushingBack = false
    /// The consumer comes back on its own within moments (see `linger()`): a push need not wake it.
    package private(set) var consumerLingers = false

    /// Spare arrays kept at most: more than a writer's batch usually holds reads of.
    static var spareArrayLimit: Int { 256 }

    /// What the sink must do after a push.
    package enum PushAction: Equatable {
        case none
        /// Wake the consumer: the queue was empty and the consumer is not lingering.
        case wakeConsumer
        /// The queue reached its capacity: ask the provider port to pause reading (back-pressure policy).
        case engageBackPressure
    }

    /// What the sink must do after a take.
    package enum TakeAction: Equatable {
        case none
        /// The queue drained to half its capacity: let the provider port read again.
        case releaseBackPressure
    }

    package init(name: String, capacity: Int, policy: SinkQueuePolicy) {
        precondition(capacity > 1, "a sink's queue holds at least two recordings")
        self.capacity = capacity
        self.policy = policy
        self.statistics = RecordingSinkStatistics(name: name, policy: policy, capacity: capacity)
    }

    package var count: Int { queued }

    /// Queues an element. With back-pressure the queue may pass its capacity by what is already in flight (the
    /// requests of the read batches being handled when it filled): nothing is ever refused.
    package mutating func push(_ element: Element) -> PushAction {
        let wasEmpty = queued == 0
        if policy == .skipAhead {
            if elements.count >= capacity {
                elements.removeFirst()
                queued -= 1
                statistics.skipped += 1
            }
            elements.append(element)
        } else {
            chunks.append([element])
        }
        queued += 1
        return settle(wasEmpty: wasEmpty)
    }

    /// Queues several elements in order; the action is the strongest any of them asked for.
    package mutating func push(contentsOf batch: [Element]) -> PushAction {
        guard !batch.isEmpty else { return .none }
        if policy == .backPressure {
            // What pushing them one at a time would do, in one step: the array is kept as it is (shared with the
            // caller until either changes it).
            let wasEmpty = queued == 0
            chunks.append(batch)
            queued += batch.count
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

    /// As `push(contentsOf:)`, taking the array itself: `batch` is left empty, with the capacity of a spare array
    /// when there is one. With back-pressure nothing is copied or moved (every recording used to be moved three
    /// times or more on its way in, ~140 bytes each, the event loops' largest extra cost with a file); with
    /// skip-ahead the elements are moved into the deque.
    package mutating func push(moving batch: inout [Element]) -> PushAction {
        guard !batch.isEmpty else { return .none }
        guard policy == .backPressure else {
            defer { batch.removeAll(keepingCapacity: true) }
            return push(contentsOf: batch)
        }
        let wasEmpty = queued == 0
        queued += batch.count
        var taken = spareArrays.popLast() ?? []
        swap(&taken, &batch)
        chunks.append(taken)
        return settle(wasEmpty: wasEmpty)
    }

    /// Takes everything queued, in order, as one deque (a skip-ahead queue's consumer writes it as one batch; for a
    /// back-pressure queue the arrays are joined, see `takeChunks`).
    package mutating func takeAll() -> (elements: Deque<Element>, action: TakeAction) {
        if policy == .backPressure {
            let (chunks, action) = takeChunks()
            return (Deque(chunks.joined()), action)
        }
        // Moved out, not copied.
        var taken = Deque<Element>()
        swap(&taken, &elements)
        queued = 0
        statistics.queued = 0
        return (taken, releaseIfDrained())
    }

    /// Takes everything a back-pressure queue holds, in order, as the arrays it was given: moved out, not copied (a
    /// copy retained every element, on the consumer's thread, while event loops retain the same shared storage).
    package mutating func takeChunks() -> (chunks: [[Element]], action: TakeAction) {
        precondition(policy == .backPressure, "a skip-ahead queue is taken with takeAll")
        var taken: [[Element]] = []
        swap(&taken, &chunks)
        queued = 0
        statistics.queued = 0
        return (taken, releaseIfDrained())
    }

    /// Keeps arrays emptied (outside the lock) with their capacity, for `push(moving:)` to hand back to the pusher:
    /// a new array for every read made event loops grow one from nothing, each large growth fresh memory from the
    /// kernel (page faults) on the provider's path.
    package mutating func recycle(_ spent: inout [[Element]]) {
        precondition(spent.allSatisfy(\.isEmpty), "recycled arrays must be empty")
        while spareArrays.count < Self.spareArrayLimit, let array = spent.popLast() { spareArrays.append(array) }
        spent.removeAll()
    }

    /// Keeps a written batch with its elements in it, for an event loop to take (`takeWritten`, from
    /// `RecordingSink.releaseWritten`) and empty on its own thread, then `recycle`. Recordings share their storage
    /// with the event loop that made them, whose every new recording retains it: released on the consumer's
    /// thread, each release pulled that object's reference count to another core and back, and the loop's next
    /// retain of it waited for the cache line.
    /// Returns false, leaving `spent` as it was, while the last one given back has not been taken (the consumer
    /// then empties its own).
    package mutating func giveBack(_ spent: inout [[Element]]) -> Bool {
        guard written.isEmpty else { return false }
        swap(&written, &spent)
        return true
    }

    /// The written batch given back, if any: the caller empties its arrays outside the lock and hands them to
    /// `recycle`.
    package mutating func takeWritten() -> [[Element]]? {
        guard !written.isEmpty else { return nil }
        var taken: [[Element]] = []
        swap(&taken, &written)
        return taken
    }

    /// The consumer will look again shortly without being woken: it just wrote a batch, and under load more is on
    /// its way. Waking a thread for every read's recordings cost more than writing them (a context switch, and an
    /// interrupt between processors, which in a virtual machine is an exit to the host).
    package mutating func linger() {
        consumerLingers = true
    }

    /// What the consumer does when its take found nothing.
    package enum IdleAction: Equatable {
        /// Something was queued since: take again.
        case takeAgain
        /// Wait a moment without being woken (a push does not wake a lingering consumer), then take again.
        case linger
        /// Sleep until woken: the next push wakes it.
        case sleep
    }

    /// The consumer's take found nothing; `lingeredAlready` says whether it has just lingered in vain.
    package mutating func idle(lingeredAlready: Bool) -> IdleAction {
        guard queued == 0 else { return .takeAgain }
        if consumerLingers, !lingeredAlready { return .linger }
        consumerLingers = false
        return .sleep
    }

    /// Counts elements the consumer has finished with.
    package mutating func finished(_ count: Int) {
        statistics.written += UInt64(count)
    }

    package mutating func failed(_ error: String) {
        statistics.lastError = error
    }

    /// After elements went in: the counts, and what the sink must do (see `PushAction`).
    private mutating func settle(wasEmpty: Bool) -> PushAction {
        statistics.queued = queued
        statistics.peakQueued = max(statistics.peakQueued, queued)
        if policy == .backPressure, !isPushingBack, queued >= capacity {
            isPushingBack = true
            statistics.backPressurePauses += 1
            return .engageBackPressure
        }
        return wasEmpty && !consumerLingers ? .wakeConsumer : .none
    }

    private mutating func releaseIfDrained() -> TakeAction {
        guard isPushingBack, queued <= capacity / 2 else { return .none }
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
    package mutating func pushRecording(_ recording: RecordedNotification) -> PushAction {
        push(recording)
    }

    package mutating func pushRecordings(contentsOf batch: [RecordedNotification]) -> PushAction {
        push(contentsOf: batch)
    }

    package mutating func pushRecordings(moving batch: inout [RecordedNotification]) -> PushAction {
        push(moving: &batch)
    }
}
