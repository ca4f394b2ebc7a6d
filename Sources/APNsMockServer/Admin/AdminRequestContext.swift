import Hummingbird

/// The admin API's request context: whose recordings, scenario and devices the request sees and changes.
package struct AdminRequestContext: RequestContext {
    package var coreContext: CoreRequestContextStorage
    /// The tenant the request acts for (`--tenants`): its token's, or the one it named (`?tenant=`, or the
    /// `APNs-Mock-Tenant` header) with an unscoped token; `nil`: every tenant.
    package var tenant: String?
    /// The tenant its token is scoped to; `nil` for an unscoped token, or none.
    package var tokenTenant: String?
    /// The token it carried, as the audit log names it: `admin-token`, `tenant=NAME`, or `none`.
    package var tokenName = "none"

    package init(source: Source) {
        self.coreContext = .init(source: source)
    }
}
