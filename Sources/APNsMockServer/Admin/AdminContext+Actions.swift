import APNsMock

extension AdminContext {
    /// The whole mock back to its start state, for a test's set-up: no scenario, no devices, no recordings,
    /// the recorder's counts and the sinks' queues as after a start. Process-lifetime counters stay (Prometheus
    /// counters never go down; connections accepted; sequence numbers).
    /// For a tenant, only its own: its scenario, devices, channels, clock and recordings; the others' stay whole.
    package func resetToStart() {
        if let tenant {
            scenario.resetToStart()
            channels.removeAll()
            recorder.clear(tenant: tenant)
        } else {
            tenants?.resetAll()
            scenario.resetToStart()
            channels.removeAll()
            recorder.clear()
        }
        MemoryRelease.returnFreedMemoryToTheSystem()
    }

    /// Forgets every recording and the counts made from them (a tenant's: its own recordings).
    package func clearNotifications() {
        if let tenant { recorder.clear(tenant: tenant) } else { recorder.clear() }
        MemoryRelease.returnFreedMemoryToTheSystem()
    }

    /// Puts `scenario` in force for this context's tenant; for every tenant (and those still to come) when the
    /// context is for every tenant.
    package func putInForce(_ new: Scenario) {
        if tenant == nil, let tenants { tenants.replaceAll(with: new) } else { scenario.replace(with: new) }
    }

    /// `POST /admin/scenario/reset`: the scenario's counters, clock and sequences afresh (every tenant's, when the
    /// context is for every tenant).
    package func resetScenarioCounters() {
        if tenant == nil, let tenants {
            for each in tenants.all { each.scenario.current.reset() }
        } else {
            scenario.current.reset()
        }
    }

    /// `GET /admin/delivery`'s object: a simulated device's log of the push with this `apns-unique-id` or
    /// `apns-id`, or, for a token no one simulates (an online device), the log its recording implies
    /// (`"simulated": false`); `nil` when no accepted push has the ID.
    package func deliveryObject(id: String) -> [String: Any]? {
        let devices = scenario.devices
        if let record = devices.delivery(id: id) { return record.jsonObject() }
        guard let recording = store.notification(apnsID: id) ?? store.notification(uniqueID: id), sees(recording),
            let record = DeliveryRecord(implied: recording, offset: devices.clock.offsetMilliseconds)
        else { return nil }
        var object = record.jsonObject()
        object["simulated"] = false
        return object
    }

    /// `GET /admin/stats`'s object.
    package func statisticsObject() -> [String: Any] {
        let statistics = tenant == nil ? store.statistics() : store.statistics(matching: scope(NotificationQuery()))
        var object: [String: Any] = [
            "received": statistics.received,
            "byStatus": Dictionary(uniqueKeysWithValues: statistics.byStatus.map { (String($0.key), $0.value) }),
            "byReason": statistics.byReason,
            "byKind": statistics.byKind,
            "byWarning": statistics.byWarning,
            "abandoned": statistics.abandoned,
            "recorder": [
                "stored": statistics.stored,
                "capacity": statistics.capacity,
                "evicted": statistics.evicted,
                "expired": statistics.expired,
                "retention": store.retention.map { ScenarioTimeSyntax.format(milliseconds: $0) } as Any,
            ],
            "connections": [
                "open": tracker.openConnections,
                "accepted": tracker.acceptedConnections,
            ],
            "sinks": recorder.sinkStatistics().map(AdminRoutes.sinkJSON),
            "adminAccess": access.jsonObject(),
            "cluster": cluster.map { cluster -> Any in
                ["replica": cluster.replica, "receivedFromReplicas": Int64(clamping: cluster.receivedFromReplicas)]
            } as Any,
        ]
        if let tenants {
            // A tenant's token is not told which other tenants there are.
            var about: [String: Any] = ["mode": tenants.mode.rawValue, "limit": tenants.limit]
            if !tokenIsScoped { about["names"] = tenants.all.map(\.name) }
            object["tenants"] = about
            object["tenant"] = tenant as Any
        }
        return object
    }

    /// A rejected scenario's problems as the admin API lists them: `problems` (one line each) and `details`
    /// (source, line, column, field, message) for clients that point at the place.
    package static func scenarioProblemsObject(_ problems: [ScenarioProblem]) -> [String: Any] {
        [
            "error": "the scenario is not valid; the previous one stays in force",
            "problems": problems.map(\.description),
            "details": problems.map { problem -> [String: Any] in
                var object: [String: Any] = ["source": problem.source, "message": problem.message]
                object["line"] = problem.line as Any
                object["column"] = problem.column as Any
                object["field"] = problem.field as Any
                return object
            },
        ]
    }
}

extension AdminContext {
    /// Where a scenario put through the admin API (or the testing module) says it came from in its problems.
    package static let scenarioSource = "PUT /admin/scenario"

    /// Validates a scenario (YAML or JSON) within the YAML limits and puts it in force; on error the old one stays.
    /// - Parameter byteCount: the size as received, when the text was decoded from bytes.
    package func replaceScenario(text: String, byteCount: Int? = nil) throws(ScenarioLoadError) {
        if let problem = YAMLLimits.sizeProblem(byteCount: byteCount ?? text.utf8.count) {
            throw ScenarioLoadError(problems: [ScenarioProblem(source: Self.scenarioSource, line: nil, column: nil, field: nil, message: problem)])
        }
        putInForce(try ScenarioLoader.load(text: text, source: Self.scenarioSource))
    }
}
