import Crypto

/// A provider token signing key the mock trusts: Apple's (key id, team id, public key), with the optional
/// restrictions Apple's newer keys carry.
package struct ProviderKey: Sendable {
    /// The 10-character key id (`kid` in the JWT header).
    package var keyID: String
    /// The 10-character team id (`iss` in the JWT claims).
    package var teamID: String
    package var publicKey: P256.Signing.PublicKey
    /// `nil` for a key that works in both environments (Apple's older keys); otherwise the one it works in.
    package var environment: APNsEnvironment?
    /// `nil` for a team-scoped key (any topic of the team); otherwise the bundle IDs it may push to.
    package var topics: [String]?

    package init(
        keyID: String,
        teamID: String,
        publicKey: P256.Signing.PublicKey,
        environment: APNsEnvironment? = nil,
        topics: [String]? = nil
    ) {
        self.keyID = keyID
        self.teamID = teamID
        self.publicKey = publicKey
        self.environment = environment
        self.topics = topics
    }

    package var isTopicSpecific: Bool { topics != nil }

    /// Whether the key may push to `topic`: a listed bundle ID, or that bundle ID with a push-type suffix.
    package func allows(topic: String) -> Bool {
        guard let topics else { return true }
        return topics.contains { topic == $0 || topic.hasPrefix($0 + ".") }
    }
}
