import APNsMockAdminClient
import AsyncHTTPClient
import Foundation
import NIOCore

/// A decoded JSON value: the admin client's (`value["key"]?["inner"]?.int` reads nested fields).
typealias JSON = MockJSON

extension MockJSON {
    init(parsing bytes: some Sequence<UInt8>) throws {
        self = try JSONDecoder().decode(MockJSON.self, from: Data(bytes))
    }
}

/// A recorded notification as the admin API returns it, with the fields tests look at most.
struct Recording: Sendable, CustomStringConvertible {
    let json: JSON

    var deviceToken: String? { json["deviceToken"]?.string }
    var topic: String? { json["topic"]?.string }
    var pushType: String? { json["pushType"]?.string }
    var method: String? { json["method"]?.string }
    var path: String? { json["path"]?.string }
    var authority: String? { json["authority"]?.string }
    var payloadText: String? { json["payloadText"]?.string }
    var payloadSize: Int? { json["payloadSize"]?.int }
    var payload: JSON? { json["payload"] }
    /// Headers in arrival order, duplicates kept.
    var headers: [(name: String, value: String)] {
        (json["headers"]?.array ?? []).compactMap { field in
            guard let name = field["name"]?.string, let value = field["value"]?.string else { return nil }
            return (name, value)
        }
    }
    func header(_ name: String) -> String? { headers.first { $0.name == name }?.value }
    /// `nil` when the request was abandoned (the JSON has `"response": null`).
    var response: JSON? { json["response"].flatMap { $0.isNull ? nil : $0 } }
    var hasNullResponse: Bool { json["response"] == .null }
    var status: Int? { response?["status"]?.int }
    var reason: String? { response?["reason"]?.string }
    var responseAPNsID: String? { response?["apnsId"]?.string }
    var responseUniqueID: String? { response?["apnsUniqueId"]?.string }
    var abandoned: String? { json["abandoned"]?.string }

    var description: String { json.description }
}

/// A tiny client for the admin API (plain HTTP/1.1 JSON), over AsyncHTTPClient's shared client.
struct AdminClient: Sendable {
    let port: Int

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// `GET`s (or `DELETE`s) a path with query parameters; returns the status and the decoded body.
    enum Method: String, Sendable {
        case get = "GET"
        case delete = "DELETE"
    }

    func request(
        _ method: Method = .get,
        _ path: String,
        query: [(String, String)] = []
    ) async throws -> (status: Int, json: JSON) {
        var url = baseURL + path
        if !query.isEmpty {
            url += "?" + query.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")
        }
        var request = HTTPClientRequest(url: url)
        switch method {
        case .get: request.method = .GET
        case .delete: request.method = .DELETE
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 64 * 1024 * 1024)
        let bytes = Array(body.readableBytesView)
        do {
            return (Int(response.status.code), try JSON(parsing: bytes))
        } catch {
            throw TestFailure(
                "admin \(method.rawValue) \(url) answered \(response.status.code) with a body that is not JSON: "
                    + String(decoding: bytes, as: UTF8.self)
            )
        }
    }

    /// `GET /admin/notifications` with filters (`token`, `topic`, `status`, …).
    func notifications(_ query: [(String, String)] = []) async throws -> [Recording] {
        let (status, json) = try await request(.get, "/admin/notifications", query: query)
        guard status == 200, let list = json["notifications"]?.array else {
            throw TestFailure("GET /admin/notifications answered \(status): \(json)")
        }
        return list.map(Recording.init(json:))
    }

    /// `GET /admin/notifications/wait`: blocks server-side until `count` recordings match, or fails the test
    /// with what did match when `timeout` passes.
    func waitForNotifications(
        count: Int = 1,
        timeout: String = "5s",
        _ query: [(String, String)] = []
    ) async throws -> [Recording] {
        let (status, json) = try await request(
            .get,
            "/admin/notifications/wait",
            query: query + [("count", String(count)), ("timeout", timeout)]
        )
        guard status == 200, let list = json["notifications"]?.array else {
            throw TestFailure("waiting for \(count) notification(s) matching \(query) failed (\(status)): \(json)")
        }
        return list.map(Recording.init(json:))
    }

    /// `GET /admin/notifications/{apns-id}`, or `nil` on 404.
    func notification(apnsID: String) async throws -> Recording? {
        let (status, json) = try await request(.get, "/admin/notifications/" + apnsID)
        if status == 404 { return nil }
        guard status == 200 else { throw TestFailure("GET /admin/notifications/\(apnsID) answered \(status): \(json)") }
        return Recording(json: json)
    }

    func stats() async throws -> JSON {
        let (status, json) = try await request(.get, "/admin/stats")
        guard status == 200 else { throw TestFailure("GET /admin/stats answered \(status): \(json)") }
        return json
    }

    func clear() async throws {
        let (status, json) = try await request(.delete, "/admin/notifications")
        guard status == 200 else { throw TestFailure("DELETE /admin/notifications answered \(status): \(json)") }
    }

    private static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~:")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
