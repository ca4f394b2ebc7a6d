import Synchronization

/// The switch a back-pressure sink throws when its queue is full: provider connections check it after each read
/// batch and, while it is engaged, stop asking their socket for more bytes until it is released.
///
/// Checking is one atomic load, so the hot path pays nothing while no sink is behind.
package final class RecordingBackPressure: Sendable {
    private let engagedBy = Atomic<Int>(0)
    private let waiters = Mutex(Waiters())

    private struct Waiters {
        var resumes: [@Sendable () -> Void] = []
        /// Cleared by `stopResumingWaiters` (at shutdown).
        var keepsWaiters = true
    }

    package init() {}

    /// Whether some sink is full.
    package var isEngaged: Bool { engagedBy.load(ordering: .acquiring) > 0 }

    /// Calls `resume` once no sink is full any more: at once when none is now. It runs on the releasing sink's
    /// thread, so it must only hop to where the work belongs (an event loop).
    package func whenReleased(_ resume: @escaping @Sendable () -> Void) {
        let now = waiters.withLock { waiters -> Bool in
            guard isEngaged else { return true }
            if waiters.keepsWaiters { waiters.resumes.append(resume) }
            return false
        }
        if now { resume() }
    }

    /// From now on, connections waiting for a release are not resumed, and new ones are not kept: their event loops
    /// are about to stop and close them (resuming them after that, when the sinks finish, asked stopped loops to
    /// run work; a connection could still begin waiting while the loops were stopping). When it returns, no resume
    /// is running either (`release` resumes inside the same lock).
    package func stopResumingWaiters() {
        waiters.withLock { waiters in
            waiters.keepsWaiters = false
            waiters.resumes.removeAll()
        }
    }

    package func engage() {
        waiters.withLock { _ in _ = engagedBy.add(1, ordering: .releasing) }
    }

    /// Resumes the waiters once no sink is full, inside the lock: a resume run after it was let go could reach a
    /// connection's event loop after `stopResumingWaiters` had returned and the loops had stopped (seen once in
    /// an AddressSanitizer run of the signal tests). A resume only hops to a loop, and never calls back here.
    package func release() {
        waiters.withLock { waiters in
            let remaining = engagedBy.subtract(1, ordering: .releasing).newValue
            guard remaining <= 0 else { return }
            for resume in waiters.resumes { resume() }
            waiters.resumes.removeAll()
        }
    }
}
