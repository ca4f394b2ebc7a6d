/// Decides whether a `/3/device` request is well formed, and if not, which reason APNs gives.
///
/// Checks run in this order, and the first fault wins (Apple does not document the order; this is the
/// order of its reason table as the issue tracker fixed it, method and path first as any HTTP server does):
/// 405 `MethodNotAllowed`, 404 `BadPath`, (authentication: 403s and 429 `TooManyProviderTokenUpdates`, decided
/// by `ConnectionAuthState` between `routeVerdict` and `validate`), `MissingDeviceToken`, `BadDeviceToken`,
/// `BadMessageId`, `BadPriority`, `BadExpirationDate`, `InvalidPushType`, `MissingTopic`, `TopicDisallowed`,
/// topic/push-type mismatch,
/// background at priority 10, `BadCollapseId`, `DuplicateHeaders`, `PayloadEmpty`, 413 `PayloadTooLarge`,
/// invalid JSON.
package struct RequestValidator: Sendable {
    package var policy: ValidationPolicy

    package init(policy: ValidationPolicy = ValidationPolicy()) {
        self.policy = policy
    }

    /// The verdict for one request.
    package enum Verdict: Sendable, Equatable {
        case accepted
        case rejected(Reason)
        /// The header list went over the advertised limit: answered 431 with no body, as Netty-based
        /// HTTP/2 servers do (no APNs reason exists for it).
        case headerListTooLarge
    }

    package func validate(_ request: APNsRequest) -> Verdict {
        validate(request, headers: APNsHeaders(request))
    }

    /// The faults found before authentication: an oversized header list, the method, the path.
    package func routeVerdict(_ request: APNsRequest) -> Verdict {
        if request.headerListTooLarge { return .headerListTooLarge }
        if !request.methodIs("POST") { return .rejected(.methodNotAllowed) }
        guard let digits = request.head.deviceTokenDigits else { return .rejected(.badPath) }
        // A token of hex digits has no `/`: only another token is looked at again.
        if digits.allHex { return .accepted }
        return request.withPath { path in
            // `/3/device/<token>/more` is another resource, not a bad token.
            APNsPath.tokenBytes(in: path)!.contains(UInt8(ascii: "/")) ? .rejected(.badPath) : .accepted
        }
    }

    /// - Parameters:
    ///   - defaultTopic: the topic when `apns-topic` is absent (a single-topic certificate's).
    ///   - allowedTopics: the topics the credentials may push to; others get `TopicDisallowed`.
    ///   - routeChecked: `routeVerdict` already accepted this request (the processor checks it before authentication).
    package func validate(
        _ request: APNsRequest,
        headers: APNsHeaders,
        defaultTopic: String? = nil,
        allowedTopics: TopicAllowance? = nil,
        routeChecked: Bool = false
    ) -> Verdict {
        if !routeChecked {
            let route = routeVerdict(request)
            guard route == .accepted else { return route }
        }

        let tokenVerdict = request.withPath { path -> Verdict in
            let token = APNsPath.tokenBytes(in: path) ?? UnsafeBufferPointer(start: nil, count: 0)
            if token.isEmpty { return .rejected(.missingDeviceToken) }
            if !policy.deviceToken.isValid(count: token.count, allHex: request.head.deviceTokenDigits?.allHex == true) {
                return .rejected(.badDeviceToken)
            }
            return .accepted
        }
        guard tokenVerdict == .accepted else { return tokenVerdict }

        if let apnsID = headers.apnsID, !Self.isCanonicalUUID(apnsID) { return .rejected(.badMessageId) }

        let priority = headers.priority
        if let priority, priority != "10", priority != "5", priority != "1" { return .rejected(.badPriority) }

        if let expiration = headers.expiration, !Self.isEpochSeconds(expiration) {
            return .rejected(.badExpirationDate)
        }

        var pushType: PushType?
        if let rawPushType = headers.pushType {
            guard let known = PushType(rawValue: rawPushType) else { return .rejected(.invalidPushType) }
            pushType = known
        }

        // The topic is read where it is: `headers.topic ?? defaultTopic` made a value of its own, retained and
        // released on every push when the topic is longer than 15 bytes (so on the heap).
        let voipTopic: Bool
        if let topic = headers.topic {
            if let fault = topicFault(topic, pushType: pushType, allowedTopics: allowedTopics) { return fault }
            voipTopic = Self.isVoIPTopic(topic)
        } else if let defaultTopic {
            if let fault = topicFault(defaultTopic, pushType: pushType, allowedTopics: allowedTopics) { return fault }
            voipTopic = Self.isVoIPTopic(defaultTopic)
        } else if policy.requireTopic {
            return .rejected(.missingTopic)
        } else {
            voipTopic = false
        }

        if policy.backgroundPriority10 == .reject, pushType == .background, priority == nil || priority == "10" {
            return .rejected(.badPriority)
        }

        if let collapseID = headers.collapseID, collapseID.utf8.count > policy.maxCollapseIDBytes {
            return .rejected(.badCollapseId)
        }

        if headers.hasDuplicates { return .rejected(.duplicateHeaders) }

        if request.payloadSize == 0 { return .rejected(.payloadEmpty) }
        if request.payloadSize > payloadLimit(pushType: pushType, voipTopic: voipTopic) {
            return .rejected(.payloadTooLarge)
        }

        if policy.invalidPayload == .reject, !JSONObjectCheck.isJSONObject(request.payload) {
            return .rejected(.badRequestPayload)
        }
        return .accepted
    }

    /// 5120 bytes for VoIP, 4096 otherwise. Whether Apple keys the larger limit on the push type or on the
    /// `.voip` topic is unknown, so either one earns it.
    package func payloadLimit(pushType: PushType?, topic: String?) -> Int {
        payloadLimit(pushType: pushType, voipTopic: topic.map(Self.isVoIPTopic) ?? false)
    }

    private static func isVoIPTopic(_ topic: String) -> Bool { ASCII.hasSuffix(topic, ".voip") }

    private func payloadLimit(pushType: PushType?, voipTopic: Bool) -> Int {
        if pushType == .voip || voipTopic {
            return max(policy.maxVoIPPayloadBytes, policy.maxPayloadBytes)
        }
        return policy.maxPayloadBytes
    }

    /// What is wrong with the request's topic (or the credentials' default one), if anything.
    @inline(__always)
    private func topicFault(_ topic: String, pushType: PushType?, allowedTopics: TopicAllowance?) -> Verdict? {
        if topic.isEmpty { return .rejected(.missingTopic) }
        if let allowedTopics, !allowedTopics.allows(topic) { return .rejected(.topicDisallowed) }
        if policy.topicMismatch == .reject, let pushType, !Self.topic(topic, fits: pushType) {
            return .rejected(.deviceTokenNotForTopic)
        }
        return nil
    }

    static func topic(_ topic: String, fits pushType: PushType) -> Bool {
        // Bytes, not `String.hasSuffix`: the suffixes are ASCII, and this runs for every push.
        return ASCII.withUTF8(of: topic) { topic in
            switch pushType {
            case .mdm:
                return true
            case .alert, .background:
                return !PushType.hasAnyTopicSuffix(topic)
            default:
                guard let suffix = pushType.topicSuffix else { return true }
                return topic.count > suffix.utf8CodeUnitCount && ASCII.hasSuffix(topic, suffix)
            }
        }
    }

    /// 8-4-4-4-12 hex digits, either case (whether APNs accepts upper case is undocumented; clients send both).
    static func isCanonicalUUID(_ value: String) -> Bool {
        guard value.utf8.count == 36 else { return false }
        // Contiguous bytes when the string is native (it always is here), so no iterator per character.
        return value.utf8.withContiguousStorageIfAvailable(isCanonicalUUID) ?? isCanonicalUUID(Array(value.utf8).withUnsafeBufferPointer { $0 })
    }

    static func isCanonicalUUID(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count == 36 else { return false }
        for index in 0..<36 {
            let byte = bytes[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                if byte != UInt8(ascii: "-") { return false }
            } else if !ASCII.isHexDigit(byte) {
                return false
            }
        }
        return true
    }

    /// A non-negative decimal number of seconds; `0` means "deliver once, do not store".
    static func isEpochSeconds(_ value: String) -> Bool {
        let bytes = value.utf8
        return !bytes.isEmpty && bytes.count <= 19 && bytes.allSatisfy(ASCII.isDigit)
    }
}
