/// Something a push's payload gets wrong that APNs accepts anyway (it does not look inside `aps`): the device
/// drops it, shows the wrong thing, or nothing. Recorded beside the answer, never changing it.
package struct PayloadWarning: Sendable, Equatable {
    /// Stable, for filters and tests (`background-with-alert`, …); every code is listed in the README.
    package var code: String
    /// The JSON path it is about (`$.aps.sound.volume`), `$` for the whole payload.
    package var path: String
    package var message: String

    package init(code: String, path: String, message: String) {
        self.code = code
        self.path = path
        self.message = message
    }
}

/// The payload rules of Apple's documentation (`../shared/apns-protocol.md` §6) as warnings: one scan to `aps`
/// (skipping the rest of the payload), then checks on the small tree it gives.
package enum PayloadLint {
    /// What a push is, for the rules that depend on it.
    package struct Context: Sendable, Equatable {
        // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
        /// `apns-push-type` as sent (`nil`: none).
        package var pushType: Optional<String>
        /// `apns-priority` as sent (`nil`: none, which APNs treats as 10).
        package var priority: Optional<String>
        /// The payload's size limit for this push (4096, 5120 for VoIP and broadcasts).
        package var sizeLimit: Int
        /// A broadcast (`/4/broadcasts/…`): Live Activity rules, and no `start`.
        package var isBroadcast: Bool

        package init(pushType: String?, priority: String?, sizeLimit: Int, isBroadcast: Bool = false) {
            self.pushType = pushType
            self.priority = priority
            self.sizeLimit = sizeLimit
            self.isBroadcast = isBroadcast
        }
    }

    /// Every code, with what it means: the README's table, and the check that the table is complete.
    package static let codes: [(code: String, meaning: String)] = [
        ("payload-near-limit", "the payload is within 5% of its size limit"),
        ("aps-missing", "a JSON payload with no `aps` (pushes other than MDM, location and file-provider need one)"),
        ("aps-unknown-key", "a key inside `aps` that Apple does not define (custom keys belong outside `aps`)"),
        ("summary-arg-ignored", "`summary-arg` / `summary-arg-count`, which iOS 15 and later ignore"),
        ("background-with-alert", "`content-available: 1` together with alert, sound or badge"),
        ("background-priority-10", "push type `background` at priority 10 (or none, which means 10); Apple requires 5"),
        ("alert-low-priority", "push type `alert` at priority 5 with an alert: delivered when power allows, may be grouped"),
        ("nothing-visible", "push type `alert` (or none) with no alert, sound or badge and no `content-available`"),
        ("mutable-content-without-alert", "`mutable-content: 1` without an alert: the Notification Service Extension does not run"),
        ("sound-critical-not-1", "a sound dictionary whose `critical` is not 1"),
        ("sound-volume-out-of-range", "a sound dictionary whose `volume` is not within 0–1"),
        ("critical-without-critical-sound", "`interruption-level: critical` without a sound dictionary with `critical: 1`"),
        ("interruption-level-unknown", "an `interruption-level` other than passive, active, time-sensitive, critical"),
        ("relevance-score-out-of-range", "`relevance-score` outside 0–1 (allowed for Live Activities only)"),
        ("loc-args-not-strings", "`loc-args`, `title-loc-args` or `subtitle-loc-args` with a value that is not a string"),
        ("liveactivity-missing-event", "a Live Activity push without `event`"),
        ("liveactivity-unknown-event", "an `event` other than start, update, end"),
        ("liveactivity-missing-timestamp", "a Live Activity push without `timestamp`"),
        ("liveactivity-missing-content-state", "a Live Activity push without a `content-state` object"),
        ("liveactivity-start-incomplete", "a `start` without `attributes-type`, `attributes` or `alert`"),
        ("broadcast-start", "a broadcast with `event: start`: a broadcast cannot start a Live Activity"),
        ("timestamp-milliseconds", "`timestamp`, `stale-date` or `dismissal-date` past 10¹¹: milliseconds where seconds are meant"),
    ]

    static let knownAPSKeys: Set<String> = [
        "alert", "badge", "sound", "thread-id", "category", "content-available", "mutable-content", "target-content-id",
        "interruption-level", "relevance-score", "filter-criteria", "stale-date", "content-state", "timestamp", "event",
        "dismissal-date", "attributes-type", "attributes", "input-push-token", "input-push-channel", "content-changed",
        "summary-arg", "summary-arg-count", "url-args",
    ]
    private static let apsPath = try! JSONPath(parsing: "$.aps")
    /// Push types whose payloads need no `aps`.
    private static let apsOptional: Set<String> = ["mdm", "location", "fileprovider"]

    /// The warnings for a payload (none when it is not a JSON object: the answer's business, not a warning's).
    package static func warnings(_ payload: [UInt8], payloadSize: Int, context: Context) -> [PayloadWarning] {
        var warnings: [PayloadWarning] = []
        func warn(_ code: String, _ path: String, _ message: String) {
            warnings.append(PayloadWarning(code: code, path: path, message: message))
        }
        guard let first = payload.first(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D }), first == UInt8(ascii: "{") else {
            return []
        }
        if payloadSize * 100 >= context.sizeLimit * 95, payloadSize <= context.sizeLimit {
            warn("payload-near-limit", "$", "\(payloadSize) of \(context.sizeLimit) bytes: within 5% of the limit")
        }
        let pushType = context.pushType?.lowercased()
        guard case .object(let aps)? = JSONScanner.value(at: apsPath, in: payload) else {
            if pushType.map({ !apsOptional.contains($0) }) ?? true, case .object? = JSONScanner.parse(payload) {
                warn("aps-missing", "$.aps", "no aps dictionary: the device has nothing to show or do")
            }
            return warnings
        }
        for key in aps.keys.sorted() where !knownAPSKeys.contains(key) {
            warn("aps-unknown-key", "$.aps.\(key)", "'\(key)' is not an aps key; custom data belongs outside aps")
        }
        for key in ["summary-arg", "summary-arg-count"] where aps[key] != nil {
            warn("summary-arg-ignored", "$.aps.\(key)", "\(key) is ignored by iOS 15 and later")
        }
        let alert = aps["alert"]
        if case .object(let members)? = alert {
            for key in ["summary-arg", "summary-arg-count"] where members[key] != nil {
                warn("summary-arg-ignored", "$.aps.alert.\(key)", "\(key) is ignored by iOS 15 and later")
            }
            for key in ["loc-args", "title-loc-args", "subtitle-loc-args"] {
                if case .array(let values)? = members[key], values.contains(where: { if case .string = $0 { false } else { true } }) {
                    warn("loc-args-not-strings", "$.aps.alert.\(key)", "every \(key) value must be a string")
                }
            }
        }
        let isLiveActivity = context.isBroadcast || pushType == "liveactivity"
        let hasAlert = alert != nil && alert != .null
        let background = aps["content-available"] == .number(1)
        if background, hasAlert || aps["sound"] != nil || aps["badge"] != nil {
            warn("background-with-alert", "$.aps.content-available", "a background push carries only content-available; alert, sound and badge make it a visible one")
        }
        let priority = context.priority ?? "10"
        if pushType == "background", priority == "10" {
            warn("background-priority-10", "$.aps.content-available", "background pushes must be sent at priority 5 (apns-priority: 5)")
        }
        if pushType == "alert", priority == "5", hasAlert {
            warn("alert-low-priority", "$.aps.alert", "an alert at priority 5 is delivered when power allows and may be grouped; use 10 to show it at once")
        }
        if pushType == nil || pushType == "alert", !hasAlert, aps["sound"] == nil, aps["badge"] == nil, !background, !isLiveActivity {
            warn("nothing-visible", "$.aps", "an alert push with no alert, sound or badge shows nothing")
        }
        if aps["mutable-content"] == .number(1), !hasAlert {
            warn("mutable-content-without-alert", "$.aps.mutable-content", "the Notification Service Extension runs only for a push with an alert")
        }
        var criticalSound = false
        if case .object(let sound)? = aps["sound"] {
            if let critical = sound["critical"] {
                if critical == .number(1) { criticalSound = true } else {
                    warn("sound-critical-not-1", "$.aps.sound.critical", "critical is 1 for a critical alert sound")
                }
            }
            if let volume = sound["volume"] {
                if case .number(let value) = volume, value >= 0, value <= 1 {} else {
                    warn("sound-volume-out-of-range", "$.aps.sound.volume", "volume is a number from 0 to 1")
                }
            }
        }
        if let level = aps["interruption-level"] {
            switch level {
            case .string("passive"), .string("active"), .string("time-sensitive"): break
            case .string("critical"):
                if !criticalSound {
                    warn("critical-without-critical-sound", "$.aps.interruption-level", "a critical alert needs a sound dictionary with critical: 1")
                }
            default:
                warn("interruption-level-unknown", "$.aps.interruption-level", "interruption-level is passive, active, time-sensitive or critical")
            }
        }
        if !isLiveActivity, let score = aps["relevance-score"] {
            if case .number(let value) = score, value >= 0, value <= 1 {} else {
                warn("relevance-score-out-of-range", "$.aps.relevance-score", "relevance-score is a number from 0 to 1 (any number only for Live Activities)")
            }
        }
        for key in ["timestamp", "stale-date", "dismissal-date"] {
            if case .number(let value)? = aps[key], value > 100_000_000_000 {
                warn("timestamp-milliseconds", "$.aps.\(key)", "\(key) is in seconds since the epoch; this looks like milliseconds")
            }
        }
        if isLiveActivity { liveActivity(aps, broadcast: context.isBroadcast, warn) }
        return warnings
    }

    private static func liveActivity(_ aps: [String: JSONValue], broadcast: Bool, _ warn: (String, String, String) -> Void) {
        let event = aps["event"]
        switch event {
        case .string("start")?:
            if broadcast {
                warn("broadcast-start", "$.aps.event", "a broadcast cannot start a Live Activity (event start); the devices drop it")
            } else if aps["attributes-type"] == nil || aps["attributes"] == nil || aps["alert"] == nil {
                warn("liveactivity-start-incomplete", "$.aps", "a start needs attributes-type, attributes and alert")
            }
        case .string("update")?, .string("end")?:
            break
        case nil:
            warn("liveactivity-missing-event", "$.aps.event", "a Live Activity push needs event: start, update or end")
        default:
            warn("liveactivity-unknown-event", "$.aps.event", "event is start, update or end")
        }
        if aps["timestamp"] == nil {
            warn("liveactivity-missing-timestamp", "$.aps.timestamp", "a Live Activity push needs timestamp (seconds since the epoch); without it the device cannot order updates")
        } else if case .number? = aps["timestamp"] {} else {
            warn("liveactivity-missing-timestamp", "$.aps.timestamp", "timestamp is a number of seconds since the epoch")
        }
        if case .object? = aps["content-state"] {} else {
            warn("liveactivity-missing-content-state", "$.aps.content-state", "a Live Activity push needs content-state (an object): the activity's state")
        }
    }
}
