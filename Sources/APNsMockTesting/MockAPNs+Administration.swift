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
        do throws(AdminInputError) {
            try query.refuseDeliveryFilter(in: "a wait")
        } catch {
            throw AdminRequestFailed(request: "waitForNotifications", status: 400, message: error.message, parameter: error.parameter)
        }
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
            server.scenario.devices.add(try Device(json: Array(body)))
        } catch {
            throw AdminRequestFailed(request: "register", status: 400, message: error.message, parameter: error.field)
        }
    }

    @discardableResult
    public func unregister(token: String, at date: Date) async throws -> MockDevice {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        guard let device = server.scenario.devices.unregister(token: token, at: milliseconds) else {
            throw AdminRequestFailed(request: "unregister", status: 404, message: "no device with token \(token)", parameter: "token")
        }
        return try Self.decode(device.jsonObject())
    }

    public func removeDevice(token: String) async throws {
        guard server.scenario.devices.remove(token: token) != nil else {
            throw AdminRequestFailed(request: "removeDevice", status: 404, message: "no device with token \(token)", parameter: "token")
        }
    }

    public func devices() async throws -> [MockDevice] {
        try server.scenario.devices.list().map { try Self.decode($0.jsonObject()) }
    }

    public func statistics() async throws -> MockStatistics {
        try Self.decode(server.admin.statisticsObject())
    }

    @discardableResult
    public func setState(_ state: MockDeviceState, ofDevice token: String) async throws -> MockDevice {
        guard let newState = DeviceState(rawValue: state.rawValue) else {
            throw AdminRequestFailed(request: "setState", status: 400, message: "unknown state \(state.rawValue)", parameter: "state")
        }
        let changed: Device?
        do throws(DeviceStateRefused) {
            changed = try server.scenario.devices.setState(token: token, to: newState)
        } catch {
            throw AdminRequestFailed(request: "setState", status: 409, message: error.message, parameter: "state")
        }
        guard let device = changed else { throw Self.noDevice(token, call: "setState") }
        return try Self.decode(device.jsonObject())
    }

    @discardableResult
    public func subscribe(device token: String, toChannel channelID: String) async throws -> MockDevice {
        let subscribed: Device?
        do throws(DeviceSubscriptionRefused) {
            subscribed = try server.scenario.devices.subscribe(token: token, toChannel: channelID)
        } catch {
            throw AdminRequestFailed(request: "subscribe", status: 404, message: error.message, parameter: "channel")
        }
        guard let device = subscribed else { throw Self.noDevice(token, call: "subscribe") }
        return try Self.decode(device.jsonObject())
    }

    @discardableResult
    public func unsubscribe(device token: String, fromChannel channelID: String) async throws -> MockDevice {
        guard let device = server.scenario.devices.unsubscribe(token: token, fromChannel: channelID) else { throw Self.noDevice(token, call: "unsubscribe") }
        return try Self.decode(device.jsonObject())
    }

    public func received(by token: String) async throws -> [MockDelivery] {
        guard let received = server.scenario.devices.received(token: token) else { throw Self.noDevice(token, call: "received") }
        return try received.map { try Self.decode($0.jsonObject()) }
    }

    public func stored(for token: String) async throws -> [MockDelivery] {
        guard let stored = server.scenario.devices.stored(token: token) else { throw Self.noDevice(token, call: "stored") }
        return try stored.map { try Self.decode($0.jsonObject()) }
    }

    public func delivery(id: String) async throws -> MockDelivery? {
        try server.admin.deliveryObject(id: id).map { try Self.decode($0) }
    }

    public func waitForDelivery(to token: String, count: Int, timeout: Duration) async throws -> [MockDelivery] {
        let devices = server.scenario.devices
        guard devices.device(token: token) != nil else { throw Self.noDevice(token, call: "waitForDelivery") }
        let satisfied = await devices.waitForDeliveries(token: token, count: count, timeout: timeout)
        let received: [MockDelivery] = try (devices.received(token: token) ?? []).map { try Self.decode($0.jsonObject()) }
        guard satisfied else {
            let stored: [MockDelivery] = try (devices.stored(token: token) ?? []).map { try Self.decode($0.jsonObject()) }
            throw DeliveryWaitTimeout(token: token, expected: count, timeout: timeout, received: received, stored: stored)
        }
        return received
    }

    public func clockState() async throws -> MockClockState {
        try Self.decode(server.scenario.clock.jsonObject())
    }

    @discardableResult
    public func advanceClock(by duration: Duration) async throws -> MockClockState {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        do throws(ClockChangeRefused) {
            try server.scenario.devices.advanceClock(by: milliseconds)
        } catch {
            throw AdminRequestFailed(request: "advanceClock", status: 400, message: error.message, parameter: "advance")
        }
        return try await clockState()
    }

    private static func noDevice(_ token: String, call: String) -> AdminRequestFailed {
        AdminRequestFailed(request: call, status: 404, message: "no device with token \(token)", parameter: "token")
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
