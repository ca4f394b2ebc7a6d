/// Decides broadcast sends and channel-management requests, after the route and authentication: which reason
/// Apple's broadcast API gives, in the order documented in the README (Apple does not document one).
package struct BroadcastValidator: Sendable {
    package var policy: BroadcastPolicy

    package init(policy: BroadcastPolicy = BroadcastPolicy()) {
        self.policy = policy
    }

    /// `POST /4/broadcasts/apps/<bundle-id>`: `nil` when the broadcast is accepted.
    /// - Parameter channelID: `apns-channel-id` as sent (read once by the caller).
    package func validateBroadcast(
        _ request: APNsRequest,
        headers: APNsHeaders,
        channelID: String?,
        bundleID: String,
        allowedTopics: TopicAllowance?,
        channels: ChannelRegistry,
        environment: APNsEnvironment
    ) -> Reason? {
        // The bare bundle ID: a push-type suffix is a topic, not an app.
        if PushType.hasAnyTopicSuffix(bundleID) { return .topicDisallowed }
        if let allowedTopics, !allowedTopics.allows(bundleID) { return .topicMismatch }
        let channel: BroadcastChannel
        switch channelCheck(channelID, bundleID: bundleID, channels: channels, environment: environment) {
        case .refused(let reason): return reason
        case .found(let found): channel = found
        }
        if let apnsID = headers.apnsID, !RequestValidator.isCanonicalUUID(apnsID) { return .badMessageId }
        guard let pushType = headers.pushType else { return .missingPushType }
        // Apple writes it `LiveActivity`, `Liveactivity` and `liveactivity` in different places: any case.
        guard ASCII.equalIgnoringCase(pushType, lowercased: "liveactivity") else { return .invalidPushType }
        if let priority = headers.priority, priority != "10", priority != "5", priority != "1" { return .badPriority }
        if let expiration = headers.expiration {
            guard RequestValidator.isEpochSeconds(expiration) else { return .badExpirationDate }
            if channel.storagePolicy == .noMessageStored, expiration != "0" { return .badExpirationDate }
        } else if policy.requireExpiration {
            return .badExpirationDate
        }
        if headers.hasDuplicates { return .duplicateHeaders }
        if request.payloadSize == 0 { return .payloadEmpty }
        if request.payloadSize > policy.maxPayloadBytes { return .payloadTooLarge }
        return nil
    }

    enum ChannelLookup {
        case found(BroadcastChannel)
        case refused(Reason)
    }

    /// The channel `apns-channel-id` names, or the reason it does not name one of this app's.
    func channelCheck(
        _ id: String?,
        bundleID: String,
        channels: ChannelRegistry,
        environment: APNsEnvironment
    ) -> ChannelLookup {
        guard let id else { return .refused(.missingChannelId) }
        guard id.utf8.count <= policy.maxChannelIDLength, ChannelRegistry.isWellFormedID(id) else { return .refused(.badChannelId) }
        guard let channel = channels.channel(id: id, bundleID: bundleID, environment: environment) else {
            return .refused(.channelNotRegistered)
        }
        return .found(channel)
    }

    /// What a channel-management request gets.
    package struct ChannelAnswer: Sendable, Equatable {
        package var status: Int
        package var reason: Reason?
        /// The `apns-channel-id` header of a create's answer.
        package var channelID: String?
        /// The JSON body of a read or a list.
        package var body: String?
        package var kind: BroadcastRecord.Kind
        /// The channel the request named or made, for its recording.
        package var recordedChannelID: String?
    }

    /// A request on the channel-management port, once authenticated.
    package func channelOperation(
        _ request: APNsRequest,
        channelID named: String?,
        route: BroadcastRoute,
        allowedTopics: TopicAllowance?,
        channels: ChannelRegistry,
        environment: APNsEnvironment,
        now: Int64
    ) -> ChannelAnswer {
        let bundleID = route.bundleID
        let kind = BroadcastRecord.kind(of: route, method: request.method)
        if kind == .channelOther || kind == .broadcast {
            return ChannelAnswer(status: 405, reason: .methodNotAllowed, kind: .channelOther)
        }
        func refuse(_ reason: Reason, channel: String? = nil) -> ChannelAnswer {
            ChannelAnswer(status: reason.status, reason: reason, kind: kind, recordedChannelID: channel)
        }
        if let allowedTopics, !allowedTopics.allows(bundleID) { return refuse(.topicMismatch) }
        if PushType.hasAnyTopicSuffix(bundleID) { return refuse(.topicDisallowed) }
        switch kind {
        case .channelCreate:
            // The body must be a JSON object; JSONValue keeps `1` and `true` apart, as the policy check needs.
            guard case .object(let attributes)? = JSONScanner.parse(request.payload) else { return refuse(.badRequestPayload) }
            if attributes.keys.contains(where: { $0 != "message-storage-policy" && $0 != "push-type" }) { return refuse(.badRequestParams) }
            guard let storagePolicy = BroadcastChannel.StoragePolicy(json: attributes["message-storage-policy"]) else {
                return refuse(policy.missingStoragePolicyReason)
            }
            guard let pushType = attributes["push-type"] else { return refuse(.missingPushType) }
            guard case .string(let text) = pushType, text.lowercased() == "liveactivity" else { return refuse(.invalidPushType) }
            do {
                let channel = try channels.create(bundleID: bundleID, environment: environment, storagePolicy: storagePolicy, now: now)
                return ChannelAnswer(status: 201, channelID: channel.id, kind: kind, recordedChannelID: channel.id)
            } catch {
                return refuse(.cannotCreateChannelConfig)
            }
        case .channelRead, .channelDelete:
            switch channelCheck(named, bundleID: bundleID, channels: channels, environment: environment) {
            case .refused(let reason):
                return refuse(reason, channel: named)
            case .found(let channel):
                if kind == .channelDelete {
                    channels.delete(id: channel.id)
                    return ChannelAnswer(status: 204, kind: kind, recordedChannelID: channel.id)
                }
                var json = JSONWriter()
                json.beginObject()
                json.key("message-storage-policy")
                json.int(channel.storagePolicy.rawValue)
                json.key("push-type")
                json.string("LiveActivity")
                json.endObject()
                return ChannelAnswer(status: 200, body: String(decoding: json.bytes, as: UTF8.self), kind: kind, recordedChannelID: channel.id)
            }
        default:
            var json = JSONWriter()
            json.beginObject()
            json.key("channels")
            json.beginArray()
            for channel in channels.list(bundleID: bundleID, environment: environment) { json.string(channel.id) }
            json.endArray()
            json.endObject()
            return ChannelAnswer(status: 200, body: String(decoding: json.bytes, as: UTF8.self), kind: kind)
        }
    }
}
