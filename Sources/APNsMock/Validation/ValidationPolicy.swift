/// The limits and the choices for behaviour Apple does not document, used by `RequestValidator`.
///
/// Each `Unknown…` choice has a default picked to match what is known of the real service (see the README's
/// "Choices where APNs is undocumented"), and a setting so a team can pick the other answer.
package struct ValidationPolicy: Sendable, Equatable {
    /// What to do with a body that is not a JSON object (APNs' answer is undocumented).
    package enum InvalidPayloadHandling: String, Sendable, CaseIterable {
        /// Answer 200, as the device (not APNs) is where a bad payload is dropped. The default.
        case accept
        /// Answer 400 `BadRequestPayload` (the reason Apple's broadcast API uses for unparseable JSON).
        case reject
    }

    /// What to do when the topic's suffix does not fit the push type (e.g. `voip` to a bare bundle ID).
    package enum TopicMismatchHandling: String, Sendable, CaseIterable {
        case accept
        /// Answer 400 `DeviceTokenNotForTopic`, the one answer seen from the real service. The default.
        case reject
    }

    /// What to do with `apns-push-type: background` at priority 10 ("an error" in Apple's text, never seen rejected).
    package enum BackgroundPriorityHandling: String, Sendable, CaseIterable {
        /// Answer 200. The default.
        case accept
        /// Answer 400 `BadPriority`.
        case reject
    }

    package var deviceToken: DeviceTokenRules
    /// Largest accepted body, in bytes (Apple: 4096).
    package var maxPayloadBytes: Int
    /// Largest accepted body for VoIP pushes (push type `voip` or a `.voip` topic), in bytes (Apple: 5120).
    package var maxVoIPPayloadBytes: Int
    /// Largest `apns-collapse-id`, in bytes (Apple: 64).
    package var maxCollapseIDBytes: Int
    /// Whether a request without `apns-topic` is answered 400 `MissingTopic` (Apple's current text says required).
    package var requireTopic: Bool
    package var invalidPayload: InvalidPayloadHandling
    package var topicMismatch: TopicMismatchHandling
    package var backgroundPriority10: BackgroundPriorityHandling

    package init(
        deviceToken: DeviceTokenRules = DeviceTokenRules(),
        maxPayloadBytes: Int = 4096,
        maxVoIPPayloadBytes: Int = 5120,
        maxCollapseIDBytes: Int = 64,
        requireTopic: Bool = true,
        invalidPayload: InvalidPayloadHandling = .accept,
        topicMismatch: TopicMismatchHandling = .reject,
        backgroundPriority10: BackgroundPriorityHandling = .accept
    ) {
        self.deviceToken = deviceToken
        self.maxPayloadBytes = maxPayloadBytes
        self.maxVoIPPayloadBytes = maxVoIPPayloadBytes
        self.maxCollapseIDBytes = maxCollapseIDBytes
        self.requireTopic = requireTopic
        self.invalidPayload = invalidPayload
        self.topicMismatch = topicMismatch
        self.backgroundPriority10 = backgroundPriority10
    }
}
