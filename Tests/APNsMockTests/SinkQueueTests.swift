import Foundation
import Synchronization
import Testing

@testable import APNsMock

/// A sink's queue policy, without threads.
@Suite("Sink queue")
struct SinkQueueTests {
    @Test func theFirstPushWakesTheConsumer() {
        var queue = SinkQueue<Int>(name: "file", capacity: 4, policy: .backPressure)
        #expect(queue.push(1) == .wakeConsumer)
        #expect(queue.push(2) == .none)
    }

    /// After a batch the consumer lingers: pushes meanwhile do not wake it, it looks again once, and only when
    /// that finds nothing does it sleep, after which the next push wakes it again.
    @Test func aLingeringConsumerIsNotWokenAndSleepsOnlyAfterLingeringInVain() {
        var queue = SinkQueue<Int>(name: "file", capacity: 100, policy: .backPressure)
        #expect(queue.push(1) == .wakeConsumer)
        #expect(queue.takeAll().elements.count == 1)
        queue.linger()
        #expect(queue.idle(lingeredAlready: false) == .linger)
        #expect(queue.push(2) == .none)
        #expect(queue.idle(lingeredAlready: true) == .takeAgain)
        #expect(Array(queue.takeAll().elements) == [2])
        #expect(queue.idle(lingeredAlready: true) == .sleep)
        #expect(!queue.consumerLingers)
        #expect(queue.push(3) == .wakeConsumer)
        // Back-pressure still wakes a lingering consumer.
        queue.linger()
        #expect(queue.push(contentsOf: Array(4...102)) == .engageBackPressure)
    }

    /// A back-pressure queue keeps the arrays pushed by moving as they are, and gives the pusher a recycled array
    /// (empty, with its capacity) in exchange; the consumer takes the arrays in order.
    @Test func arraysPushedByMovingAreTakenWholeAndRecycledArraysGoBackToThePusher() {
        var queue = SinkQueue<Int>(name: "file", capacity: 100, policy: .backPressure)
        var read = [1, 2, 3]
        _ = queue.push(moving: &read)
        #expect(read.isEmpty)
        _ = queue.push(4)
        _ = queue.push(contentsOf: [5, 6])
        #expect(queue.count == 6)
        var batch = queue.takeChunks().chunks
        #expect(batch == [[1, 2, 3], [4], [5, 6]])
        #expect(queue.count == 0)
        batch[0].removeAll(keepingCapacity: true)
        batch[0].reserveCapacity(64)
        let capacity = batch[0].capacity
        var spent = [batch[0]]
        batch[0] = []
        queue.recycle(&spent)
        #expect(spent.isEmpty)
        var next = [7, 8]
        _ = queue.push(moving: &next)
        #expect(next.isEmpty && next.capacity == capacity)
        #expect(queue.takeAll().elements == [7, 8])
    }

    /// The consumer gives a written batch back with its elements; a producer takes it (once), empties it and
    /// recycles it; a second batch given back before the first was taken stays with the consumer.
    @Test func aWrittenBatchGivenBackIsTakenOnceThenRecycled() {
        var queue = SinkQueue<Int>(name: "file", capacity: 100, policy: .backPressure)
        let nothingYet = queue.takeWritten()
        #expect(nothingYet == nil)
        _ = queue.push(contentsOf: [1, 2, 3])
        var first = queue.takeChunks().chunks
        let firstGiven = queue.giveBack(&first)
        #expect(firstGiven && first.isEmpty)
        _ = queue.push(contentsOf: [4, 5])
        var second = queue.takeChunks().chunks
        let secondGiven = queue.giveBack(&second)
        #expect(!secondGiven && second == [[4, 5]])
        guard var written = queue.takeWritten() else {
            Issue.record("the batch given back was not there to take")
            return
        }
        #expect(written == [[1, 2, 3]])
        let takenTwice = queue.takeWritten()
        #expect(takenTwice == nil)
        written[0].removeAll(keepingCapacity: true)
        queue.recycle(&written)
        _ = queue.push(6)
        #expect(queue.takeChunks().chunks == [[6]])
        let secondGivenLater = queue.giveBack(&second)
        let secondTaken = queue.takeWritten()
        #expect(secondGivenLater && secondTaken == [[4, 5]])
    }

    @Test func aBatchAsksForTheStrongestActionAnyOfItsElementsDid() {
        var queue = SinkQueue<Int>(name: "file", capacity: 4, policy: .backPressure)
        #expect(queue.push(contentsOf: [1, 2]) == .wakeConsumer)
        #expect(queue.push(contentsOf: [3, 4, 5]) == .engageBackPressure)
        #expect(queue.push(contentsOf: []) == .none)
        #expect(queue.takeAll().elements == [1, 2, 3, 4, 5])
        var skipping = SinkQueue<Int>(name: "live", capacity: 3, policy: .skipAhead)
        #expect(skipping.push(contentsOf: [1, 2, 3, 4, 5]) == .wakeConsumer)
        #expect(skipping.statistics.skipped == 2)
        #expect(skipping.takeAll().elements == [3, 4, 5])
    }

    /// A back-pressure queue takes a batch in one append: its actions and counts must be those of pushing the
    /// elements one at a time.
    @Test func aBatchCountsAsItsElementsOneAtATime() {
        let batches = [[1, 2], [3], [4, 5, 6], [7], [], [8, 9, 10, 11, 12]]
        var batched = SinkQueue<Int>(name: "file", capacity: 4, policy: .backPressure)
        var single = SinkQueue<Int>(name: "file", capacity: 4, policy: .backPressure)
        for (index, batch) in batches.enumerated() {
            let strongest = batch.map { single.push($0) }.max { rank($0) < rank($1) } ?? .none
            #expect(batched.push(contentsOf: batch) == strongest)
            #expect(batched.statistics == single.statistics)
            if index == 3 {
                #expect(batched.takeAll().elements == single.takeAll().elements)
            }
        }
        #expect(batched.takeAll().elements == [8, 9, 10, 11, 12])
        #expect(batched.statistics.backPressurePauses == 2)
        func rank(_ action: SinkQueue<Int>.PushAction) -> Int {
            switch action {
            case .none: 0
            case .wakeConsumer: 1
            case .engageBackPressure: 2
            }
        }
    }

    /// The last sink takes a batch by moving it: the same actions, counts and order as a copy, and the batch left
    /// empty (with its capacity under skip-ahead; a back-pressure queue keeps the array), under both policies.
    @Test func aMovedBatchActsAsACopiedOneAndIsLeftEmpty() {
        let batches = [[1, 2], [3], [4, 5, 6], [], [7, 8, 9, 10, 11, 12]]
        for policy in [SinkQueuePolicy.backPressure, .skipAhead] {
            var moved = SinkQueue<Int>(name: "file", capacity: 4, policy: policy)
            var copied = SinkQueue<Int>(name: "file", capacity: 4, policy: policy)
            for (index, batch) in batches.enumerated() {
                var handed = batch
                handed.reserveCapacity(16)
                let capacity = handed.capacity
                #expect(moved.push(moving: &handed) == copied.push(contentsOf: batch), "\(policy) batch \(index)")
                // A back-pressure queue keeps the array itself (the pusher gets a spare one, here none).
                #expect(handed.isEmpty && (policy == .backPressure && !batch.isEmpty || handed.capacity == capacity))
                #expect(moved.statistics == copied.statistics)
                if index == 2 { #expect(moved.takeAll().elements == copied.takeAll().elements) }
            }
            let rest = moved.takeAll().elements
            #expect(rest == copied.takeAll().elements)
            #expect(Array(rest) == (policy == .backPressure ? [7, 8, 9, 10, 11, 12] : [9, 10, 11, 12]))
        }
    }

    @Test func backPressureEngagesOnceAtCapacityAndKeepsEverything() {
        var queue = SinkQueue<Int>(name: "file", capacity: 4, policy: .backPressure)
        for value in 1...3 { _ = queue.push(value) }
        #expect(queue.push(4) == .engageBackPressure)
        #expect(queue.isPushingBack)
        // What is in flight when it fills still goes in: nothing is refused or lost.
        #expect(queue.push(5) == .none)
        #expect(queue.push(6) == .none)
        #expect(queue.statistics.backPressurePauses == 1)
        #expect(queue.statistics.peakQueued == 6)
        let taken = queue.takeAll()
        #expect(taken.elements == [1, 2, 3, 4, 5, 6])
        #expect(taken.action == .releaseBackPressure)
        #expect(!queue.isPushingBack)
        #expect(queue.statistics.queued == 0)
        #expect(queue.statistics.skipped == 0)
    }

    @Test func backPressureEngagesAgainAfterARelease() {
        var queue = SinkQueue<Int>(name: "file", capacity: 2, policy: .backPressure)
        _ = queue.push(1)
        #expect(queue.push(2) == .engageBackPressure)
        _ = queue.takeAll()
        _ = queue.push(3)
        #expect(queue.push(4) == .engageBackPressure)
        #expect(queue.statistics.backPressurePauses == 2)
    }

    @Test func aTakeWithoutBackPressureReleasesNothing() {
        var queue = SinkQueue<Int>(name: "file", capacity: 8, policy: .backPressure)
        _ = queue.push(1)
        #expect(queue.takeAll().action == .none)
    }

    @Test func skipAheadLetsTheOldestGoAndCountsThem() {
        var queue = SinkQueue<Int>(name: "feed", capacity: 3, policy: .skipAhead)
        for value in 1...5 {
            let action = queue.push(value)
            #expect(action != .engageBackPressure)
        }
        #expect(!queue.isPushingBack)
        #expect(queue.statistics.skipped == 2)
        #expect(queue.statistics.peakQueued == 3)
        #expect(queue.takeAll().elements == [3, 4, 5])
    }

    @Test func writtenAndErrorsAreCounted() {
        var queue = SinkQueue<Int>(name: "file", capacity: 8, policy: .backPressure)
        _ = queue.push(1)
        _ = queue.push(2)
        let taken = queue.takeAll()
        queue.finished(taken.elements.count)
        queue.failed("No space left on device")
        #expect(queue.statistics.written == 2)
        #expect(queue.statistics.lastError == "No space left on device")
    }

    @Test func theBackPressureSwitchResumesWaitersOnlyWhenEverySinkIsReleased() {
        let switchboard = RecordingBackPressure()
        let resumed = Counter()
        switchboard.whenReleased { resumed.add() }
        #expect(resumed.value == 1, "not engaged: resumed at once")
        switchboard.engage()
        switchboard.engage()
        #expect(switchboard.isEngaged)
        switchboard.whenReleased { resumed.add() }
        switchboard.release()
        #expect(resumed.value == 1, "one sink is still full")
        switchboard.release()
        #expect(resumed.value == 2)
        #expect(!switchboard.isEngaged)
    }

    /// At shutdown the paused connections are closed before their event loops stop: the sinks' last release must
    /// not resume them.
    @Test func afterShutdownBeganWaitersAreNotResumedByTheLastRelease() {
        let switchboard = RecordingBackPressure()
        let resumed = Counter()
        switchboard.engage()
        switchboard.whenReleased { resumed.add() }
        switchboard.stopResumingWaiters()
        // A connection that begins waiting while the loops are stopping is not kept either.
        switchboard.whenReleased { resumed.add() }
        switchboard.release()
        #expect(resumed.value == 0)
        #expect(!switchboard.isEngaged)
        // Not engaged: the caller goes on at once, as always.
        switchboard.whenReleased { resumed.add() }
        #expect(resumed.value == 1)
    }

    /// A release already resuming a connection on the writer's thread when shutdown begins: once
    /// `stopResumingWaiters` has returned (and the loops may stop), that resume has finished, not still on its way
    /// to a loop. The resume takes 100 ms here, the window an unlucky thread switch opens.
    @Test func stopResumingWaitersReturnsOnlyAfterAResumeUnderWayHasFinished() {
        let switchboard = RecordingBackPressure()
        let started = DispatchSemaphore(value: 0)
        let finished = Counter()
        switchboard.engage()
        switchboard.whenReleased {
            started.signal()
            Thread.sleep(forTimeInterval: 0.1)
            finished.add()
        }
        let writer = Thread { switchboard.release() }
        writer.start()
        #expect(started.wait(timeout: .now() + 10) == .success)
        switchboard.stopResumingWaiters()
        #expect(finished.value == 1)
    }
}

private final class Counter: Sendable {
    private let count = Mutex(0)
    func add() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
