import Foundation

/// Who can reach the admin API, as far as the server can tell: the address it listens on and whether it asks for a
/// token. On a shared network without a token, anyone who reaches the port reads every recording and changes every
/// answer; the start-up log, `/admin/stats` and the inspector say so.
package struct AdminAccess: Sendable, Equatable {
    package var host: String
    package var hasToken: Bool

    package init(host: String, hasToken: Bool) {
        self.host = host
        self.hasToken = hasToken
    }

    /// Listens only where other machines cannot reach it.
    package var isLoopback: Bool {
        let host = host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")).lowercased()
        return host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// The warning, when there is one.
    package var warning: String? {
        guard !isLoopback, !hasToken else { return nil }
        return "the admin API listens on \(host) without --admin-token: anyone who can reach it reads every recording and changes the scenario, the devices and the clock; set --admin-token (APNS_MOCK_ADMIN_TOKEN)"
    }

    /// `/admin/stats`'s `adminAccess`.
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = ["host": host, "loopback": isLoopback, "token": hasToken]
        if let warning { object["warning"] = warning }
        return object
    }
}
