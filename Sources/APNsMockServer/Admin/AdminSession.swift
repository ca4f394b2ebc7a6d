import Foundation
import HTTPTypes
import Hummingbird

/// The inspector's login: a form posts the admin token once (`POST /admin/login`), and the browser keeps it in a
/// cookie (`HttpOnly`: no script reads it; `SameSite=Strict`: no other site's page sends it), so no URL ever holds
/// the token: URLs end up in browser history, proxy logs and `Referer` headers.
enum AdminSession {
    static let cookieName = "apns_mock_admin"

    /// The token a `Cookie` header carries, if any.
    static func token(inCookies header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == cookieName { return String(parts[1]).removingPercentEncoding }
        }
        return nil
    }

    /// The token a login body carries: a form's `token=…`, or `{"token": "…"}`.
    static func token(inBody bytes: [UInt8]) -> String? {
        if let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] {
            return object["token"] as? String
        }
        let text = String(decoding: bytes, as: UTF8.self)
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2, parts[0] == "token" {
                return String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
        }
        return nil
    }

    static func addRoutes(to router: RouteListingRouter<AdminRequestContext>, _ admin: AdminContext) {
        router.post("/admin/login") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 64 * 1024)
            guard !admin.adminTokens.isEmpty else { return redirect(setting: nil) }
            guard let given = token(inBody: Array(body.readableBytesView)) else {
                return AdminRoutes.json(["error": "send the admin token as a form field token=… or as {\"token\": \"…\"}", "parameter": "token"], status: .badRequest)
            }
            guard admin.adminTokens.match(Array(given.utf8)) != nil else {
                return AdminRoutes.json(["error": "wrong admin token"], status: .unauthorized)
            }
            return redirect(setting: given)
        }
        router.post("/admin/logout") { _, _ -> Response in
            redirect(setting: "")
        }
    }

    /// Back to the inspector, setting the cookie (`nil`: leaving it; empty: clearing it).
    private static func redirect(setting token: String?) -> Response {
        var headers = HTTPFields()
        headers[.location] = "/"
        if let token {
            let value = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            headers[.setCookie] = "\(cookieName)=\(value); Path=/; HttpOnly; SameSite=Strict" + (token.isEmpty ? "; Max-Age=0" : "")
        }
        return Response(status: .seeOther, headers: headers)
    }
}
