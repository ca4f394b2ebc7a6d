import Hummingbird
import Logging
import Synchronization

/// Every call that changes the mock (scenario, reset, clear, devices, channels, clock) is logged with what it did,
/// its answer and whether it carried the admin token, and counted by kind (`apns_mock_admin_changes_total`), so a
/// team sharing a staging mock can tell who reset it.
struct AdminAuditMiddleware: RouterMiddleware {
    typealias Context = AdminRequestContext
    let audit: AdminAudit

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        let response = try await next(request, context)
        audit.note(
            method: request.method.rawValue, path: request.uri.path, status: Int(response.status.code), token: context.tokenName,
            tenant: context.tenant
        )
        return response
    }
}

/// The changes made through the admin API, by kind, since start.
package final class AdminAudit: Sendable {
    private let logger: Logger
    private let counts = Mutex<[String: Int]>([:])
    package init(logger: Logger) {
        self.logger = logger
    }

    /// The kind of change a path makes, from a bounded set (a token or a channel id never becomes a label).
    static func kind(of path: String) -> String {
        let parts = path.split(separator: "/")
        guard parts.count >= 2, parts[0] == "admin" else { return "other" }
        switch parts[1] {
        case "scenario": return parts.count > 2 ? "scenario-reset" : "scenario"
        case "reset", "notifications", "channels", "clock", "login", "logout": return String(parts[1])
        case "devices":
            guard parts.count > 3 else { return "devices" }
            return parts[3] == "state" ? "device-state" : parts[3] == "subscriptions" ? "device-subscriptions" : "devices"
        default: return "other"
        }
    }

    /// - Parameters:
    ///   - token: the token's name (`admin-token`, `tenant=NAME`, `none`), never its secret.
    ///   - tenant: the tenant the call acted for; `nil`: every tenant.
    func note(method: String, path: String, status: Int, token: String, tenant: String?) {
        let kind = Self.kind(of: path)
        counts.withLock { $0[kind, default: 0] += 1 }
        logger.info(
            "admin change",
            metadata: [
                "change": "\(kind)", "method": "\(method)", "path": "\(path)", "status": "\(status)", "token": "\(token)",
                "tenant": "\(tenant ?? "all")",
            ]
        )
    }

    /// Changes by kind since start.
    package var changes: [String: Int] { counts.withLock { $0 } }
}
