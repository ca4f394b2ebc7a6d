import Hummingbird
import Logging
import Synchronization

/// Every call that changes the mock (scenario, reset, clear, devices, channels, clock) is logged with what it did,
/// its answer and whether it carried the admin token, and counted by kind (`apns_mock_admin_changes_total`), so a
/// team sharing a staging mock can tell who reset it.
struct AdminAuditMiddleware<Context: RequestContext>: RouterMiddleware {
    let audit: AdminAudit

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard request.method != .get, request.method != .head else { return try await next(request, context) }
        let response = try await next(request, context)
        // Past the token check, a call to a mock with a token carried it (the login form excepted).
        let path = request.uri.path
        let withToken = audit.tokenRequired && !AdminTokenMiddleware<Context>.open.contains(path)
        audit.note(method: request.method.rawValue, path: path, status: Int(response.status.code), withToken: withToken)
        return response
    }
}

/// The changes made through the admin API, by kind, since start.
package final class AdminAudit: Sendable {
    private let logger: Logger
    private let counts = Mutex<[String: Int]>([:])
    /// The mock runs with `--admin-token`.
    let tokenRequired: Bool

    package init(logger: Logger, tokenRequired: Bool) {
        self.logger = logger
        self.tokenRequired = tokenRequired
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

    func note(method: String, path: String, status: Int, withToken: Bool) {
        let kind = Self.kind(of: path)
        counts.withLock { $0[kind, default: 0] += 1 }
        logger.info(
            "admin change",
            metadata: ["change": "\(kind)", "method": "\(method)", "path": "\(path)", "status": "\(status)", "token": "\(withToken ? "admin-token" : "none")"]
        )
    }

    /// Changes by kind since start.
    package var changes: [String: Int] { counts.withLock { $0 } }
}
