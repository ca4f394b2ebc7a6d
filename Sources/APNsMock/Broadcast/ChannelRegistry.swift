import Foundation
import Synchronization

/// The broadcast channels the mock knows, shared by every connection of both listeners and by the admin API: a
/// channel made by `POST /1/apps/<bundle-id>/channels` is at once addressable by `POST /4/broadcasts/…`.
package final class ChannelRegistry: Sendable {
    /// Why a channel could not be made.
    package enum CreateError: Error, Equatable {
        /// The app already has `limit` channels in that environment (APNs: `CannotCreateChannelConfig`).
        case limitReached(limit: Int)
        /// An id given by the caller is taken already.
        case idInUse(String)
    }

    /// Who made a channel: its owner decides when it goes.
    package enum Origin: Sendable, Equatable {
        /// Declared by the scenario in force: goes when that scenario is replaced or deleted.
        case scenario
        /// Made over channel management or the admin API: stays until deleted, or until `POST /admin/reset`.
        case api
    }

    private struct State {
        var channels: [String: BroadcastChannel] = [:]
        var origins: [String: Origin] = [:]
        /// Channels per app and environment, so a create checks the limit without counting them all.
        var perApp: [AppKey: Int] = [:]

        mutating func insert(_ channel: BroadcastChannel, origin: Origin) {
            if channels[channel.id] == nil {
                order.append(channel.id)
            } else if let old = channels[channel.id] {
                perApp[AppKey(old), default: 1] -= 1
            }
            channels[channel.id] = channel
            origins[channel.id] = origin
            perApp[AppKey(channel), default: 0] += 1
        }

        mutating func remove(_ ids: Set<String>) {
            for id in ids {
                guard let channel = channels.removeValue(forKey: id) else { continue }
                origins[id] = nil
                perApp[AppKey(channel), default: 1] -= 1
            }
            order.removeAll { ids.contains($0) }
        }
        /// Creation order, so lists are stable.
        var order: [String] = []
    }

    /// An app in an environment; bundle IDs without regard to case.
    struct AppKey: Hashable {
        var bundleID: String
        var environment: APNsEnvironment

        init(bundleID: String, environment: APNsEnvironment) {
            self.bundleID = bundleID.lowercased()
            self.environment = environment
        }

        init(_ channel: BroadcastChannel) {
            self.init(bundleID: channel.bundleID, environment: channel.environment)
        }
    }

    private let state = Mutex(State())
    /// Channels per app and environment, APNs' documented 10,000 unless a test wants to reach it sooner.
    package let limitPerApp: Int

    /// Channels made and deleted at run time (not a scenario's), for replicas sharing a store.
    package let changes = SharedStateObserver()

    package init(limitPerApp: Int = 10_000) {
        self.limitPerApp = limitPerApp
    }

    /// Makes a channel; `id` `nil` makes a random one (16 random bytes, base64, as APNs' look).
    @discardableResult
    package func create(
        bundleID: String,
        environment: APNsEnvironment,
        storagePolicy: BroadcastChannel.StoragePolicy,
        id: String? = nil,
        now: Int64 = WallClock.milliseconds()
    ) throws(CreateError) -> BroadcastChannel {
        let channel = try state.withLock { state throws(CreateError) -> BroadcastChannel in
            guard state.perApp[AppKey(bundleID: bundleID, environment: environment), default: 0] < limitPerApp else {
                throw .limitReached(limit: limitPerApp)
            }
            var channelID = id ?? Self.randomID()
            if id == nil {
                while state.channels[channelID] != nil { channelID = Self.randomID() }
            } else if state.channels[channelID] != nil {
                throw .idInUse(channelID)
            }
            let channel = BroadcastChannel(id: channelID, bundleID: bundleID, environment: environment, storagePolicy: storagePolicy, createdAt: now)
            state.insert(channel, origin: .api)
            return channel
        }
        changes.report(.channelPut(channel))
        return channel
    }

    /// The channel with this id in this environment, for this app (`nil` for another app's: APNs keeps channels per
    /// app, so another app's id is as unknown as a made-up one).
    package func channel(id: String, bundleID: String, environment: APNsEnvironment) -> BroadcastChannel? {
        state.withLock { state in
            guard let channel = state.channels[id], channel.environment == environment, Self.sameBundle(channel.bundleID, bundleID) else {
                return nil
            }
            return channel
        }
    }

    /// The channel with this id, whatever its app and environment.
    package func channel(id: String) -> BroadcastChannel? {
        state.withLock { $0.channels[id] }
    }

    /// Every channel (`bundleID`/`environment` `nil`: of every app / environment), oldest first.
    package func list(bundleID: String? = nil, environment: APNsEnvironment? = nil) -> [BroadcastChannel] {
        state.withLock { state in
            state.order.compactMap { state.channels[$0] }.filter { channel in
                (bundleID.map { Self.sameBundle(channel.bundleID, $0) } ?? true) && (environment.map { channel.environment == $0 } ?? true)
            }
        }
    }

    /// Deletes a channel; `false` when there was none with that id.
    @discardableResult
    package func delete(id: String) -> Bool {
        let deleted = forget(id: id)
        if deleted { changes.report(.channelRemoved(id: id)) }
        return deleted
    }

    private func forget(id: String) -> Bool {
        state.withLock { state in
            guard state.channels[id] != nil else { return false }
            state.remove([id])
            return true
        }
    }

    /// Adds a channel as given, or replaces the one with its id (keeping its place), owned by `origin`. Not held
    /// to the limit: a scenario declares what it declares.
    package func put(_ channel: BroadcastChannel, origin: Origin) {
        state.withLock { $0.insert(channel, origin: origin) }
        if origin == .api { changes.report(.channelPut(channel)) }
    }

    /// Deletes the channels `origin` made.
    package func removeAll(origin: Origin) {
        state.withLock { state in
            let gone = Set(state.origins.filter { $0.value == origin }.keys)
            if !gone.isEmpty { state.remove(gone) }
        }
    }

    /// Deletes every channel (`POST /admin/reset`, `DELETE /admin/channels`).
    package func removeAll() {
        state.withLock { $0 = State() }
        changes.report(.channelsCleared)
    }

    /// Applies a change another replica made, without reporting it again; other changes are ignored.
    package func apply(_ change: SharedStateChange) {
        switch change {
        case .channelPut(let channel):
            state.withLock { state in state.insert(channel, origin: state.origins[channel.id] ?? .api) }
        case .channelRemoved(let id): _ = forget(id: id)
        case .channelsCleared: state.withLock { $0 = State() }
        case .devicePut, .deviceRemoved, .devicesCleared, .scenario, .tenantScenario, .inTenant: break
        }
    }

    package var count: Int { state.withLock { $0.channels.count } }

    /// Bundle IDs compare without regard to case (Apple's glossary: "Bundle IDs are case insensitive").
    static func sameBundle(_ a: String, _ b: String) -> Bool {
        ASCII.equalIgnoringCase(a, b)
    }

    /// Whether `id` is well-formed standard base64 (RFC 4648 §4, padded), as channel ids are.
    package static func isWellFormedID(_ id: String) -> Bool {
        guard !id.isEmpty else { return false }
        // Canonical base64 is read here without decoding it (Foundation's decoder allocated its result on every
        // broadcast); Foundation has the last word on anything else, so what it accepts stays the rule.
        return ASCII.withUTF8(of: id) { isCanonicalBase64($0) } || Data(base64Encoded: id) != nil
    }

    /// Padded base64 in the standard alphabet whose unused bits are zero: what every encoder writes.
    static func isCanonicalBase64(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard !text.isEmpty, text.count % 4 == 0 else { return false }
        let padding = text[text.count - 1] == UInt8(ascii: "=") ? (text[text.count - 2] == UInt8(ascii: "=") ? 2 : 1) : 0
        var last = 0
        for index in 0..<text.count - padding {
            guard let value = base64Value(text[index]) else { return false }
            last = value
        }
        // The last character before the padding carries 4 (one `=`) or 2 (two) bits that are not data.
        return padding == 0 || last & (padding == 2 ? 0x0F : 0x03) == 0
    }

    private static func base64Value(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return Int(byte - UInt8(ascii: "A"))
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return Int(byte - UInt8(ascii: "a")) + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return Int(byte - UInt8(ascii: "0")) + 52
        case UInt8(ascii: "+"): return 62
        case UInt8(ascii: "/"): return 63
        default: return nil
        }
    }

    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }
}
