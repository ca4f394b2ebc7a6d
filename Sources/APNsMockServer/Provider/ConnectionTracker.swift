import Synchronization

/// Numbers provider connections and counts the open ones, across event loops.
package final class ConnectionTracker: Sendable {
    private let nextID = Atomic<UInt64>(1)
    private let open = Atomic<Int>(0)
    private let total = Atomic<Int>(0)
    private let streams = Atomic<Int>(0)

    package init() {}

    func nextConnectionID() -> UInt64 {
        nextID.add(1, ordering: .relaxed).oldValue
    }

    func opened() {
        open.add(1, ordering: .relaxed)
        total.add(1, ordering: .relaxed)
    }

    func closed() {
        open.subtract(1, ordering: .relaxed)
    }

    /// - Parameter delta: streams a session opened less those it closed since it last said (negative when more
    ///   closed).
    func addOpenStreams(_ delta: Int) {
        streams.add(delta, ordering: .relaxed)
    }

    /// HTTP/2 streams open now, over all connections.
    package var openStreams: Int { streams.load(ordering: .relaxed) }

    /// Connections open now.
    package var openConnections: Int { open.load(ordering: .relaxed) }
    /// Connections accepted since start.
    package var acceptedConnections: Int { total.load(ordering: .relaxed) }
}
