import Crypto
import Foundation

/// A validated scenario: scripted answers, devices and connection faults, as loaded from a `Scenarios/*.yaml` file
/// by ``ScenarioLoader``. A plain value; ``ScenarioEngine`` runs it.
///
/// The first rule whose conditions all hold decides a request's answer; requests no rule matches get the normal
/// validated answer (delayed by ``ScenarioDefaults/latency`` when one is set).
package struct Scenario: Sendable, Equatable {
    package var name: String
    package var description: String?
    /// Seed for probabilities and jittered delays, so a run repeats. `nil` (`seed: random` in the file) means a
    /// fresh random seed per engine; a file without `seed` uses 0.
    package var seed: UInt64?
    package var defaults: ScenarioDefaults
    package var devices: [ScenarioDevice]
    /// Broadcast channels in force while the scenario is.
    package var channels: [ScenarioChannel] = []
    package var connection: ScenarioConnectionPolicy
    package var outages: [ScenarioOutage]
    package var rules: [ScenarioRule]
    /// Its simulated devices' store-and-forward settings, over the command line's (`delivery:`); `nil`: those.
    package var delivery: ScenarioDelivery?
    /// The text it was loaded from (a file, a `PUT /admin/scenario` body), comments and all: what the inspector
    /// shows for editing. `nil` for a scenario made in code. Not part of equality: the same scenario written two
    /// ways (YAML, JSON) is the same scenario.
    package var sourceText: String? {
        get { source.text }
        set { source.text = newValue }
    }
    private var source = SourceText()

    /// Provenance that every comparison ignores.
    private struct SourceText: Sendable, Equatable {
        var text: String?
        static func == (_: SourceText, _: SourceText) -> Bool { true }
    }

    package init(
        name: String,
        description: String? = nil,
        seed: UInt64? = 0,
        defaults: ScenarioDefaults = ScenarioDefaults(),
        devices: [ScenarioDevice] = [],
        connection: ScenarioConnectionPolicy = ScenarioConnectionPolicy(),
        outages: [ScenarioOutage] = [],
        rules: [ScenarioRule] = []
    ) {
        self.name = name
        self.description = description
        self.seed = seed
        self.defaults = defaults
        self.devices = devices
        self.connection = connection
        self.outages = outages
        self.rules = rules
    }

    /// A scenario that changes nothing: no rules, no devices, no faults.
    package static let empty = Scenario(name: "none")
}

/// Settings that apply to every request.
package struct ScenarioDefaults: Sendable, Equatable {
    /// Delay before every answer that no rule gives its own `delay`.
    package var latency: ScenarioDelay?
    /// The environment of devices that do not name one.
    package var environment: APNsEnvironment?

    package init(latency: ScenarioDelay? = nil, environment: APNsEnvironment? = nil) {
        self.latency = latency
        self.environment = environment
    }
}

/// A device declared in a scenario; ``ScenarioEngine`` turns it into a ``Device`` of its ``DeviceRegistry``,
/// resolving relative times (`unregisteredAt`, the timeline's) against the scenario's start.
package struct ScenarioDevice: Sendable, Equatable {
    package var name: String
    /// As written; compared case-insensitively.
    package var token: String
    package var topic: String
    package var environment: APNsEnvironment
    /// When the app was uninstalled: absolute, or relative to the scenario's start.
    package var unregisteredAt: ScenarioTime?
    /// The state the simulated device starts in.
    package var state: DeviceState
    /// Changes of state, in time order: `- offline: {at: +10s, for: 2m}`.
    package var timeline: [ScenarioStateChange]
    /// The ids of the scenario's channels its Live Activities subscribe to (`subscriptions:` names them).
    package var subscriptions: [String] = []

    package init(
        name: String,
        token: String,
        topic: String,
        environment: APNsEnvironment = .development,
        unregisteredAt: ScenarioTime? = nil,
        state: DeviceState = .online,
        timeline: [ScenarioStateChange] = []
    ) {
        self.name = name
        self.token = token
        self.topic = topic
        self.environment = environment
        self.unregisteredAt = unregisteredAt
        self.state = state
        self.timeline = timeline
    }

    /// The registry entry, with times resolved against `start` (milliseconds since the epoch).
    package func device(startedAt start: Int64) -> Device {
        var changes: [DeviceStateChange] = []
        var unregisteredAt = unregisteredAt?.resolve(base: start)
        var current = state
        for entry in timeline {
            let at = entry.at.resolve(base: start)
            if entry.state == .appRemoved {
                // The app's removal is the registry's unregistration: 410 with this time from then on.
                unregisteredAt = min(unregisteredAt ?? at, at)
                continue
            }
            changes.append(DeviceStateChange(at: at, state: entry.state))
            if let duration = entry.duration {
                changes.append(DeviceStateChange(at: at &+ duration, state: current))
            } else {
                current = entry.state
            }
        }
        var device = Device(
            name: name,
            token: token,
            topic: topic,
            environment: environment,
            unregisteredAt: unregisteredAt,
            state: state,
            stateChanges: changes
        )
        device.subscriptions = subscriptions
        return device
    }
}

/// One entry of a scenario device's timeline: the device enters `state` at `at`, and with a `duration`, goes back
/// to the state it had before when it ends.
package struct ScenarioStateChange: Sendable, Equatable {
    package var state: DeviceState
    /// Absolute, or relative to the scenario's start.
    package var at: ScenarioTime
    /// Milliseconds; `nil`: until the next change.
    package var duration: Int64?

    package init(state: DeviceState, at: ScenarioTime, duration: Int64? = nil) {
        self.state = state
        self.at = at
        self.duration = duration
    }
}

/// Connection-level behaviour of real APNs that a scenario can switch on. Apply it with a
/// ``ScenarioConnectionState`` per connection.
package struct ScenarioConnectionPolicy: Sendable, Equatable {
    /// Close a connection (GOAWAY, then close) once it has been answered this many `BadDeviceToken`s; APNs "drops
    /// the connection sooner" after many of them. `nil`: never.
    package var closeAfterBadDeviceTokens: Int?
    /// Send SETTINGS_MAX_CONCURRENT_STREAMS=1 after a rejected push and restore the limit after the next success,
    /// as APNs was observed to do.
    package var lowerStreamLimitAfterRejection: Bool

    package init(closeAfterBadDeviceTokens: Int? = nil, lowerStreamLimitAfterRejection: Bool = false) {
        self.closeAfterBadDeviceTokens = closeAfterBadDeviceTokens
        self.lowerStreamLimitAfterRejection = lowerStreamLimitAfterRejection
    }
}

/// A time window, since the scenario's start, during which new connections are refused.
package struct ScenarioOutage: Sendable, Equatable {
    /// Milliseconds since the start (inclusive).
    package var from: Int64
    /// Milliseconds since the start (exclusive); `nil`: until the scenario is replaced or reset.
    package var until: Int64?
    package var mode: OutageMode

    package init(from: Int64, until: Int64?, mode: OutageMode) {
        self.from = from
        self.until = until
        self.mode = mode
    }

    func contains(elapsed: Int64) -> Bool {
        elapsed >= from && (until.map { elapsed < $0 } ?? true)
    }
}

/// How a new connection is refused during an outage.
package enum OutageMode: Sendable, Equatable {
    /// Close the TCP connection as soon as it is accepted, before TLS.
    case refuse
    /// Complete the handshake, send GOAWAY with this error code and debug data (last stream 0), then close.
    case goAway(errorCode: UInt32, debugData: String)
}

/// A point in time: absolute, or an offset from a base that depends on where it is used (the scenario's start for
/// a device's `unregisteredAt`, the request's arrival for a 410 `timestamp`).
package enum ScenarioTime: Sendable, Equatable {
    /// Milliseconds since the epoch.
    case absolute(milliseconds: Int64)
    /// Milliseconds from the base; negative is earlier.
    case relative(milliseconds: Int64)

    package func resolve(base: Int64) -> Int64 {
        switch self {
        case .absolute(let milliseconds): return milliseconds
        case .relative(let offset): return base &+ offset
        }
    }
}

/// A fixed or jittered delay before an answer (or a fault).
package enum ScenarioDelay: Sendable, Equatable {
    case fixed(milliseconds: Int64)
    /// Uniform in `min...max` milliseconds, drawn from the scenario's seed.
    case jitter(minMilliseconds: Int64, maxMilliseconds: Int64)
}

/// A broadcast channel declared in a scenario: in the channel registry while the scenario is in force.
package struct ScenarioChannel: Sendable, Equatable {
    /// What rules call it (`match: {channel: <name>}`).
    package var name: String
    /// As written, or made from the scenario's and the channel's names (the same id on every load, so a test
    /// can write it down): base64 of the first 16 bytes of SHA-256 of `apns-mock:<scenario>:<channel>`.
    package var id: String
    package var bundleID: String
    package var storagePolicy: BroadcastChannel.StoragePolicy
    package var environment: APNsEnvironment

    package init(name: String, id: String, bundleID: String, storagePolicy: BroadcastChannel.StoragePolicy = .mostRecentMessageStored, environment: APNsEnvironment = .development) {
        self.name = name
        self.id = id
        self.bundleID = bundleID
        self.storagePolicy = storagePolicy
        self.environment = environment
    }
}

extension ScenarioChannel {
    /// The id of a channel declared without one: stable across loads and runs (not random like APNs' own), so
    /// a test can write it down, and different between scenarios and channels.
    static func derivedID(scenario: String, channel: String) -> String {
        let digest = SHA256.hash(data: Data("apns-mock:\(scenario):\(channel)".utf8))
        return Data(Array(digest).prefix(16)).base64EncodedString()
    }
}
