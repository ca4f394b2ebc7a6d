import Foundation

/// A problem in a device sent to the admin API, naming the field.
package struct DeviceJSONError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The JSON key at fault, or `nil` when the body as a whole is wrong.
    package var field: String?
    package var message: String

    package init(field: String?, message: String) {
        self.field = field
        self.message = message
    }

    package var description: String {
        field.map { "\($0): \(message)" } ?? message
    }
}

extension Device {
    private static let jsonKeys: Set<String> = ["name", "token", "topic", "environment", "unregisteredAt", "state"]

    /// The device as the admin API shows it: `{"name"?, "token", "topic", "environment", "state",
    /// "unregisteredAt"?}`.
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = ["token": token, "topic": topic, "environment": environment.rawValue, "state": state.rawValue]
        if let name { object["name"] = name }
        if let unregisteredAt { object["unregisteredAt"] = unregisteredAt }
        if !subscriptions.isEmpty { object["subscriptions"] = subscriptions }
        return object
    }

    /// A device from a `POST /admin/devices` body: `{"token": "…", "topic": "…", "environment": "development"}`,
    /// with optional `name` and `unregisteredAt` (milliseconds since the epoch). `environment` defaults to
    /// `development` (`sandbox` is accepted for it).
    package init(json bytes: [UInt8]) throws(DeviceJSONError) {
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw DeviceJSONError(field: nil, message: "the body is not JSON")
        }
        try self.init(jsonObject: object)
    }

    /// A device from a JSON object already parsed with `JSONSerialization`.
    package init(jsonObject: Any) throws(DeviceJSONError) {
        guard let object = jsonObject as? [String: Any] else {
            throw DeviceJSONError(field: nil, message: "expected a JSON object with token, topic and environment")
        }
        if let unknown = object.keys.sorted().first(where: { !Self.jsonKeys.contains($0) }) {
            throw DeviceJSONError(
                field: unknown,
                message: "unknown key; expected name, token, topic, environment, state or unregisteredAt"
            )
        }
        guard let token = object["token"] else { throw DeviceJSONError(field: "token", message: "is required") }
        guard let token = token as? String else { throw DeviceJSONError(field: "token", message: "must be a string") }
        guard Self.isWellFormedToken(token) else {
            throw DeviceJSONError(field: "token", message: "must be an even number of hexadecimal digits")
        }
        guard let topic = object["topic"] else { throw DeviceJSONError(field: "topic", message: "is required") }
        guard let topic = topic as? String, !topic.isEmpty else {
            throw DeviceJSONError(field: "topic", message: "must be a non-empty string")
        }
        var environment = APNsEnvironment.development
        if let value = object["environment"] {
            guard let text = value as? String, let parsed = Self.environment(named: text) else {
                throw DeviceJSONError(field: "environment", message: "must be \"development\" or \"production\"")
            }
            environment = parsed
        }
        var name: String?
        if let value = object["name"], !(value is NSNull) {
            guard let text = value as? String else {
                throw DeviceJSONError(field: "name", message: "must be a string")
            }
            name = text
        }
        var unregisteredAt: Int64?
        if let value = object["unregisteredAt"], !(value is NSNull) {
            unregisteredAt = try Self.milliseconds(value, field: "unregisteredAt")
        }
        var state = DeviceState.online
        if let value = object["state"], !(value is NSNull) {
            state = try Self.state(value, field: "state")
        }
        self.init(name: name, token: token, topic: topic, environment: environment, unregisteredAt: unregisteredAt, state: state)
    }

    /// The state from a `PUT /admin/devices/{token}/state` body: `{"state": "offline"}`.
    package static func state(json bytes: [UInt8]) throws(DeviceJSONError) -> DeviceState {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw DeviceJSONError(field: nil, message: "the body is not JSON; expected {\"state\": \"offline\"}")
        }
        guard let object = parsed as? [String: Any] else {
            throw DeviceJSONError(field: nil, message: "expected a JSON object such as {\"state\": \"offline\"}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "state" }) {
            throw DeviceJSONError(field: unknown, message: "unknown key; expected state")
        }
        guard let value = object["state"] else { throw DeviceJSONError(field: "state", message: "is required") }
        return try state(value, field: "state")
    }

    private static func state(_ value: Any, field: String) throws(DeviceJSONError) -> DeviceState {
        guard let text = value as? String else {
            throw DeviceJSONError(field: field, message: "must be a string: one of \(DeviceState.names)")
        }
        guard let state = DeviceState(rawValue: text) else {
            throw DeviceJSONError(
                field: field,
                message: "'\(text)' is not a device state; " + NearMiss.suggestion(for: text, among: DeviceState.allCases.map(\.rawValue))
            )
        }
        return state
    }

    /// The time from a `POST /admin/devices/{token}/unregister` body `{"timestamp": <ms>}`; an empty body, `{}`
    /// or a `null` timestamp means `now`.
    package static func unregisterTimestamp(json bytes: [UInt8], now: Int64) throws(DeviceJSONError) -> Int64 {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) { return now }
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw DeviceJSONError(field: nil, message: "the body is not JSON")
        }
        guard let object = parsed as? [String: Any] else {
            throw DeviceJSONError(field: nil, message: "expected a JSON object such as {\"timestamp\": 1700000000000}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "timestamp" }) {
            throw DeviceJSONError(field: unknown, message: "unknown key; expected timestamp")
        }
        guard let value = object["timestamp"], !(value is NSNull) else { return now }
        if let text = value as? String {
            // The scenario files' times: `now`, `-2d`, `+30s` (from now), an ISO 8601 date.
            guard let time = ScenarioTimeSyntax.parseTime(text, relativeTo: now) else {
                throw DeviceJSONError(
                    field: "timestamp",
                    message: "'\(text)' is not a time; write milliseconds since the epoch, an ISO 8601 date, now, or a time relative to now (-2d, +30s)"
                )
            }
            return time
        }
        return try milliseconds(value, field: "timestamp")
    }

    static func environment(named text: String) -> APNsEnvironment? {
        switch text.lowercased() {
        case "development", "sandbox": return .development
        case "production": return .production
        default: return nil
        }
    }

    private static let booleanNumberType = ObjectIdentifier(type(of: NSNumber(value: true)))

    private static func milliseconds(_ value: Any, field: String) throws(DeviceJSONError) -> Int64 {
        // JSONSerialization gives NSNumber for numbers and booleans alike (and `1 is Bool` holds on Linux);
        // only the booleans' dynamic type tells them apart.
        if ObjectIdentifier(type(of: value)) == booleanNumberType {
            throw DeviceJSONError(field: field, message: "must be milliseconds since the epoch, not a boolean")
        }
        if let number = value as? NSNumber {
            let double = number.doubleValue
            guard double >= 0, double.rounded() == double, double < 9.0e15 else {
                throw DeviceJSONError(
                    field: field,
                    message: "must be a whole number of milliseconds since the epoch, ≥ 0"
                )
            }
            return Int64(double)
        }
        throw DeviceJSONError(field: field, message: "must be a number: milliseconds since the epoch")
    }
}
