extension NotificationQuery {
    /// The query parameters every notification route takes, in kebab-case (the one style the README documents);
    /// the JSON fields' camelCase spellings are accepted too (`pushType`, `apnsId`, `keyId`, …), so a name copied
    /// from an answer works.
    package static let parameterAliases: [String: String] = [
        "deviceToken": "token", "device-token": "token", "pushType": "push-type", "apnsId": "apns-id", "keyId": "key-id",
        "teamId": "team-id", "scenarioRule": "rule", "connectionId": "connection", "connection-id": "connection",
        "channelId": "channel-id", "bundleId": "bundle-id",
    ]

    /// The filters: `token`, `topic` (case-insensitive), `push-type`, `status`, `reason`, `apns-id`, `auth`,
    /// `key-id`, `team-id`, `rule`, `connection`, `abandoned`, `header` (`name:value`, repeatable: all must match),
    /// `payload` (`$.json.path:value`, repeatable),
    /// `since` (milliseconds since the epoch, an ISO 8601 time, `now`, or relative to now: `-30s`), `delivery` (a
    /// simulated device's delivery state, or `stored`, `delivered`, `discarded`); paging: `limit`,
    /// `order` (`oldest`, `newest`), `after` / `before` (a sequence number).
    /// Unknown parameters are an error, so a typo does not silently match everything; so is a filter given twice
    /// (except `header`), so `status=200&status=400` is never silently the last one.
    package init(parameters: [(String, String)], extraAllowed: Set<String> = [], now: Int64 = WallClock.milliseconds()) throws(AdminInputError) {
        self.init()
        var seen: Set<String> = []
        for (given, value) in parameters {
            let name = Self.parameterAliases[given] ?? given
            if name != "header", name != "payload", !seen.insert(name).inserted {
                throw AdminInputError(
                    parameter: given,
                    message: "given more than once; filters combine with AND and take one value each (list twice and merge to OR)"
                )
            }
            switch name {
            case "token": deviceToken = value
            case "topic": topic = value
            case "push-type":
                guard PushType(rawValue: value) != nil else {
                    throw AdminInputError(
                        parameter: given,
                        message: "'\(value)' is not a push type (\(PushType.allCases.map(\.rawValue).joined(separator: ", ")))"
                    )
                }
                pushType = value
            case "status":
                guard let code = Int(value), (100...599).contains(code) else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not an HTTP status code")
                }
                status = code
            case "reason":
                guard Reason(rawValue: value) != nil else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not an APNs reason")
                }
                reason = value
            case "apns-id": apnsID = value
            case "auth":
                let methods = ["token", "certificate", "none", "missing"]
                guard methods.contains(value) else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not one of: \(methods.joined(separator: ", "))")
                }
                authMethod = value
            case "key-id": keyID = value
            case "rule": scenarioRule = value
            case "team-id": teamID = value
            case "connection":
                guard let id = UInt64(value) else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not a connection id (connectionId in a recording)")
                }
                connectionID = id
            case "abandoned":
                switch value {
                case "true": abandoned = true
                case "false": abandoned = false
                default: throw AdminInputError(parameter: given, message: "'\(value)' is not true or false")
                }
            case "header":
                guard let colon = value.firstIndex(of: ":"), colon != value.startIndex else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not name:value (e.g. apns-priority:5)")
                }
                let headerValue = value[value.index(after: colon)...]
                headers.append(HeaderField(name: value[..<colon].lowercased(), value: String(headerValue.drop { $0 == " " })))
            case "payload":
                do {
                    payload.append(try PayloadCondition(filter: value))
                } catch {
                    throw AdminInputError(parameter: given, message: "'\(value)': \(error.message)")
                }
            case "since":
                guard let millis = AdminTime.milliseconds(value, now: now) else {
                    throw AdminInputError(
                        parameter: given,
                        message: "'\(value)' is not a time: milliseconds since the epoch, an ISO 8601 time, now, or relative to now (-30s)"
                    )
                }
                since = millis
            case "limit":
                guard let count = Int(value), count >= 0 else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not a non-negative whole number")
                }
                limit = count
            case "order":
                switch value {
                case "oldest": newestFirst = false
                case "newest": newestFirst = true
                default: throw AdminInputError(parameter: given, message: "'\(value)' is not oldest or newest")
                }
            case "kind":
                let kinds = ["push"] + BroadcastRecord.Kind.allCases.map(\.rawValue)
                guard kinds.contains(value) else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not one of: \(kinds.joined(separator: ", "))")
                }
                kind = value
            case "channel-id": channelID = value
            case "warning": warningCode = value
            case "warnings":
                switch value {
                case "any": hasWarnings = true
                case "none": hasWarnings = false
                default: throw AdminInputError(parameter: given, message: "'\(value)' is not any or none")
                }
            case "bundle-id": bundleID = value
            case "delivery":
                guard let filter = DeliveryStateFilter(value) else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not a delivery state; " + NearMiss.suggestion(for: value, among: DeliveryStateFilter.names))
                }
                delivery = filter
            case "after", "before":
                guard let sequence = UInt64(value) else {
                    throw AdminInputError(parameter: given, message: "'\(value)' is not a sequence number")
                }
                if name == "after" { afterSequence = sequence } else { beforeSequence = sequence }
            default:
                guard extraAllowed.contains(name) else {
                    throw AdminInputError(parameter: given, message: "unknown parameter")
                }
            }
        }
    }
}

extension NotificationQuery {
    /// A delivery state changes after its recording is made, so only lists (which ask the devices when they run)
    /// take `delivery=`; a wait or the feed, which match recordings as they come, refuse it rather than ignore it.
    package func refuseDeliveryFilter(in route: String) throws(AdminInputError) {
        guard delivery == nil else {
            throw AdminInputError(
                parameter: "delivery",
                message: "filters lists and previews only, not \(route); wait for a device's deliveries with GET /admin/devices/{token}/received/wait"
            )
        }
    }
}
