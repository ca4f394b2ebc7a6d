/// What `MockServer.start` has started so far, each with how to stop it. When a later step fails, `stopAll`
/// stops them in reverse order, so a failed start leaves nothing running and asks nothing of a stopped loop.
struct StartedParts: Sendable {
    private var stops: [@Sendable () async -> Void] = []

    /// Notes a part that is running, and how to stop it.
    mutating func started(_ stop: @escaping @Sendable () async -> Void) {
        stops.append(stop)
    }

    /// Stops every part, the last started first.
    func stopAll() async {
        for stop in stops.reversed() { await stop() }
    }
}
