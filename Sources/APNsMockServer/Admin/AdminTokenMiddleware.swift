import Hummingbird

/// `--admin-token`: admin routes answer 401 unless the request carries `Authorization: Bearer <token>`, the
/// inspector's login cookie (see `AdminSession`), or `access_token=<token>` in its query (RFC 6750 §2.3; kept for
/// scripts written for it, though a URL is a poor place for a secret). Health checks, the inspector's page and its
/// login stay open, so orchestrators need no secret and a browser can log in.
struct AdminTokenMiddleware<Context: RequestContext>: RouterMiddleware {
    let expected: [UInt8]

    init(token: String) {
        self.expected = Array(("Bearer " + token).utf8)
    }

    /// What answers without the token.
    static var open: Set<String> { ["/healthz", "/readyz", "/", "/inspector", "/admin/login", "/admin/logout"] }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if Self.open.contains(path) {
            return try await next(request, context)
        }
        var given = Array((request.headers[.authorization] ?? "").utf8)
        if given.isEmpty, let token = AdminSession.token(inCookies: request.headers[.cookie]) {
            given = Array(("Bearer " + token).utf8)
        }
        if given.isEmpty, let token = request.uri.queryParameters["access_token"] {
            given = Array(("Bearer " + String(token)).utf8)
        }
        guard Self.constantTimeEquals(given, expected) else {
            var response = AdminRoutes.json(["error": "missing or wrong admin token: send 'Authorization: Bearer <token>'"], status: .unauthorized)
            response.headers[.wwwAuthenticate] = "Bearer"
            return response
        }
        return try await next(request, context)
    }

    /// Compares without stopping at the first difference, so timing does not reveal the token.
    static func constantTimeEquals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0
    }
}
