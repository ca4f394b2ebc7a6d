import APNsMock
import APNsMockServer
import Foundation

/// The admin API's calls, made on the running mock directly: the same parsers, validation and JSON as over HTTP
/// (recordings are decoded from the JSON the admin API would send), without a socket.
extension MockAPNs {
    public func notifications(matching filter: NotificationFilter, limit: Int?) async throws -> [MockRecording] {
        var query = try Self.query(filter, call: "notifications(matching:)")
        query.limit = limit
        return try server.store.list(query).notifications.map(Self.decode)
    }

    public func notification(apnsID: String) async throws -> MockRecording? {
        try server.store.notification(apnsID: apnsID).map(Self.decode)
    }

    public func waitForNotifications(count: Int, matching filter: NotificationFilter, timeout: Duration) async throws -> [MockRecording] {
        guard count >= 1 else {
            throw AdminRequestFailed(request: "waitForNotifications", status: 400, message: "count must be at least 1", parameter: "count")
        }
        var query = try Self.query(filter, call: "waitForNotifications")
        query.limit = count
        let result = await server.store.wait(for: query, count: count, timeout: timeout)
        let matched = try result.notifications.map(Self.decode)
        guard result.satisfied else {
            var newest = NotificationQuery()
            newest.newestFirst = true
            newest.limit = 20
            let recent = server.store.list(newest)
            throw NotificationWaitTimeout(
                expected: count,
                filter: filter,
                timeout: timeout,
                matched: matched,
                recent: try recent.notifications.reversed().map(Self.decode),
                totalReceived: recent.total
            )
        }
        return matched
    }

    public func clearNotifications() async throws {
        server.admin.clearNotifications()
    }

    public func reset() async throws {
        server.admin.resetToStart()
    }

    @discardableResult
    public func setScenario(yaml: String) async throws -> MockScenarioState {
        do throws(ScenarioLoadError) {
            try server.admin.replaceScenario(text: yaml)
        } catch {
            throw ScenarioRejected(
                problems: error.problems.map {
                    ScenarioRejected.Problem(source: $0.source, line: $0.line, column: $0.column, field: $0.field, message: $0.message)
                }
            )
        }
        return try await scenario()
    }

    public func clearScenario() async throws {
        server.scenario.replace(with: .empty)
    }

    public func scenario() async throws -> MockScenarioState {
        try Self.decode(server.scenario.snapshotObject())
    }

    public func register(_ device: MockDevice) async throws {
        let body = try JSONEncoder().encode(device)
        do throws(DeviceJSONError) {
            server.scenario.current.devices.add(try Device(json: Array(body)))
        } catch {
            throw AdminRequestFailed(request: "register", status: 400, message: error.message, parameter: error.field)
        }
    }

    @discardableResult
    public func unregister(token: String, at date: Date) async throws -> MockDevice {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        guard let device = server.scenario.current.devices.unregister(token: token, at: milliseconds) else {
            throw AdminRequestFailed(request: "unregister", status: 404, message: "no device with token \(token)", parameter: "token")
        }
        return try Self.decode(device.jsonObject())
    }

    public func removeDevice(token: String) async throws {
        guard server.scenario.current.devices.remove(token: token) != nil else {
            throw AdminRequestFailed(request: "removeDevice", status: 404, message: "no device with token \(token)", parameter: "token")
        }
    }

    public func devices() async throws -> [MockDevice] {
        try server.scenario.current.devices.list().map { try Self.decode($0.jsonObject()) }
    }

    public func statistics() async throws -> MockStatistics {
        try Self.decode(server.admin.statisticsObject())
    }

    // MARK: Helpers

    /// The filter through the admin API's own parser, so a bad value fails as it would over HTTP.
    private static func query(_ filter: NotificationFilter, call: String) throws -> NotificationQuery {
        do throws(AdminInputError) {
            return try NotificationQuery(parameters: filter.parameters.map { ($0.name, $0.value) })
        } catch {
            throw AdminRequestFailed(request: call, status: 400, message: error.message, parameter: error.parameter)
        }
    }

    private static func decode(_ recording: RecordedNotification) throws -> MockRecording {
        try JSONDecoder().decode(MockRecording.self, from: Data(recording.jsonBytes()))
    }

    private static func decode<Value: Decodable>(_ object: Any) throws -> Value {
        try JSONDecoder().decode(Value.self, from: Data(JSONWriter.encode(any: object)))
    }
}
