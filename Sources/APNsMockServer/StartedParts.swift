/// What `MockServer.start` has started so far, each with how to stop it. When a later step fails, `stopAll`
/// stops them in reverse order, so a failed start leaves nothing running and asks nothing of a stopped loop.
package struct StartedParts: Sendable {
    package init() {}

    private var stops: [@Sendable () async -> Void] = []

    /// Notes a part that is running, and how to stop it.
    package mutating func started(_ stop: @escaping @Sendable () async -> Void) {
        stops.append(stop)
    }

    /// Stops every part, the last started first.
    package func stopAll() async {
        for stop in stops.reversed() { await stop() }
    }
}
