/// Finds a request's tenant from what its provider sent (see ``TenantMode``). A pure function of the request and
/// the connection's client certificate, so a recording's tenant is the one its decision used.
package struct TenantResolver: Sendable, Equatable {
    package var mode: TenantMode

    /// The tenant of requests that carry nothing naming one (no token, no topic, no host).
    package static let unidentified = "unidentified"

    package init(mode: TenantMode) {
        self.mode = mode
    }

    /// What the tenant is read from, the connection's cache key: the same key gives the same tenant.
    /// - Returns: `nil` when the mode reads the connection's certificate (the same for all its requests).
    func key(_ request: borrowing APNsRequest, headers: APNsHeaders, certificate: CertificateIdentity?) -> String? {
        switch mode {
        case .off: return nil
        case .byTeam: return certificate == nil ? headers.authorization : nil
        case .byTopic: return headers.topic ?? request.path
        case .byHost: return request.authority
        }
    }

    /// Whether `request` carries exactly `key` (from ``key(_:headers:certificate:)`` for an earlier request), read
    /// in place: a connection's pushes nearly always name the tenant its previous one did, and building the key's
    /// text for each was most of what tenants cost. `false` when unsure (the key is then built and compared).
    func carries(_ key: String?, in request: borrowing APNsRequest, certificate: CertificateIdentity?) -> Bool {
        let head = request.head
        switch mode {
        case .off: return true
        case .byTeam:
            if certificate != nil { return key == nil }
            guard let key else { return !head.hasCode(HeaderBlock.Code.authorization) }
            return head.apnsValue(HeaderBlock.Code.authorization, equals: key)
        case .byTopic:
            guard let key, head.hasCode(HeaderBlock.Code.topic) else { return false }
            return head.apnsValue(HeaderBlock.Code.topic, equals: key)
        case .byHost:
            guard let key else { return false }
            return head.withBytes(head.authority ?? head.host) { sent in ASCII.withUTF8(of: key) { ASCII.equal($0, sent) } }
        }
    }

    /// The tenant named by `key` (from ``key(_:headers:certificate:)``).
    func tenant(key: String?, certificate: CertificateIdentity?) -> String {
        switch mode {
        case .off: return Self.unidentified
        case .byTeam:
            if let certificate { return Self.name(certificate.teamID) }
            return Self.name(key.flatMap(Self.team(inAuthorization:)))
        case .byTopic:
            // A certificate's connection may leave out the topic: APNs takes the certificate's first.
            return Self.name(key.flatMap(Self.bundleID(topicOrPath:)) ?? certificate?.topics.first)
        case .byHost: return Self.name(key.flatMap(Self.hostLabel(authority:)))
        }
    }

    /// The tenant of `request`.
    package func tenant(of request: APNsRequest, certificate: CertificateIdentity? = nil) -> String {
        tenant(key: key(request, headers: APNsHeaders(request), certificate: certificate), certificate: certificate)
    }

    private static func name(_ found: String?) -> String {
        guard let found, !found.isEmpty, found.utf8.count <= 200 else { return unidentified }
        return found
    }

    /// The team ID a `bearer <JWT>` claims (`iss`), read without checking the signature: the tenant is where the
    /// request is recorded, whether or not it is then refused.
    static func team(inAuthorization authorization: String) -> String? {
        var text = Substring(authorization)
        if text.lowercased().hasPrefix("bearer ") { text = text.dropFirst(7) }
        return (try? ProviderToken(String(text.drop { $0 == " " })))?.issuer
    }

    /// The bundle ID of an `apns-topic`, or of a broadcast (`/4/broadcasts/apps/ID…`) or channel-management
    /// (`/1/apps/ID/…`) path.
    static func bundleID(topicOrPath text: String) -> String? {
        if text.hasPrefix("/") {
            let parts = text.split(separator: "/", omittingEmptySubsequences: true)
            if parts.count >= 4, parts[0] == "4", parts[1] == "broadcasts", parts[2] == "apps" { return String(parts[3]) }
            if parts.count >= 3, parts[0] == "1", parts[1] == "apps" { return String(parts[2]) }
            return nil
        }
        for suffix in PushType.allCases.compactMap(\.requiredTopicSuffix) where text.hasSuffix(suffix) {
            return String(text.dropLast(suffix.count))
        }
        return text
    }

    /// The first label of the `:authority` host, lowercased, without a port; an IP address whole.
    static func hostLabel(authority: String) -> String? {
        var host = Substring(authority.lowercased())
        if host.hasPrefix("[") {  // An IPv6 literal, `[::1]:2197`.
            return host.firstIndex(of: "]").map { String(host[host.index(after: host.startIndex)..<$0]) }
        }
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        if host.allSatisfy({ $0.isNumber || $0 == "." }) { return String(host) }
        return host.split(separator: ".").first.map(String.init)
    }
}

extension CertificateIdentity {
    /// The team a client certificate belongs to: its subject's `OU`, as Apple issues them.
    package var teamID: String? {
        for part in subject.split(separator: ",") {
            let trimmed = part.drop { $0 == " " }
            if trimmed.hasPrefix("OU=") { return String(trimmed.dropFirst(3)) }
        }
        return nil
    }
}
