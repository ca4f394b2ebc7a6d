/// Where recordings go: made once the wire has said what became of a request, stored in the in-memory store
/// (which numbers them and serves the admin API), and handed in the same order to every other sink.
///
/// The connection handler calls `record` beside the request path, after the answer's frames were handed to the
/// socket layer or the stream was given up; the decision itself records nothing.
package final class Recorder: Sendable {
    /// The in-memory store: queries, waits and the counts of `/admin/stats`.
    package let store: NotificationStore
    /// The other sinks, in the order they were given.
    package let sinks: [any RecordingSink]
    /// Thrown by a back-pressure sink whose queue is full; provider connections pause reading while it is.
    package let backPressure: RecordingBackPressure
    /// What recordings keep of the provider's credentials, wherever they go (the admin API, the live feed, every
    /// sink and store).
    package let credentials: RecordCredentials

    /// - Parameters:
    ///   - capacity: recordings the store keeps before evicting the oldest.
    ///   - sinks: consumers given every recording after the store, in sequence order.
    ///   - devices: the simulated devices, given the pushes accepted for them (see `DeviceRegistry.accept`).
    ///   - credentials: `full` keeps the `authorization` header as sent; by default a token's signature is dropped.
    ///   - retention: milliseconds a recording is kept, in the store and the sinks that keep recordings.
    package init(
        capacity: Int = 100_000,
        sinks: [any RecordingSink] = [],
        backPressure: RecordingBackPressure = RecordingBackPressure(),
        devices: DeviceRegistry? = nil,
        credentials: RecordCredentials = .redacted,
        retention: Int64? = nil,
        tenants: TenantDirectory? = nil
    ) {
        self.credentials = credentials
        self.sinks = sinks
        self.backPressure = backPressure
        // A recording that ages out goes from the sinks that keep recordings too (a database), as with a clear.
        let expire: @Sendable (UInt64) -> Void = { last in for sink in sinks { sink.cleared(upTo: last) } }
        if sinks.isEmpty {
            store = NotificationStore(capacity: capacity, devices: devices, tenants: tenants, retention: retention)
        } else {
            store = NotificationStore(
                capacity: capacity,
                isListening: { sinks.contains { $0.isListening } },
                onAppend: { recordings in Self.hand(&recordings, to: sinks) },
                onIngest: { recordings in
                    for sink in sinks where sink.receivesOtherReplicas && sink.isListening { sink.enqueue(contentsOf: recordings) }
                },
                devices: devices,
                tenants: tenants,
                retention: retention,
                onExpire: expire
            )
        }
    }

    /// Gives a batch to every listening sink: copies to all but the last, which takes the recordings themselves
    /// (usually the only one: a file, or a store).
    private static func hand(_ recordings: inout [RecordedNotification], to sinks: [any RecordingSink]) {
        var previous: (any RecordingSink)?
        for sink in sinks where sink.isListening {
            previous?.enqueue(contentsOf: recordings)
            previous = sink
        }
        previous?.enqueue(moving: &recordings)
    }

    /// Records a request with the outcome its decision gave and what became of the answer on the wire.
    ///
    /// An answer that was not sent is recorded without it, as abandoned, with why and with the answer it would
    /// have been: a recording never claims an answer the client did not get.
    @discardableResult
    package func record(
        _ request: borrowing APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        outcome: borrowing RecordingOutcome,
        delivery: AnswerDelivery = .sent,
        context: inout RecordingContext
    ) -> UInt64 {
        store.append(recording(request, streamID: streamID, connection: connection, outcome: outcome, delivery: delivery, context: &context))
    }

    /// Makes the recording as `record` does, into a connection's batch; `commit` stores the batch. A connection
    /// handler records a read's requests so, taking the store's lock once per read rather than once per request.
    package func record(
        _ request: borrowing APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        outcome: borrowing RecordingOutcome,
        delivery: AnswerDelivery = .sent,
        into batch: inout [RecordedNotification],
        context: inout RecordingContext
    ) {
        batch.append(recording(request, streamID: streamID, connection: connection, outcome: outcome, delivery: delivery, context: &context))
    }

    /// Stores a batch made by `record(…into:…)`, in order, and empties it.
    package func commit(_ batch: inout [RecordedNotification]) {
        store.append(contentsOf: &batch)
        for sink in sinks { sink.releaseWritten() }
    }

    private func recording(
        _ request: borrowing APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        outcome: borrowing RecordingOutcome,
        delivery: AnswerDelivery,
        context: inout RecordingContext
    ) -> RecordedNotification {
        if case .notSent(let because) = delivery, let answer = outcome.response {
            let intended = answer.reason.map { "\(answer.status) \($0.rawValue)" } ?? String(answer.status)
            let extras = outcome.extras
            let unsent = RecordingOutcome(
                receivedAt: outcome.receivedAt,
                response: nil,
                extras: RecordExtras(
                    abandonedBecause: "answer \(intended) not sent: \(because)",
                    authentication: extras?.authentication,
                    scenarioRule: extras?.scenarioRule,
                    faults: extras?.faults ?? [],
                    broadcast: extras?.broadcast,
                    warnings: extras?.warnings ?? []
                )
            )
            // Recorded as an outcome with no answer, which says why: nothing else is left to say of its delivery.
            return recording(request, streamID: streamID, connection: connection, outcome: unsent, delivery: .sent, context: &context)
        }
        context.shapes.keepsCredentials = credentials == .full
        // The answer read in place from the outcome: a copy of it (its IDs' strings retained) per recording showed
        // in profiles.
        return RecordedNotification(
            sequence: 0,
            receivedAt: outcome.receivedAt,
            connectionID: connection.id,
            streamID: streamID,
            request: request,
            response: outcome.response,
            extras: outcome.extras,
            reachesDevices: outcome.reachesDevices,
            shapes: &context.shapes
        )
    }

    /// Records a request that ended before it was decided (a stream reset or closed mid-request).
    @discardableResult
    package func recordAbandoned(
        _ request: borrowing APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        at receivedAt: Int64,
        because reason: String
    ) -> UInt64 {
        var context = RecordingContext()
        return record(
            request,
            streamID: streamID,
            connection: connection,
            outcome: .abandoned(at: receivedAt, because: reason),
            context: &context
        )
    }

    /// Records a request that ended before it was decided, into a connection's batch.
    package func recordAbandoned(
        _ request: borrowing APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        at receivedAt: Int64,
        because reason: String,
        into batch: inout [RecordedNotification]
    ) {
        var context = RecordingContext()
        record(
            request, streamID: streamID, connection: connection, outcome: .abandoned(at: receivedAt, because: reason),
            into: &batch, context: &context
        )
    }

    /// Forgets every recording, in the store and in the sinks that keep them (a database; a file is a log and keeps
    /// its lines).
    package func clear() {
        let last = store.clear()
        for sink in sinks { sink.cleared(upTo: last) }
    }

    /// Forgets one tenant's recordings, in the store and in the sinks that keep them; the other tenants' stay.
    package func clear(tenant: String) {
        let gone = store.clear(tenant: tenant)
        guard let last = gone.last else { return }
        for sink in sinks { sink.cleared(tenant: tenant, upTo: last) }
    }

    /// Every sink's counts, the store first.
    package func sinkStatistics() -> [RecordingSinkStatistics] {
        sinks.map { $0.statistics() }
    }

    /// Finishes every sink (writes what is queued), each within `timeout`; returns their final counts.
    package func finishSinks(timeout: Duration) async -> [RecordingSinkStatistics] {
        var results: [RecordingSinkStatistics] = []
        for sink in sinks { results.append(await sink.finish(timeout: timeout)) }
        return results
    }
}
