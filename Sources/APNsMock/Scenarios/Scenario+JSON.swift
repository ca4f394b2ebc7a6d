import Foundation

/// The scenario as a JSON object in the file format, so what `GET /admin/scenario` shows can be edited and sent
/// back with `PUT /admin/scenario`.
extension Scenario {
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = ["name": name]
        if let description { object["description"] = description }
        object["seed"] = seed.map { $0 <= UInt64(Int64.max) ? Int64($0) as Any : String($0) } ?? "random"
        var defaultsObject: [String: Any] = [:]
        if let latency = defaults.latency { defaultsObject["latency"] = Self.json(latency) }
        if let environment = defaults.environment { defaultsObject["environment"] = environment.rawValue }
        if !defaultsObject.isEmpty { object["defaults"] = defaultsObject }
        if let delivery {
            var deliveryObject: [String: Any] = [:]
            if let stored = delivery.storedPerApp { deliveryObject["storedPerApp"] = stored }
            if let storage = delivery.maximumStorage { deliveryObject["maxStorage"] = ScenarioTimeSyntax.format(milliseconds: storage) }
            if let budget = delivery.backgroundBudget { deliveryObject["backgroundBudget"] = budget.map { $0 as Any } ?? "none" }
            if let interval = delivery.lowPriorityInterval { deliveryObject["lowPriorityInterval"] = ScenarioTimeSyntax.format(milliseconds: interval) }
            object["delivery"] = deliveryObject
        }
        if !devices.isEmpty {
            object["devices"] = devices.map { device -> [String: Any] in
                var entry: [String: Any] = [
                    "name": device.name, "token": device.token, "topic": device.topic,
                    "environment": device.environment.rawValue,
                ]
                if let time = device.unregisteredAt { entry["unregisteredAt"] = Self.json(time) }
                return entry
            }
        }
        if !channels.isEmpty {
            object["channels"] = channels.map { channel -> [String: Any] in
                [
                    "name": channel.name, "id": channel.id, "bundleId": channel.bundleID,
                    "messageStoragePolicy": channel.storagePolicy.rawValue, "environment": channel.environment.rawValue,
                ]
            }
        }
        var connectionObject: [String: Any] = [:]
        if let limit = connection.closeAfterBadDeviceTokens { connectionObject["closeAfterBadDeviceTokens"] = limit }
        if connection.lowerStreamLimitAfterRejection { connectionObject["lowerStreamLimitAfterRejection"] = true }
        if !connectionObject.isEmpty { object["connection"] = connectionObject }
        if !outages.isEmpty {
            object["outages"] = outages.map { outage -> [String: Any] in
                var entry: [String: Any] = ["from": ScenarioTimeSyntax.format(milliseconds: outage.from)]
                if let until = outage.until { entry["until"] = ScenarioTimeSyntax.format(milliseconds: until) }
                switch outage.mode {
                case .refuse:
                    entry["mode"] = "refuse"
                case .goAway(let errorCode, let debugData):
                    entry["mode"] = "goaway"
                    entry["errorCode"] = HTTP2ErrorCodeName.jsonValue(errorCode)
                    entry["debugData"] = debugData
                }
                return entry
            }
        }
        object["rules"] = rules.map { $0.jsonObject() }
        return object
    }

    static func json(_ delay: ScenarioDelay) -> Any {
        switch delay {
        case .fixed(let milliseconds):
            return ScenarioTimeSyntax.format(milliseconds: milliseconds)
        case .jitter(let low, let high):
            return [
                "min": ScenarioTimeSyntax.format(milliseconds: low),
                "max": ScenarioTimeSyntax.format(milliseconds: high),
            ]
        }
    }

    static func json(_ time: ScenarioTime) -> Any {
        switch time {
        case .absolute(let milliseconds): return milliseconds
        case .relative(0): return "now"
        case .relative(let offset): return (offset > 0 ? "+" : "") + ScenarioTimeSyntax.format(milliseconds: offset)
        }
    }
}

extension ScenarioRule {
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = ["name": name]
        let match = conditions.jsonObject()
        if !match.isEmpty { object["match"] = match }
        if let times { object["times"] = times }
        if isSequence {
            object["sequence"] = steps.map { $0.jsonObject() }
            if cycles { object["repeat"] = true }
        } else if let step = steps.first {
            object.merge(step.jsonObject()) { current, _ in current }
        }
        return object
    }
}

extension RuleStep {
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = [:]
        if let answer {
            if answer.status == 200 {
                object["accept"] = true
            } else {
                object["status"] = answer.status
                if let reason = answer.reason { object["reason"] = reason.rawValue }
            }
            switch answer.timestamp {
            case .unregistered?: object["timestamp"] = "unregistered"
            case .time(let time)?: object["timestamp"] = Scenario.json(time)
            case nil: break
            }
        }
        if let delay { object["delay"] = Scenario.json(delay) }
        for fault in faults {
            let (key, value) = fault.jsonEntry
            object[key] = value
        }
        return object
    }
}

extension RuleConditions {
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = [:]
        if let tokens { object["token"] = tokens.count == 1 ? tokens[0] as Any : tokens }
        if let tokenPrefix { object["tokenPrefix"] = tokenPrefix }
        if let tokenRegex { object["tokenRegex"] = tokenRegex }
        if let device { object["device"] = device.name }
        if let topics { object["topic"] = topics.count == 1 ? topics[0] as Any : topics }
        if let channelIDs { object["channel"] = channelIDs.count == 1 ? channelIDs[0] as Any : channelIDs }
        if let bundleIDs { object["bundleId"] = bundleIDs.count == 1 ? bundleIDs[0] as Any : bundleIDs }
        if let pushTypes {
            object["pushType"] = pushTypes.count == 1 ? pushTypes[0].rawValue as Any : pushTypes.map(\.rawValue)
        }
        if let priorities { object["priority"] = priorities.count == 1 ? priorities[0] as Any : priorities }
        if !headers.isEmpty {
            var members: [String: Any] = [:]
            for header in headers { members[header.name] = header.value ?? NSNull() }
            object["headers"] = members
        }
        if !payload.isEmpty {
            var members: [String: Any] = [:]
            for condition in payload { members[condition.path.description] = condition.value.jsonObject }
            object["payload"] = members
        }
        if let nth { object["nth"] = Self.json(nth) }
        if let nthForToken { object["nthForToken"] = Self.json(nthForToken) }
        if let nthOnConnection { object["nthOnConnection"] = Self.json(nthOnConnection) }
        if let every { object["every"] = every }
        if everyOffset != 0 { object["offset"] = everyOffset }
        if let after { object["after"] = ScenarioTimeSyntax.format(milliseconds: after) }
        if let before { object["before"] = ScenarioTimeSyntax.format(milliseconds: before) }
        if let probability { object["probability"] = probability }
        return object
    }

    private static func json(_ range: OrdinalRange) -> Any {
        if range.to == range.from { return Int64(clamping: range.from) }
        var object: [String: Any] = ["from": Int64(clamping: range.from)]
        if let to = range.to { object["to"] = Int64(clamping: to) }
        return object
    }
}
