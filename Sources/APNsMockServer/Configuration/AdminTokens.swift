/// The admin API's tokens (`--admin-token`, repeatable): at most one unscoped, which sees and changes everything,
/// and any number scoped to a tenant (`tenant=NAME:SECRET`), which see and change only that tenant's.
package struct AdminTokens: Sendable, Equatable {
    package var unscoped: String?
    /// Tenant name and secret, in the order given.
    package var scoped: [Scoped] = []

    package struct Scoped: Sendable, Equatable {
        package var tenant: String
        package var secret: String
    }

    package init(unscoped: String? = nil, scoped: [Scoped] = []) {
        self.unscoped = unscoped
        self.scoped = scoped
    }

    /// No token at all: the admin API is open.
    package var isEmpty: Bool { unscoped == nil && scoped.isEmpty }

    /// What a token given on the command line is, or why it is not one.
    package mutating func add(_ entry: String) throws(TokenError) {
        guard entry.hasPrefix("tenant=") else {
            guard !entry.isEmpty else { throw TokenError(message: "is empty") }
            guard unscoped == nil || unscoped == entry else {
                throw TokenError(message: "gives a second unscoped token; give one, and scope the others with tenant=NAME:SECRET")
            }
            unscoped = entry
            return
        }
        let rest = entry.dropFirst("tenant=".count)
        guard let colon = rest.firstIndex(of: ":"), colon != rest.startIndex, rest.index(after: colon) != rest.endIndex else {
            throw TokenError(message: "starting tenant= is not tenant=NAME:SECRET")
        }
        let tenant = String(rest[..<colon])
        let secret = String(rest[rest.index(after: colon)...])
        guard !scoped.contains(where: { $0.secret == secret }), secret != unscoped else {
            throw TokenError(message: "gives tenant \(tenant) a secret another token has")
        }
        scoped.append(Scoped(tenant: tenant, secret: secret))
    }

    package struct TokenError: Error, Equatable {
        package var message: String
    }

    /// What a presented secret is: unscoped (`nil` tenant) or a tenant's; `nil` when it is none of them. Every
    /// secret is compared in full, so timing does not tell which one nearly matched.
    package func match(_ given: [UInt8]) -> Match? {
        var found: Match?
        if let unscoped, Self.constantTimeEquals(given, Array(unscoped.utf8)) { found = Match(tenant: nil) }
        for token in scoped where Self.constantTimeEquals(given, Array(token.secret.utf8)) { found = Match(tenant: token.tenant) }
        return found
    }

    package struct Match: Equatable {
        /// The tenant the token is for; `nil`: every tenant.
        package var tenant: String?
        /// The token's name in the audit log.
        package var name: String { tenant.map { "tenant=" + $0 } ?? "admin-token" }
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    package static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
