/// How the mock tells one team's traffic from another's (`--tenants`): from what providers already send, so a team
/// picks its tenant without configuring anything.
package enum TenantMode: String, Sendable, CaseIterable {
    /// One tenant for everyone: recordings, scenario, devices and channels shared, as before tenants existed.
    case off
    /// The provider token's team ID (the JWT's `iss`), or a client certificate's team (its subject's `OU`).
    case byTeam = "by-team"
    /// The app: `apns-topic` without its push-type suffix (`com.example.app.voip` → `com.example.app`), or the
    /// bundle ID in a broadcast or channel-management path.
    case byTopic = "by-topic"
    /// The `:authority` host name's first label (`team-a.apns.staging` → `team-a`); an IP address whole.
    case byHost = "by-host"
}
