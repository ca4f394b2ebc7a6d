/// Something a push's payload gets wrong that APNs accepts anyway (it does not look inside `aps`): the device
/// drops or misshows it. Recorded beside the answer, never changing it.
public struct PayloadWarning: Sendable, Equatable {
    /// Stable, for filters and tests (`broadcast-start`, …).
    public var code: String
    /// The JSON path it is about (`$.aps.event`).
    public var path: String
    public var message: String

    public init(code: String, path: String, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }
}

/// The Live Activity rules a broadcast's payload should follow (Apple's "Starting and updating Live Activities
/// with ActivityKit push notifications"): an update carries `event`, `timestamp` and `content-state`; an end
/// carries `event` and `content-state`; a broadcast cannot start a Live Activity.
enum LiveActivityLint {
    private static let aps = try! JSONPath(parsing: "$.aps")

    /// The warnings for a broadcast's payload; none when it has no `aps` object (not JSON, or not a push: the
    /// answer says so where APNs would).
    static func broadcastWarnings(_ payload: [UInt8]) -> [PayloadWarning] {
        // One scan to `aps` (skipping the rest of the payload), then its members from the small tree it gives.
        guard case .object(let aps)? = JSONScanner.value(at: Self.aps, in: payload) else { return [] }
        var warnings: [PayloadWarning] = []
        let event = aps["event"]
        switch event {
        case .string("start")?:
            warnings.append(PayloadWarning(code: "broadcast-start", path: "$.aps.event", message: "a broadcast cannot start a Live Activity (event start); the devices drop it"))
        case .string("update")?, .string("end")?:
            break
        case nil:
            warnings.append(PayloadWarning(code: "liveactivity-missing-event", path: "$.aps.event", message: "a Live Activity push needs event: update or end"))
        default:
            warnings.append(PayloadWarning(code: "liveactivity-unknown-event", path: "$.aps.event", message: "event is update or end for a broadcast"))
        }
        switch aps["timestamp"] {
        case .number(let seconds)?:
            // Seconds since the epoch; milliseconds (a common mistake) are 1000× too large and look years ahead.
            if seconds > 100_000_000_000 {
                warnings.append(PayloadWarning(code: "liveactivity-timestamp-milliseconds", path: "$.aps.timestamp", message: "timestamp is in seconds since the epoch; this looks like milliseconds"))
            }
        case nil:
            if event == .string("update") {
                warnings.append(PayloadWarning(code: "liveactivity-missing-timestamp", path: "$.aps.timestamp", message: "an update needs timestamp (seconds since the epoch); without it the device cannot order updates"))
            }
        default:
            warnings.append(PayloadWarning(code: "liveactivity-timestamp-not-number", path: "$.aps.timestamp", message: "timestamp is a number of seconds since the epoch"))
        }
        if event == .string("update") || event == .string("end") {
            if case .object? = aps["content-state"] {} else {
                warnings.append(PayloadWarning(code: "liveactivity-missing-content-state", path: "$.aps.content-state", message: "an update or end needs content-state (an object): the Live Activity's new state"))
            }
        }
        return warnings
    }
}
