extension DeliveryRecord {
    /// The log as the admin API shows it: the push's identity, its state now (`state` and the Console's `console`),
    /// and every data point, in order, with its time in milliseconds and ISO 8601.
    package func jsonObject() -> [String: Any] {
        var object: [String: Any] = [
            "token": token,
            "pushType": pushType,
            "priority": priority,
            "state": state.rawValue,
            "console": state.console,
            "receivedAt": receivedAt,
            "events": events.map { event -> [String: Any] in
                [
                    "state": event.state.rawValue,
                    "console": event.state.console,
                    "at": event.at,
                    "time": ISO8601Time.format(milliseconds: event.at),
                ]
            },
        ]
        if let topic { object["topic"] = topic }
        if let apnsID { object["apnsId"] = apnsID }
        if let uniqueID { object["apnsUniqueId"] = uniqueID }
        if let collapseID { object["collapseId"] = collapseID }
        if let channelID { object["channelId"] = channelID }
        if let expiration { object["expiration"] = expiration }
        if let expiresAt { object["expiresAt"] = expiresAt }
        if let deliveredAt { object["deliveredAt"] = deliveredAt }
        if let sequence, sequence > 0 { object["sequence"] = Int64(clamping: sequence) }
        return object
    }
}
