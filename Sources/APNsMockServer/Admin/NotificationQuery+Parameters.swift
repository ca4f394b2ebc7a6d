import APNsMock

extension NotificationQuery {
    /// The filters every notification route takes: `token`, `topic`, `push-type`, `status`, `reason`,
    /// `apns-id`, `auth`, `key-id`, `team-id`, `since` (milliseconds since the epoch, or an ISO 8601 time), `limit`.
    /// Unknown parameters are an error, so a typo does not silently match everything.
    init(parameters: [(String, String)], extraAllowed: Set<String> = []) throws(AdminInputError) {
        self.init()
        for (name, value) in parameters {
            switch name {
            case "token", "device-token": deviceToken = value
            case "topic": topic = value
            case "push-type":
                guard PushType(rawValue: value) != nil else {
                    throw AdminInputError(
                        parameter: name,
                        message: "'\(value)' is not a push type (\(PushType.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                pushType = value
            case "status":
                guard let code = Int(value), (100...599).contains(code) else {
                    throw AdminInputError(parameter: name, message: "'\(value)' is not an HTTP status code")
                }
                status = code
            case "reason":
                guard Reason(rawValue: value) != nil else {
                    throw AdminInputError(parameter: name, message: "'\(value)' is not an APNs reason")
                }
                reason = value
            case "apns-id": apnsID = value
            case "auth":
                let methods = ["token", "certificate", "none", "missing"]
                guard methods.contains(value) else {
                    throw AdminInputError(parameter: name, message: "'\(value)' is not one of: \(methods.joined(separator: ", "))")
                }
                authMethod = value
            case "key-id": keyID = value
            case "rule": scenarioRule = value
            case "team-id": teamID = value
            case "since":
                guard let millis = AdminTime.milliseconds(value) else {
                    throw AdminInputError(
                        parameter: name,
                        message: "'\(value)' is neither milliseconds since the epoch nor an ISO 8601 time"
                    )
                }
                since = millis
            case "limit":
                guard let count = Int(value), count >= 0 else {
                    throw AdminInputError(parameter: name, message: "'\(value)' is not a non-negative whole number")
                }
                limit = count
            default:
                guard extraAllowed.contains(name) else {
                    throw AdminInputError(parameter: name, message: "unknown parameter")
                }
            }
        }
    }
}
