import APNsMock
import Prometheus
import Synchronization

typealias Counter = Prometheus.Counter

/// The numbers behind `GET /metrics`, in Prometheus' text format (swift-prometheus).
///
/// One registry per server, not swift-metrics' process-wide bootstrap: tests run several servers in one
/// process, and global state would mix their counts. Counters that change per request are incremented on
/// the hot path through handles each connection caches; the rest (connections, recorder, scenario) is read
/// from its owner when scraped.
package final class ProviderMetrics: Sendable {
    package let registry = PrometheusCollectorRegistry()
    let latency = LatencyHistogram(
        name: "apns_mock_request_duration_seconds",
        help: "Time from the read that brought a request's last frame to the end of the batch that queued its answer (scenario delays included)."
    )
    /// The gauges of the last render's `extra` series (the scenario's rule hits): series the next render does not
    /// make again (a rule of a scenario since replaced) are dropped, not left at their last value.
    private let extraGauges = Mutex<[ObjectIdentifier: Gauge]>([:])

    package init() {}

    func requests(status: Int, reason: Reason?) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("requests", unit: "total", "Requests answered on the provider port, by status and reason."),
            labels: [("status", String(status)), ("reason", reason?.rawValue ?? "")]
        )
    }

    /// Connections the server closed because a limit fired (`handshake-timeout`, `idle-timeout`, `over-limit`).
    func connectionsClosed(by limit: String) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("connections_closed_by_limit", unit: "total", "Provider connections closed because a timeout or the connection limit fired."),
            labels: [("limit", limit)]
        )
    }

    func warnings(code: String) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("payload_warnings", unit: "total", "Payload warnings on answered requests, by code (see --lint)."),
            labels: [("code", code)]
        )
    }

    func requests(kind: String) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("broadcast_requests", unit: "total", "Broadcast-API requests answered (broadcasts on the provider port, channel management), by kind."),
            labels: [("kind", kind)]
        )
    }

    func requests(pushType: String) -> Counter {
        registry.makeCounter(
            descriptor: Self.name("requests_by_push_type", unit: "total", "Requests answered on the provider port, by apns-push-type."),
            labels: [("push_type", pushType)]
        )
    }

    /// `apns_mock_<name>_<unit>`.
    static func name(_ name: String, unit: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(namespace: "apns_mock", metricName: name, unitName: unit, helpText: help)
    }

    /// Sets the scraped gauges and renders everything.
    func render(
        tracker: ConnectionTracker,
        recorder: RecorderStatistics,
        sinks: [RecordingSinkStatistics],
        extra: [(name: String, unit: String, labels: [(String, String)], value: Double, help: String)]) -> String {
        func gauge(_ name: String, _ unit: String, _ value: Int, _ help: String) {
            registry.makeGauge(descriptor: Self.name(name, unit: unit, help)).set(Double(value))
        }
        gauge("connections_open", "", tracker.openConnections, "Provider connections open now.")
        gauge("connections_accepted", "", tracker.acceptedConnections, "Provider connections accepted since start.")
        gauge("streams_open", "", tracker.openStreams, "HTTP/2 streams open now on the provider port.")
        gauge("recorder_stored", "", recorder.stored, "Recordings held now.")
        gauge("recorder_capacity", "", recorder.capacity, "Recordings held at most before the oldest are evicted.")
        gauge("recorder_evictions", "", recorder.evicted, "Recordings evicted since start or the last clear.")
        gauge("recorder_abandoned", "", recorder.abandoned, "Requests that ended without an answer, since start or the last clear.")
        for sink in sinks {
            let labels = [("sink", sink.name)]
            registry.makeGauge(descriptor: Self.name("sink_queued", unit: "", "Recordings waiting in a sink's queue now: its lag."), labels: labels)
                .set(Double(sink.queued))
            registry.makeGauge(descriptor: Self.name("sink_written", unit: "", "Recordings a sink has written since start."), labels: labels)
                .set(Double(sink.written))
            registry.makeGauge(descriptor: Self.name("sink_skipped", unit: "", "Recordings a skip-ahead sink let go since start."), labels: labels)
                .set(Double(sink.skipped))
            registry.makeGauge(
                descriptor: Self.name("sink_back_pressure_pauses", unit: "", "Times a full sink paused reading on the provider port."),
                labels: labels
            ).set(Double(sink.backPressurePauses))
        }
        var made: [ObjectIdentifier: Gauge] = [:]
        for item in extra {
            let gauge = registry.makeGauge(descriptor: Self.name(item.name, unit: item.unit, item.help), labels: item.labels)
            gauge.set(item.value)
            made[ObjectIdentifier(gauge)] = gauge
        }
        let stale = extraGauges.withLock { previous -> [Gauge] in
            defer { previous = made }
            return previous.filter { made[$0.key] == nil }.map(\.value)
        }
        for gauge in stale { registry.unregisterGauge(gauge) }
        return registry.emitToString() + latency.render()
    }
}
