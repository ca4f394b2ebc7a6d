import Synchronization

/// The mock's clock: the wall clock plus an offset that tests move forward (`POST /admin/clock`), so that "expired
/// after 30 days in storage" takes a second.
///
/// The device model, storage expiry and the scenarios' time rules read it; authentication (providers sign with
/// their own clock) and the recordings' `receivedAt` keep the wall clock.
package final class MockClock: Sendable {
    private let wall: @Sendable () -> Int64
    private let offset = Atomic<Int64>(0)

    /// - Parameter wall: milliseconds since the epoch (injectable for tests).
    package init(wall: @escaping @Sendable () -> Int64 = WallClock.milliseconds) {
        self.wall = wall
    }

    /// Milliseconds since the epoch, moved by the offset.
    package func now() -> Int64 { wall() &+ offset.load(ordering: .relaxed) }

    /// How far the clock was moved ahead of the wall clock, in milliseconds.
    package var offsetMilliseconds: Int64 { offset.load(ordering: .relaxed) }

    /// How far ahead of the wall clock the clock may go: 100 years, so no time it gives can overflow.
    package static let maximumOffset: Int64 = 36_500 * 86_400_000

    /// Moves the clock forward; time never goes back, so a negative amount is refused, and it goes at most
    /// ``maximumOffset`` ahead of the wall clock.
    package func advance(by milliseconds: Int64) throws(ClockChangeRefused) {
        guard milliseconds >= 0 else { throw ClockChangeRefused(message: "the clock only moves forward; got \(milliseconds) ms") }
        let refused = offset.withoutAddingPast(Self.maximumOffset, milliseconds)
        if refused {
            throw ClockChangeRefused(message: "the clock goes at most 36500d (100 years) ahead of the wall clock; it is \(ScenarioTimeSyntax.format(milliseconds: offsetMilliseconds)) ahead")
        }
    }

    /// Moves the clock to `time` (milliseconds since the epoch), which must not be before its current time.
    package func advance(to time: Int64) throws(ClockChangeRefused) {
        let now = self.now()
        guard time >= now else {
            throw ClockChangeRefused(message: "the clock only moves forward; \(ISO8601Time.format(milliseconds: time)) is before its time \(ISO8601Time.format(milliseconds: now))")
        }
        try advance(by: time - now)
    }

    /// Back to the wall clock (`POST /admin/reset`).
    package func reset() { offset.store(0, ordering: .relaxed) }

    /// `GET /admin/clock`'s object: `now` (milliseconds), `time` (ISO 8601), `offset` (a duration such as
    /// `31d`) and `offsetMilliseconds`.
    package func jsonObject() -> [String: Any] {
        let offset = offsetMilliseconds
        let now = wall() &+ offset
        return [
            "now": now,
            "time": ISO8601Time.format(milliseconds: now),
            "offset": ScenarioTimeSyntax.format(milliseconds: offset),
            "offsetMilliseconds": offset,
        ]
    }
}

extension Atomic<Int64> {
    /// Adds `amount` unless the sum would pass `limit`; returns whether it refused.
    fileprivate func withoutAddingPast(_ limit: Int64, _ amount: Int64) -> Bool {
        var current = load(ordering: .relaxed)
        while true {
            guard amount <= limit - current else { return true }
            let (exchanged, original) = compareExchange(expected: current, desired: current + amount, ordering: .relaxed)
            if exchanged { return false }
            current = original
        }
    }
}

/// A clock change the mock refuses, with why.
package struct ClockChangeRefused: Error, Sendable, Equatable, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
