import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The admin API of a mock running elsewhere (the `apns-mock` binary, the container), typed: the same calls as
/// the in-process `MockAPNs`, over HTTP.
///
/// ```swift
/// let mock = APNsMockAdminClient(baseURL: "http://127.0.0.1:8080", adminToken: ProcessInfo.processInfo.environment["APNS_MOCK_ADMIN_TOKEN"])
/// let pushes = try await mock.waitForNotifications(count: 1, matching: .init(deviceToken: token))
/// ```
public struct APNsMockAdminClient: APNsMockAdministration {
    /// Where the admin API listens: `http://host:port`, no trailing slash.
    public let baseURL: String
    /// Sent as `Authorization: Bearer …` when the mock runs with `--admin-token`.
    public let adminToken: String?
    /// The tenant every call acts for (`--tenants`), sent as the `APNs-Mock-Tenant` header; `nil`: the token's own
    /// tenant, or every tenant with an unscoped token.
    public let tenant: String?
    private let httpClient: HTTPClient
    /// How long one request may take beyond what it waits for on purpose.
    private let requestTimeout: Duration

    /// - Parameters:
    ///   - baseURL: `http://host:port` of the admin API (`--admin-port`, 8080 by default).
    ///   - adminToken: the mock's `--admin-token`, when it has one (an unscoped one, or a tenant's).
    ///   - tenant: the tenant to act for, when the mock runs with `--tenants` and the token is unscoped.
    ///   - httpClient: the client to send with (AsyncHTTPClient's shared one unless given).
    ///   - requestTimeout: how long one request may take beyond what it waits for on purpose (a `wait`'s timeout).
    public init(
        baseURL: String, adminToken: String? = nil, tenant: String? = nil, httpClient: HTTPClient = .shared,
        requestTimeout: Duration = .seconds(30)
    ) {
        var trimmed = baseURL
        while trimmed.hasSuffix("/") { trimmed.removeLast() }
        self.baseURL = trimmed
        self.adminToken = adminToken
        self.tenant = tenant
        self.httpClient = httpClient
        self.requestTimeout = requestTimeout
    }

    // MARK: Recordings

    /// Fetched a page of 1,000 at a time (the API's paging), so a large store is not one huge answer.
    public func notifications(matching filter: NotificationFilter, limit: Int?) async throws -> [MockRecording] {
        struct Page: Decodable {
            struct Next: Decodable { var after: UInt64? }
            var notifications: [MockRecording]
            var next: Next?
        }
        var result: [MockRecording] = []
        var after: UInt64?
        while true {
            let remaining = limit.map { $0 - result.count } ?? Int.max
            guard remaining > 0 else { break }
            var query = filter.parameters.map { ($0.name, $0.value) }
            query.append(("limit", String(min(remaining, 1000))))
            if let after { query.append(("after", String(after))) }
            let page: Page = try await send(.GET, "/admin/notifications", query: query)
            result += page.notifications
            guard let next = page.next?.after, !page.notifications.isEmpty else { break }
            after = next
        }
        return result
    }

    public func notification(apnsID: String) async throws -> MockRecording? {
        let (status, body) = try await exchange(.GET, "/admin/notifications/" + Self.pathSegment(apnsID))
        if status == 404 { return nil }
        return try decode(MockRecording.self, status: status, body: body, request: "GET /admin/notifications/\(apnsID)")
    }

    public func waitForNotifications(count: Int, matching filter: NotificationFilter, timeout: Duration) async throws -> [MockRecording] {
        struct Answer: Decodable {
            var notifications: [MockRecording]
        }
        let milliseconds = max(1, Int64(timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000))
        var query = filter.parameters.map { ($0.name, $0.value) }
        query += [("count", String(count)), ("timeout", "\(milliseconds)ms")]
        let (status, body) = try await exchange(.GET, "/admin/notifications/wait", query: query, extraTime: timeout)
        if status == 408 {
            let matched = try decode(Answer.self, status: 200, body: body, request: "GET /admin/notifications/wait").notifications
            let (recent, total) = try await newest(20)
            throw NotificationWaitTimeout(expected: count, filter: filter, timeout: timeout, matched: matched, recent: recent, totalReceived: total)
        }
        return try decode(Answer.self, status: status, body: body, request: "GET /admin/notifications/wait").notifications
    }

    /// The newest `count` recordings, oldest first, and how many there are in all.
    private func newest(_ count: Int) async throws -> ([MockRecording], Int) {
        struct Page: Decodable {
            var notifications: [MockRecording]
            var total: Int
        }
        let page: Page = try await send(.GET, "/admin/notifications", query: [("order", "newest"), ("limit", String(count))])
        return (page.notifications.reversed(), page.total)
    }

    public func clearNotifications() async throws {
        let _: MockJSON = try await send(.DELETE, "/admin/notifications")
    }

    public func reset() async throws {
        let _: MockJSON = try await send(.POST, "/admin/reset")
    }

    // MARK: Scenario

    @discardableResult
    public func setScenario(yaml: String) async throws -> MockScenarioState {
        struct Rejection: Decodable {
            var details: [ScenarioRejected.Problem]
        }
        let (status, body) = try await exchange(.PUT, "/admin/scenario", body: Array(yaml.utf8), contentType: "application/yaml")
        if status == 400, let rejection = try? JSONDecoder().decode(Rejection.self, from: Data(body)) {
            throw ScenarioRejected(problems: rejection.details)
        }
        return try decode(MockScenarioState.self, status: status, body: body, request: "PUT /admin/scenario")
    }

    public func clearScenario() async throws {
        let _: MockScenarioState = try await send(.DELETE, "/admin/scenario")
    }

    public func scenario() async throws -> MockScenarioState {
        try await send(.GET, "/admin/scenario")
    }

    // MARK: Devices

    public func register(_ device: MockDevice) async throws {
        let body = try JSONEncoder().encode(device)
        let _: MockDevice = try await send(.POST, "/admin/devices", body: Array(body))
    }

    @discardableResult
    public func unregister(token: String, at date: Date) async throws -> MockDevice {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        return try await send(.POST, "/admin/devices/\(Self.pathSegment(token))/unregister", body: Array(#"{"timestamp":\#(milliseconds)}"#.utf8))
    }

    public func removeDevice(token: String) async throws {
        let _: MockJSON = try await send(.DELETE, "/admin/devices/" + Self.pathSegment(token))
    }

    public func devices() async throws -> [MockDevice] {
        struct List: Decodable { var devices: [MockDevice] }
        let list: List = try await send(.GET, "/admin/devices")
        return list.devices
    }

    public func statistics() async throws -> MockStatistics {
        try await send(.GET, "/admin/stats")
    }

    @discardableResult
    public func setState(_ state: MockDeviceState, ofDevice token: String) async throws -> MockDevice {
        try await send(.PUT, "/admin/devices/\(Self.pathSegment(token))/state", body: Array(#"{"state":"\#(state.rawValue)"}"#.utf8))
    }

    @discardableResult
    public func subscribe(device token: String, toChannel channelID: String) async throws -> MockDevice {
        let body = try JSONSerialization.data(withJSONObject: ["channel": channelID])
        return try await send(.POST, "/admin/devices/\(Self.pathSegment(token))/subscriptions", body: Array(body))
    }

    @discardableResult
    public func unsubscribe(device token: String, fromChannel channelID: String) async throws -> MockDevice {
        try await send(.DELETE, "/admin/devices/\(Self.pathSegment(token))/subscriptions/\(Self.pathSegment(channelID))")
    }

    public func received(by token: String) async throws -> [MockDelivery] {
        struct Answer: Decodable { var received: [MockDelivery] }
        let answer: Answer = try await send(.GET, "/admin/devices/\(Self.pathSegment(token))/received")
        return answer.received
    }

    public func stored(for token: String) async throws -> [MockDelivery] {
        struct Answer: Decodable { var stored: [MockDelivery] }
        let answer: Answer = try await send(.GET, "/admin/devices/\(Self.pathSegment(token))/stored")
        return answer.stored
    }

    public func delivery(id: String) async throws -> MockDelivery? {
        let (status, body) = try await exchange(.GET, "/admin/delivery", query: [("apns-unique-id", id)])
        if status == 404 { return nil }
        return try decode(MockDelivery.self, status: status, body: body, request: "GET /admin/delivery")
    }

    public func waitForDelivery(to token: String, count: Int, timeout: Duration) async throws -> [MockDelivery] {
        struct Answer: Decodable {
            var received: [MockDelivery]
            var stored: [MockDelivery]
        }
        let path = "/admin/devices/\(Self.pathSegment(token))/received/wait"
        let query = [("count", String(count)), ("timeout", "\(Self.milliseconds(timeout))ms")]
        let (status, body) = try await exchange(.GET, path, query: query, extraTime: timeout)
        if status == 408 {
            let answer = try decode(Answer.self, status: 200, body: body, request: "GET \(path)")
            throw DeliveryWaitTimeout(token: token, expected: count, timeout: timeout, received: answer.received, stored: answer.stored)
        }
        return try decode(Answer.self, status: status, body: body, request: "GET \(path)").received
    }

    public func clockState() async throws -> MockClockState {
        try await send(.GET, "/admin/clock")
    }

    @discardableResult
    public func advanceClock(by duration: Duration) async throws -> MockClockState {
        try await send(.POST, "/admin/clock", body: Array(#"{"advance":\#(Self.milliseconds(duration))}"#.utf8))
    }

    /// Whole milliseconds, at least 1 for a positive duration.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return duration > .zero ? max(1, milliseconds) : milliseconds
    }

    // MARK: HTTP

    private func send<Value: Decodable>(
        _ method: HTTPMethod,
        _ path: String,
        query: [(String, String)] = [],
        body: [UInt8]? = nil
    ) async throws -> Value {
        let (status, answer) = try await exchange(method, path, query: query, body: body)
        return try decode(Value.self, status: status, body: answer, request: "\(method.rawValue) \(path)")
    }

    private func decode<Value: Decodable>(_ type: Value.Type, status: Int, body: [UInt8], request: String) throws -> Value {
        guard (200..<300).contains(status) else {
            let failure = try? JSONDecoder().decode(AdminErrorBody.self, from: Data(body))
            throw AdminRequestFailed(
                request: request,
                status: status,
                message: failure?.error ?? String(decoding: body.prefix(500), as: UTF8.self),
                parameter: failure?.parameter
            )
        }
        do {
            return try JSONDecoder().decode(Value.self, from: Data(body))
        } catch {
            throw AdminRequestFailed(request: request, status: status, message: "the answer is not what this client expects: \(error)")
        }
    }

    private func exchange(
        _ method: HTTPMethod,
        _ path: String,
        query: [(String, String)] = [],
        body: [UInt8]? = nil,
        contentType: String = "application/json",
        extraTime: Duration = .zero
    ) async throws -> (Int, [UInt8]) {
        var url = baseURL + path
        if !query.isEmpty {
            url += "?" + query.map { Self.queryComponent($0.0) + "=" + Self.queryComponent($0.1) }.joined(separator: "&")
        }
        var request = HTTPClientRequest(url: url)
        request.method = method
        if let adminToken { request.headers.add(name: "Authorization", value: "Bearer " + adminToken) }
        if let tenant { request.headers.add(name: "APNs-Mock-Tenant", value: tenant) }
        if let body {
            request.headers.add(name: "Content-Type", value: contentType)
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let timeout = requestTimeout + extraTime
        let response: HTTPClientResponse
        do {
            response = try await httpClient.execute(request, timeout: TimeAmount(timeout))
        } catch {
            throw AdminRequestFailed(request: "\(method.rawValue) \(path)", status: 0, message: "no answer from \(baseURL): \(error)")
        }
        let bytes = try await response.body.collect(upTo: 256 * 1024 * 1024)
        return (Int(response.status.code), Array(bytes.readableBytesView))
    }

    private static let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)

    /// Percent-encodes everything but RFC 3986's unreserved characters (so `+`, `:` and `$` arrive as sent).
    static func queryComponent(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return result
    }

    static func pathSegment(_ text: String) -> String { queryComponent(text) }
}

/// The admin API's error answer: `{"error": …, "parameter": …}`.
private struct AdminErrorBody: Decodable {
    var error: String?
    var parameter: String?
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
