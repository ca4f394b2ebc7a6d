import Foundation
import Synchronization

/// The broadcast channels the mock knows, shared by every connection of both listeners and by the admin API: a
/// channel made by `POST /1/apps/<bundle-id>/channels` is at once addressable by `POST /4/broadcasts/…`.
public final class ChannelRegistry: Sendable {
    /// Why a channel could not be made.
    public enum CreateError: Error, Equatable {
        /// The app already has `limit` channels in that environment (APNs: `CannotCreateChannelConfig`).
        case limitReached(limit: Int)
        /// An id given by the caller is taken already.
        case idInUse(String)
    }

    /// Who made a channel: its owner decides when it goes.
    public enum Origin: Sendable, Equatable {
        /// Declared by the scenario in force: goes when that scenario is replaced or deleted.
        case scenario
        /// Made over channel management or the admin API: stays until deleted, or until `POST /admin/reset`.
        case api
    }

    private struct State {
        var channels: [String: BroadcastChannel] = [:]
        var origins: [String: Origin] = [:]
        /// Creation order, so lists are stable.
        var order: [String] = []
    }

    private let state = Mutex(State())
    /// Channels per app and environment, APNs' documented 10,000 unless a test wants to reach it sooner.
    public let limitPerApp: Int

    public init(limitPerApp: Int = 10_000) {
        self.limitPerApp = limitPerApp
    }

    /// Makes a channel; `id` `nil` makes a random one (16 random bytes, base64, as APNs' look).
    @discardableResult
    public func create(
        bundleID: String,
        environment: APNsEnvironment,
        storagePolicy: BroadcastChannel.StoragePolicy,
        id: String? = nil,
        now: Int64 = WallClock.milliseconds()
    ) throws(CreateError) -> BroadcastChannel {
        try state.withLock { state throws(CreateError) -> BroadcastChannel in
            let count = state.channels.values.lazy.filter { $0.environment == environment && Self.sameBundle($0.bundleID, bundleID) }.count
            guard count < limitPerApp else { throw .limitReached(limit: limitPerApp) }
            var channelID = id ?? Self.randomID()
            if id == nil {
                while state.channels[channelID] != nil { channelID = Self.randomID() }
            } else if state.channels[channelID] != nil {
                throw .idInUse(channelID)
            }
            let channel = BroadcastChannel(id: channelID, bundleID: bundleID, environment: environment, storagePolicy: storagePolicy, createdAt: now)
            state.channels[channelID] = channel
            state.origins[channelID] = .api
            state.order.append(channelID)
            return channel
        }
    }

    /// The channel with this id in this environment, for this app (`nil` for another app's: APNs keeps channels per
    /// app, so another app's id is as unknown as a made-up one).
    public func channel(id: String, bundleID: String, environment: APNsEnvironment) -> BroadcastChannel? {
        state.withLock { state in
            guard let channel = state.channels[id], channel.environment == environment, Self.sameBundle(channel.bundleID, bundleID) else {
                return nil
            }
            return channel
        }
    }

    /// Every channel (`bundleID`/`environment` `nil`: of every app / environment), oldest first.
    public func list(bundleID: String? = nil, environment: APNsEnvironment? = nil) -> [BroadcastChannel] {
        state.withLock { state in
            state.order.compactMap { state.channels[$0] }.filter { channel in
                (bundleID.map { Self.sameBundle(channel.bundleID, $0) } ?? true) && (environment.map { channel.environment == $0 } ?? true)
            }
        }
    }

    /// Deletes a channel; `false` when there was none with that id.
    @discardableResult
    public func delete(id: String) -> Bool {
        state.withLock { state in
            guard state.channels.removeValue(forKey: id) != nil else { return false }
            state.origins[id] = nil
            state.order.removeAll { $0 == id }
            return true
        }
    }

    /// Adds a channel as given, or replaces the one with its id (keeping its place), owned by `origin`. Not held
    /// to the limit: a scenario declares what it declares.
    public func put(_ channel: BroadcastChannel, origin: Origin) {
        state.withLock { state in
            if state.channels[channel.id] == nil { state.order.append(channel.id) }
            state.channels[channel.id] = channel
            state.origins[channel.id] = origin
        }
    }

    /// Deletes the channels `origin` made.
    public func removeAll(origin: Origin) {
        state.withLock { state in
            let gone = Set(state.origins.filter { $0.value == origin }.keys)
            guard !gone.isEmpty else { return }
            for id in gone {
                state.channels[id] = nil
                state.origins[id] = nil
            }
            state.order.removeAll { gone.contains($0) }
        }
    }

    /// Deletes every channel (`POST /admin/reset`, `DELETE /admin/channels`).
    public func removeAll() {
        state.withLock { $0 = State() }
    }

    public var count: Int { state.withLock { $0.channels.count } }

    /// Bundle IDs compare without regard to case (Apple's glossary: "Bundle IDs are case insensitive").
    static func sameBundle(_ a: String, _ b: String) -> Bool {
        // ASCII case folding byte by byte: no lower-cased copies on every broadcast.
        a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { ASCII.lowercase($0) == ASCII.lowercase($1) }
    }

    /// Whether `id` is well-formed standard base64 (RFC 4648 §4, padded), as channel ids are.
    public static func isWellFormedID(_ id: String) -> Bool {
        !id.isEmpty && Data(base64Encoded: id) != nil
    }

    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return Data(bytes).base64EncodedString()
    }
}
