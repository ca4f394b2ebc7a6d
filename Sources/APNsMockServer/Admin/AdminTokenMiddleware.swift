import HTTPTypes
import Hummingbird

/// `--admin-token` and `--tenants` on each admin request: who it is and whose data it acts on.
///
/// With tokens, admin routes answer 401 unless the request carries `Authorization: Bearer <token>`, the inspector's
/// login cookie (see `AdminSession`), or `access_token=<token>` in its query (RFC 6750 §2.3; kept for scripts
/// written for it, though a URL is a poor place for a secret). Health checks, the inspector's page and its login
/// stay open, so orchestrators need no secret and a browser can log in.
///
/// A tenant's token acts for its tenant only: naming another (`?tenant=`, `APNs-Mock-Tenant`) is a 404, so the
/// answer never holds the other tenant's data, nor says whether it exists. An unscoped token, or none when the mock
/// has no tokens, acts for the tenant it names, or for every tenant.
struct AdminTokenMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let tokens: AdminTokens
    /// Whether the mock has tenants (`--tenants` other than `off`).
    let hasTenants: Bool

    /// What answers without the token.
    static var open: Set<String> { ["/healthz", "/readyz", "/", "/inspector", "/admin/login", "/admin/logout"] }

    /// The header that names a tenant, for clients that keep the URL as it is.
    static let tenantHeader = HTTPField.Name("APNs-Mock-Tenant")!

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if Self.open.contains(path) {
            return try await next(request, context)
        }
        var context = context
        var tokenTenant: String?
        if !tokens.isEmpty {
            guard let match = tokens.match(Self.presentedToken(request)) else {
                var response = AdminRoutes.json(["error": "missing or wrong admin token: send 'Authorization: Bearer <token>'"], status: .unauthorized)
                response.headers[.wwwAuthenticate] = "Bearer"
                return response
            }
            tokenTenant = match.tenant
            context.tokenTenant = match.tenant
            context.tokenName = match.name
        }
        let named = request.uri.queryParameters["tenant"].map(String.init) ?? request.headers[Self.tenantHeader]
        if let named, !hasTenants {
            return AdminRoutes.json(
                ["error": "tenant '\(named)' named, but the mock runs without --tenants: it has one tenant", "parameter": "tenant"],
                status: .badRequest
            )
        }
        if let tokenTenant, let named, named != tokenTenant {
            return AdminRoutes.json(["error": "no tenant '\(named)' for this token"], status: .notFound)
        }
        context.tenant = tokenTenant ?? named.flatMap { $0.isEmpty ? nil : $0 }
        return try await next(request, context)
    }

    /// The secret the request presents: the header, else the inspector's cookie, else `access_token`.
    static func presentedToken(_ request: Request) -> [UInt8] {
        if let header = request.headers[.authorization], header.hasPrefix("Bearer ") { return Array(header.utf8.dropFirst(7)) }
        if let token = AdminSession.token(inCookies: request.headers[.cookie]) { return Array(token.utf8) }
        if let token = request.uri.queryParameters["access_token"] { return Array(String(token).utf8) }
        return []
    }
}
