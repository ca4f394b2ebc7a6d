import APNsMock
import Foundation
import HTTPTypes
import Hummingbird

/// What the admin API reads and changes: the recorder, the scenario, the channels and the live counters of the
/// provider port. The admin routes and the in-process testing module (`APNsMockTesting`) act through it alike.
package struct AdminContext: Sendable {
    let recorder: Recorder
    var store: NotificationStore { recorder.store }
    let tracker: ConnectionTracker
    let metrics: ProviderMetrics
    /// The scenario, clock and devices acted on: the request's tenant's, or the primary one's.
    private(set) var scenario: ActiveScenario
    /// The broadcast channels acted on: the request's tenant's, or the primary one's.
    private(set) var channels: ChannelRegistry
    /// The live feed behind `GET /admin/notifications/stream`.
    let liveFeed: LiveFeed
    /// The environment the provider port serves: channels made here without one belong to it.
    let environment: APNsEnvironment
    /// True once the provider port is listening (the admin port is listening whenever routes run).
    let providerIsListening: @Sendable () -> Bool
    /// When there are any, every route but the health checks needs one of them.
    let adminTokens: AdminTokens
    /// This replica's part in a cluster sharing a PostgreSQL store, if it is one.
    let cluster: (any ClusterMember)?
    /// The changes made through the admin API, logged and counted.
    let audit: AdminAudit
    /// Who can reach the admin API.
    var access: AdminAccess { AdminAccess(host: adminHost, hasToken: !adminTokens.isEmpty) }
    /// The admin API's listen address.
    let adminHost: String
    /// The tenants (`--tenants`), or `nil` when the mock has one.
    let tenants: TenantDirectory?
    /// The tenant this context acts for; `nil`: every tenant (recordings of all; the primary scenario and devices).
    private(set) var tenant: String?

    init(
        recorder: Recorder, tracker: ConnectionTracker, metrics: ProviderMetrics, scenario: ActiveScenario, channels: ChannelRegistry,
        liveFeed: LiveFeed, environment: APNsEnvironment, providerIsListening: @escaping @Sendable () -> Bool, adminTokens: AdminTokens,
        cluster: (any ClusterMember)?, audit: AdminAudit, adminHost: String, tenants: TenantDirectory?
    ) {
        self.recorder = recorder
        self.tracker = tracker
        self.metrics = metrics
        self.scenario = scenario
        self.channels = channels
        self.liveFeed = liveFeed
        self.environment = environment
        self.providerIsListening = providerIsListening
        self.adminTokens = adminTokens
        self.cluster = cluster
        self.audit = audit
        self.adminHost = adminHost
        self.tenants = tenants
    }

    /// The request's token is one tenant's: it may not list the others.
    private(set) var tokenIsScoped = false

    /// This context for the request's tenant (see `AdminTokenMiddleware`).
    func scoped(_ context: AdminRequestContext) -> AdminContext {
        var scoped = scoped(toTenant: context.tenant)
        scoped.tokenIsScoped = context.tokenTenant != nil
        return scoped
    }

    /// This context for `tenant`: its scenario, devices and channels, and its recordings only. A tenant named for
    /// the first time comes into being, as when its first push arrives.
    package func scoped(toTenant tenant: String?) -> AdminContext {
        guard let tenant, let tenants else { return self }
        var scoped = self
        scoped.tenant = tenant
        scoped.scenario = tenants.scenario(for: tenants.keptName(of: tenant))
        scoped.channels = scoped.scenario.channels
        return scoped
    }

    /// `query` narrowed to this context's tenant.
    func scope(_ query: NotificationQuery) -> NotificationQuery {
        guard let tenant else { return query }
        var narrowed = query
        narrowed.tenant = tenant
        return narrowed
    }

    /// Whether this context may show `recording`.
    func sees(_ recording: RecordedNotification) -> Bool {
        tenant == nil || recording.tenant == tenant
    }
}

/// The admin HTTP API: JSON over HTTP/1.1 on its own port, so the provider port stays a faithful APNs.
enum AdminRoutes {
    /// The longest `wait` allowed, so a forgotten test cannot hold a connection forever.
    static let maximumWait: Duration = .seconds(600)
    /// `wait`'s timeout when none is given.
    static let defaultWait: Duration = .seconds(5)
    /// Recordings a list returns when no `limit` is given (a page; `next` says where the following one starts).
    static let defaultListLimit = 100
    /// Recordings a preview is built from when no `limit` is given, and at most.
    static let defaultPreviewLimit = 500
    static let maximumPreviewLimit = 5000

    static func makeRouter(_ base: AdminContext) -> RouteListingRouter<AdminRequestContext> {
        let router = RouteListingRouter(context: AdminRequestContext.self)
        router.add(middleware: AdminTokenMiddleware(tokens: base.adminTokens, hasTenants: base.tenants != nil))
        router.add(middleware: AdminAuditMiddleware(audit: base.audit))
        AdminSession.addRoutes(to: router, base)

        router.get("/healthz") { _, context -> Response in
            let admin = base.scoped(context)
            guard admin.providerIsListening() else {
                return json(["status": "starting"], status: .serviceUnavailable)
            }
            return json(["status": "ok"])
        }

        // Everything this server needs was loaded before the ports opened (certificates, keys), so once the
        // provider port listens it is ready; a scenario that fails to load stops the start instead.
        router.get("/readyz") { _, context -> Response in
            let admin = base.scoped(context)
            guard admin.providerIsListening() else {
                return json(["status": "starting"], status: .serviceUnavailable)
            }
            return json(["status": "ready", "certificates": "loaded"])
        }

        router.get("/metrics") { _, context -> Response in
            let admin = base.scoped(context)
            let snapshot = admin.scenario.current.snapshot()
            let hits = snapshot.rules.map { rule in
                (
                    name: "scenario_rule_hits", unit: "", labels: [("rule", rule.name)], value: Double(rule.hits),
                    help: "Requests each rule of the active scenario decided since it was loaded or reset."
                )
            }
            // The Console's Metrics tab: each data point of the simulated devices' delivery logs, by state.
            let deliveries = admin.scenario.devices.deliveryCounts().sorted { "\($0.key)" < "\($1.key)" }.map { tally, count in
                (
                    name: "delivery", unit: "total",
                    labels: [("state", tally.state.rawValue), ("push_type", tally.pushType), ("priority", String(tally.priority))],
                    value: Double(count),
                    help: "Data points of the simulated devices' delivery logs since start, by state, push type and priority."
                )
            }
            let changes = admin.audit.changes.sorted { $0.key < $1.key }.map { kind, count in
                (
                    name: "admin_changes", unit: "total", labels: [("change", kind)], value: Double(count),
                    help: "Calls that changed the mock through the admin API since start, by kind (scenario, reset, devices, clock, …)."
                )
            }
            let recorder = admin.store.statistics()
            // Bounded: a tenant past `--tenants`' limit is counted as `overflow`. A tenant's token sees its own row.
            let tenants = recorder.byTenant.sorted { $0.key < $1.key }.filter { admin.tenant == nil || $0.key == admin.tenant }.map { name, count in
                (
                    name: "tenant_recorded", unit: "", labels: [("tenant", name)], value: Double(count),
                    help: "Recordings by tenant (--tenants), since start or the last clear (a tenant's clear zeroes its own)."
                )
            }
            let text = admin.metrics.render(
                tracker: admin.tracker, recorder: recorder, sinks: admin.recorder.sinkStatistics(), extra: hits + deliveries + changes + tenants
            )
            var headers = HTTPFields()
            headers[.contentType] = "text/plain; version=0.0.4; charset=utf-8"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }

        router.get("/admin/notifications") { request, context -> Response in
            let admin = base.scoped(context)
            do throws(AdminInputError) {
                var query = try NotificationQuery(parameters: parameters(of: request))
                if query.limit == nil { query.limit = defaultListLimit }
                let page = admin.store.page(admin.scope(query))
                var body: [String: Any] = ["notifications": page.notifications, "total": page.total]
                if let next = page.next {
                    body["next"] = [query.newestFirst ? "before" : "after": next]
                } else {
                    body["next"] = Optional<Any>.none as Any
                }
                return json(body)
            } catch {
                return badInput(error)
            }
        }

        // The admin API's contract, from the binary (docs/admin-api.yaml is the same text).
        router.get("/admin/openapi.yaml") { _, _ -> Response in
            var headers = HTTPFields()
            headers[.contentType] = "application/yaml; charset=utf-8"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: AdminAPIDocument.yaml)))
        }

        // The inspector page: static, from the binary.
        for path in ["/", "/inspector"] {
            router.get(RouterPath(path)) { _, _ -> Response in
                var headers = HTTPFields()
                headers[.contentType] = "text/html; charset=utf-8"
                return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: InspectorPage.html)))
            }
        }

        // What the devices would show: Notification Center built from a page of the newest matching recordings.
        router.get("/admin/preview") { request, context -> Response in
            let admin = base.scoped(context)
            var grouping = NotificationCenterPreview.Grouping.automatic
            var hidePreviews = false
            var filters: [(String, String)] = []
            for (name, value) in parameters(of: request) {
                switch name {
                case "grouping":
                    guard let parsed = NotificationCenterPreview.Grouping(rawValue: value) else {
                        return badInput(AdminInputError(parameter: name, message: "'\(value)' is not automatic, app or off"))
                    }
                    grouping = parsed
                case "hide-previews", "hidePreviews":
                    guard let parsed = Bool(value) else {
                        return badInput(AdminInputError(parameter: name, message: "'\(value)' is not true or false"))
                    }
                    hidePreviews = parsed
                default:
                    filters.append((name, value))
                }
            }
            var query: NotificationQuery
            do throws(AdminInputError) {
                query = try NotificationQuery(parameters: filters)
            } catch {
                return badInput(error)
            }
            // A page of the newest matching recordings (`limit`, at most 5,000; `before` for the next page): the
            // whole recorder at once took seconds to draw and megabytes to send.
            query.newestFirst = true
            query.limit = min(query.limit ?? defaultPreviewLimit, maximumPreviewLimit)
            if query.afterSequence != nil {
                return badInput(AdminInputError(parameter: "after", message: "a preview pages back from the newest: use before"))
            }
            let page = admin.store.page(admin.scope(query))
            var body = NotificationCenterPreview(recordings: page.notifications, grouping: grouping, hidePreviews: hidePreviews).jsonObject()
            body["total"] = page.total
            if let next = page.next { body["next"] = ["before": next] } else { body["next"] = Optional<Any>.none as Any }
            return json(body)
        }

        router.get("/admin/notifications/stream") { request, context -> Response in
            let admin = base.scoped(context)
            return streamResponse(request, admin)
        }

        router.get("/admin/notifications/wait") { request, context -> Response in
            let admin = base.scoped(context)
            let parsed: (NotificationQuery, Int, Duration)
            do throws(AdminInputError) {
                parsed = try waitParameters(parameters(of: request))
            } catch {
                return badInput(error)
            }
            let (query, count, timeout) = parsed
            let result = await admin.store.wait(for: admin.scope(query), count: count, timeout: timeout)
            var body: [String: Any] = [
                "notifications": result.notifications,
                "total": result.total,
            ]
            if !result.satisfied {
                body["error"] = "timed out: \(result.total) of \(count) notifications matched"
                return json(body, status: .requestTimeout)
            }
            return json(body)
        }

        router.get("/admin/notifications/:apnsID") { _, context -> Response in
            let admin = base.scoped(context)
            let apnsID = pathParameter(context, "apnsID")
            guard let notification = admin.store.notification(apnsID: apnsID), admin.sees(notification) else {
                return json(["error": "no notification with apns-id \(apnsID)"], status: .notFound)
            }
            return json(notification)
        }

        // The whole mock back to its start state, for a test's set-up: no scenario, no devices, no recordings,
        // the recorder's counts and the sinks' queues as after a start. Process-lifetime counters stay (Prometheus
        // counters never go down; connections accepted; sequence numbers).
        router.post("/admin/reset") { _, context -> Response in
            let admin = base.scoped(context)
            admin.resetToStart()
            return json(["reset": true])
        }

        router.delete("/admin/notifications") { _, context -> Response in
            let admin = base.scoped(context)
            admin.clearNotifications()
            return json(["cleared": true])
        }

        router.get("/admin/stats") { _, context -> Response in
            let admin = base.scoped(context)
            return json(admin.statisticsObject())
        }
        addScenarioRoutes(to: router, base)
        addDeviceRoutes(to: router, base)
        addDeliveryRoutes(to: router, base)
        addChannelRoutes(to: router, base)
        return router
    }

    /// `GET/PUT/DELETE /admin/scenario`, `POST /admin/scenario/reset`.
    static func addScenarioRoutes(to router: RouteListingRouter<AdminRequestContext>, _ base: AdminContext) {
        router.get("/admin/scenario") { _, context -> Response in
            let admin = base.scoped(context)
            return json(admin.scenario.snapshotObject())
        }
        // Replace with a posted YAML or JSON scenario, validated first: on error the old one stays.
        router.put("/admin/scenario") { request, context -> Response in
            let admin = base.scoped(context)
            // Read up to one byte past the limit, so an oversized body is refused with a reason, not a bare 413.
            var body = ByteBuffer()
            for try await part in request.body {
                body.writeImmutableBuffer(part)
                if body.readableBytes > YAMLLimits.maximumBytes { break }
            }
            do throws(ScenarioLoadError) {
                try admin.replaceScenario(text: String(buffer: body), byteCount: body.readableBytes)
                return json(admin.scenario.snapshotObject())
            } catch {
                return json(AdminContext.scenarioProblemsObject(error.problems), status: .badRequest)
            }
        }
        router.delete("/admin/scenario") { _, context -> Response in
            let admin = base.scoped(context)
            admin.putInForce(.empty)
            return json(admin.scenario.snapshotObject())
        }
        router.post("/admin/scenario/reset") { _, context -> Response in
            let admin = base.scoped(context)
            admin.resetScenarioCounters()
            return json(admin.scenario.snapshotObject())
        }
    }

    /// Broadcast channels: listed, made with a chosen id (seeding a test), deleted. The channel-management port
    /// makes and deletes them as APNs does; both see the same registry.
    static func addChannelRoutes(to router: RouteListingRouter<AdminRequestContext>, _ base: AdminContext) {
        router.get("/admin/channels") { request, context -> Response in
            let admin = base.scoped(context)
            var bundleID: String?
            var environment: APNsEnvironment?
            for (name, value) in parameters(of: request) {
                switch name {
                case "bundle-id", "bundleId": bundleID = value
                case "environment":
                    guard let parsed = APNsEnvironment(rawValue: value) else {
                        return json(["error": "expected development or production", "parameter": name], status: .badRequest)
                    }
                    environment = parsed
                default:
                    return json(["error": "unknown parameter; expected bundle-id or environment", "parameter": name], status: .badRequest)
                }
            }
            return json(["channels": admin.channels.list(bundleID: bundleID, environment: environment).map { $0.jsonObject() }])
        }
        router.post("/admin/channels") { request, context -> Response in
            let admin = base.scoped(context)
            let body = try await request.body.collect(upTo: 64 * 1024)
            // JSONValue keeps `true` and `1` apart, as the policy check needs (the engine reads APNs' create so too).
            guard case .object(let object)? = JSONScanner.parse(Array(body.readableBytesView)) else {
                return json(["error": "expected a JSON object: {\"bundleId\": …, \"messageStoragePolicy\": 0 or 1}", "parameter": "body"], status: .badRequest)
            }
            let known: Set<String> = ["bundleId", "messageStoragePolicy", "id", "environment"]
            if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
                return json(["error": "unknown field; expected one of \(known.sorted().joined(separator: ", "))", "parameter": unknown], status: .badRequest)
            }
            guard case .string(let bundleID)? = object["bundleId"], !bundleID.isEmpty else {
                return json(["error": "a bundle id is required", "parameter": "bundleId"], status: .badRequest)
            }
            guard let policy = BroadcastChannel.StoragePolicy(json: object["messageStoragePolicy"] ?? .number(0)) else {
                return json(["error": "expected 0 (no message stored) or 1 (most recent message stored)", "parameter": "messageStoragePolicy"], status: .badRequest)
            }
            var environment = admin.environment
            if let value = object["environment"] {
                guard case .string(let text) = value, let parsed = APNsEnvironment(rawValue: text) else {
                    return json(["error": "expected development or production", "parameter": "environment"], status: .badRequest)
                }
                environment = parsed
            }
            var id: String?
            if let value = object["id"] {
                guard case .string(let text) = value, ChannelRegistry.isWellFormedID(text) else {
                    return json(["error": "a channel id is standard base64 (e.g. dHN0LXNyY2gtY2hubA==)", "parameter": "id"], status: .badRequest)
                }
                id = text
            }
            do throws(ChannelRegistry.CreateError) {
                let channel = try admin.channels.create(bundleID: bundleID, environment: environment, storagePolicy: policy, id: id)
                return json(channel.jsonObject(), status: .created)
            } catch {
                switch error {
                case .limitReached(let limit):
                    return json(["error": "the app has \(limit) channels in \(environment.rawValue), APNs' limit", "parameter": "bundleId"], status: .badRequest)
                case .idInUse(let taken):
                    return json(["error": "channel \(taken) exists already", "parameter": "id"], status: .conflict)
                }
            }
        }
        router.delete("/admin/channels/:id") { _, context -> Response in
            let admin = base.scoped(context)
            let id = pathParameter(context, "id")
            guard admin.channels.delete(id: id) else {
                return json(["error": "no channel with this id", "parameter": "id"], status: .notFound)
            }
            return json(["deleted": id])
        }
        router.delete("/admin/channels") { _, context -> Response in
            let admin = base.scoped(context)
            admin.channels.removeAll()
            return json(["cleared": true])
        }
    }

    /// The device registry: devices with a token, topic and environment, unregistered at a time or not.
    static func addDeviceRoutes(to router: RouteListingRouter<AdminRequestContext>, _ base: AdminContext) {
        router.get("/admin/devices") { _, context -> Response in
            let admin = base.scoped(context)
            return json(["devices": admin.scenario.current.devices.list().map { $0.jsonObject() }])
        }
        router.post("/admin/devices") { request, context -> Response in
            let admin = base.scoped(context)
            let body = try await request.body.collect(upTo: 1024 * 1024)
            do throws(DeviceJSONError) {
                let device = try Device(json: Array(body.readableBytesView))
                admin.scenario.current.devices.add(device)
                return json(device.jsonObject(), status: .created)
            } catch {
                return json(["error": error.message, "parameter": error.field ?? "body"], status: .badRequest)
            }
        }
        router.post("/admin/devices/:token/unregister") { request, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            let body = try await request.body.collect(upTo: 64 * 1024)
            let timestamp: Int64
            do throws(DeviceJSONError) {
                timestamp = try Device.unregisterTimestamp(json: Array(body.readableBytesView), now: admin.scenario.clock.now())
            } catch {
                return json(["error": error.message, "parameter": error.field ?? "body"], status: .badRequest)
            }
            guard let device = admin.scenario.current.devices.unregister(token: token, at: timestamp) else {
                return json(["error": "no device with token \(token)"], status: .notFound)
            }
            return json(device.jsonObject())
        }
        router.delete("/admin/devices/:token") { _, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            guard admin.scenario.current.devices.remove(token: token) != nil else {
                return json(["error": "no device with token \(token)"], status: .notFound)
            }
            return json(["removed": token])
        }
    }

    // MARK: Helpers

    static func waitParameters(_ parameters: [(String, String)]) throws(AdminInputError) -> (NotificationQuery, Int, Duration) {
        var query = try NotificationQuery(parameters: parameters, extraAllowed: ["count", "timeout"])
        try query.refuseDeliveryFilter(in: "a wait")
        var (count, timeout) = (1, defaultWait)
        for (name, value) in parameters { _ = try waitOption(name, value, count: &count, timeout: &timeout) }
        // Exactly the first `count` matches, unless a limit says otherwise.
        if query.limit == nil { query.limit = count }
        return (query, count, timeout)
    }

    /// A wait's `count` (at least 1) or `timeout` (a duration, at most 10m); `false` for another parameter.
    static func waitOption(_ name: String, _ value: String, count: inout Int, timeout: inout Duration) throws(AdminInputError) -> Bool {
        switch name {
        case "count":
            guard let number = Int(value), number >= 1 else {
                throw AdminInputError(parameter: name, message: "'\(value)' is not a whole number of at least 1")
            }
            count = number
        case "timeout":
            guard let duration = AdminTime.duration(value), duration <= maximumWait else {
                throw AdminInputError(parameter: name, message: "'\(value)' is not a duration such as 5s, 500ms or 2m (at most 10m)")
            }
            timeout = duration
        default:
            return false
        }
        return true
    }

    /// A path parameter, percent-decoded: a channel id is base64 and may hold `/`, which a client must encode.
    static func pathParameter(_ context: AdminRequestContext, _ name: String) -> String {
        let raw = context.parameters.get(name) ?? ""
        return raw.removingPercentEncoding ?? raw
    }

    static func parameters(of request: Request) -> [(String, String)] {
        // `access_token` is the admin token and `tenant` whose data (see AdminTokenMiddleware), not filters.
        request.uri.queryParameters.filter { $0.key != "access_token" && $0.key != "tenant" }.map { (String($0.key), String($0.value)) }
    }

    /// Recordings as Server-Sent Events: `id:` the sequence, `event: notification`, `data:` the recording's JSON
    /// (one line); `event: delivery`, a simulated device's delivery data point (the log as it was then, after its
    /// push's recording); `event: skipped` with `{"skipped": N}` when this reader fell behind and missed N; a comment
    /// every 15 s while nothing comes. `Last-Event-ID` (or `after=`) first sends what the store still holds after
    /// that sequence, so a reconnecting reader misses nothing the store kept.
    static func streamResponse(_ request: Request, _ admin: AdminContext) -> Response {
        var query: NotificationQuery
        do throws(AdminInputError) {
            query = try NotificationQuery(parameters: parameters(of: request))
        } catch {
            return badInput(error)
        }
        if let name = HTTPTypes.HTTPField.Name("Last-Event-ID"), let lastEventID = request.headers[name] {
            guard let sequence = UInt64(lastEventID) else {
                return badInput(AdminInputError(parameter: "Last-Event-ID", message: "'\(lastEventID)' is not a sequence number"))
            }
            query.afterSequence = sequence
        }
        // Subscribed before the backlog is read, so nothing made in between is missed; duplicates are dropped
        // by sequence.
        do throws(AdminInputError) { try query.refuseDeliveryFilter(in: "the live feed") } catch { return badInput(error) }
        let filter = admin.scope(query.streamFilter)
        let subscription = admin.liveFeed.subscribe(filter)
        let backlogFrom = query.afterSequence
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let body = ResponseBody { writer in
            defer { admin.liveFeed.unsubscribe(subscription) }
            var lastSent = backlogFrom ?? 0
            try await writer.write(ByteBuffer(string: ": apns-mock live feed\n\n"))
            if let backlogFrom {
                var page = filter
                page.afterSequence = backlogFrom
                page.limit = 1000
                while true {
                    let recordings = admin.store.list(page).notifications
                    guard !recordings.isEmpty else { break }
                    for recording in recordings { try await writer.write(event(recording)) }
                    lastSent = recordings.last!.sequence
                    page.afterSequence = lastSent
                }
            }
            while let batch = await subscription.next(timeout: .seconds(15)) {
                if batch.skipped > 0 || batch.deliveriesSkipped > 0 {
                    var skipped = "{\"skipped\":\(batch.skipped)"
                    if batch.deliveriesSkipped > 0 { skipped += ",\"deliveriesSkipped\":\(batch.deliveriesSkipped)" }
                    try await writer.write(ByteBuffer(string: "event: skipped\ndata: \(skipped)}\n\n"))
                }
                let fresh = batch.recordings.filter { $0.sequence > lastSent }
                if fresh.isEmpty, batch.deliveries.isEmpty, batch.skipped == 0, batch.deliveriesSkipped == 0 {
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                    continue
                }
                var buffer = ByteBuffer()
                for recording in fresh { buffer.writeImmutableBuffer(event(recording)) }
                for record in batch.deliveries { buffer.writeImmutableBuffer(event(record)) }
                if let last = fresh.last { lastSent = last.sequence }
                try await writer.write(buffer)
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// One recording as a Server-Sent Event.
    static func event(_ recording: RecordedNotification) -> ByteBuffer {
        // The recording's JSON is one line (payload line breaks become spaces), as `data:` needs.
        var buffer = ByteBuffer(string: "id: \(recording.sequence)\nevent: notification\ndata: ")
        buffer.writeBytes(recording.jsonBytes())
        buffer.writeString("\n\n")
        return buffer
    }

    /// A data point of a simulated device's delivery log as a Server-Sent Event: `event: delivery`, the log as it
    /// was then. No `id:`: a reader's `Last-Event-ID` stays the last recording's.
    static func event(_ record: DeliveryRecord) -> ByteBuffer {
        var buffer = ByteBuffer(string: "event: delivery\ndata: ")
        buffer.writeBytes(JSONWriter.encode(any: record.jsonObject()))
        buffer.writeString("\n\n")
        return buffer
    }

    static func badInput(_ error: AdminInputError) -> Response {
        json(["error": error.message, "parameter": error.parameter], status: .badRequest)
    }

    /// A sink's lag and counts, as `/admin/stats` lists them.
    package static func sinkJSON(_ sink: RecordingSinkStatistics) -> [String: Any] {
        var object: [String: Any] = [
            "name": sink.name,
            "policy": sink.policy.rawValue,
            "capacity": sink.capacity,
            "queued": sink.queued,
            "peakQueued": sink.peakQueued,
            "written": sink.written,
            "skipped": sink.skipped,
            "backPressurePauses": sink.backPressurePauses,
        ]
        if let error = sink.lastError { object["lastError"] = error }
        return object
    }

    /// An answer in JSON, written by the one encoder (`JSONWriter`) the record file and the logs use too.
    static func json(_ object: Any, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        let bytes = JSONWriter.encode(any: object)
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
