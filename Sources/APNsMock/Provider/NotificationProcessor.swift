import Foundation

/// Which connection a request came in on, as far as the decision and the recording need to know.
package struct ConnectionInfo: Sendable, Equatable {
    package var id: UInt64
    package var remoteAddress: String?
    /// The listener it came in on: APNs serves channel management on hosts and ports of its own.
    package var service: Service

    /// What a listener serves.
    package enum Service: String, Sendable, Equatable {
        /// Device pushes (`/3/device/…`) and broadcasts (`/4/broadcasts/apps/…`).
        case provider
        /// Broadcast channel management (`/1/apps/…/channels`, `/1/apps/…/all-channels`).
        case channelManagement = "channel-management"
    }

    package init(id: UInt64, remoteAddress: String? = nil, service: Service = .provider) {
        self.id = id
        self.remoteAddress = remoteAddress
        self.service = service
    }
}

/// Turns a complete request into APNs' answer: the one place where the provider endpoint decides. Deciding has
/// no side effect beyond the connection's own state: the decision carries what its recording needs
/// (`ProviderDecision.outcome`), and the connection records it once the wire has said what became of the answer.
/// It is called on the connection's event loop, so it does no blocking work.
///
/// The order: an oversized header list (431); a matching scenario rule, whose scripted answer or fault
/// replaces everything else; the route (405, 404); authentication (403, 429); validation (400, 413); the
/// scenario's device registry (400, 410). Then the scenario's per-connection rules see the answer.
package final class NotificationProcessor: Sendable {
    package let validator: RequestValidator
    package let authentication: AuthenticationPolicy
    package let environment: APNsEnvironment
    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection is no longer limited to one stream.
    package let maxConcurrentStreams: UInt32
    package let scenario: ActiveScenario
    /// Broadcast channels, shared by both listeners and the admin API (the scenario's registry).
    package var channels: ChannelRegistry { scenario.channels }
    /// Decides broadcasts and channel-management requests.
    package let broadcastValidator: BroadcastValidator
    /// Payload warnings on every recording (`--lint`); they never change an answer.
    package let lint: Bool
    /// The tenants (`--tenants`), each deciding with its own scenario, devices and channels; `nil` when off, and
    /// `scenario` decides for everyone.
    package let tenants: TenantDirectory?
    /// `tenants != nil`, kept as a flag: the request path tests it, and testing the reference loaded it through
    /// the runtime's retain and release, even when `nil`.
    private let hasTenants: Bool
    /// The tenants' resolver, a value: read for every push without touching the directory every event loop shares.
    private let tenantResolver: TenantResolver
    private let now: @Sendable () -> Int64

    /// - Parameter now: the wall clock in milliseconds since the epoch (injectable for tests).
    package init(
        validator: RequestValidator = RequestValidator(),
        authentication: AuthenticationPolicy = AuthenticationPolicy(mode: .none),
        environment: APNsEnvironment = .development,
        maxConcurrentStreams: UInt32 = 1000,
        scenario: ActiveScenario? = nil,
        broadcastValidator: BroadcastValidator = BroadcastValidator(),
        lint: Bool = true,
        tenants: TenantDirectory? = nil,
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds
    ) {
        self.tenants = tenants.flatMap { $0.mode == .off ? nil : $0 }
        self.hasTenants = self.tenants != nil
        self.tenantResolver = self.tenants?.resolver ?? TenantResolver(mode: .off)
        self.broadcastValidator = broadcastValidator
        self.lint = lint
        self.validator = validator
        self.authentication = authentication
        self.environment = environment
        self.maxConcurrentStreams = maxConcurrentStreams
        self.scenario = scenario ?? ActiveScenario(now: now)
        self.now = now
    }

    /// A fresh authentication state for a new connection.
    package func makeAuthState(certificate: CertificateIdentity?) -> ConnectionAuthState {
        ConnectionAuthState(certificate: certificate, mode: authentication.mode)
    }

    /// Everything a new connection keeps between requests.
    package func makeConnectionState(certificate: CertificateIdentity?) -> ProviderConnectionState {
        ProviderConnectionState(
            auth: makeAuthState(certificate: certificate),
            scenario: scenario.current.makeConnectionState(maxConcurrentStreams: maxConcurrentStreams)
        )
    }

    /// SETTINGS_MAX_CONCURRENT_STREAMS for a new connection: 1 until a valid token arrives, as APNs does.
    package func initialMaxConcurrentStreams(for auth: ConnectionAuthState) -> UInt32 {
        auth.isStreamGated ? 1 : maxConcurrentStreams
    }

    /// Decides for `request` on a connection with only authentication state (no scenario connection rules).
    package func process(
        _ request: APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        auth: inout ConnectionAuthState,
        ids: inout APNsIDGenerator
    ) -> ProviderDecision {
        var state = ProviderConnectionState(
            auth: auth,
            scenario: ScenarioConnectionState(policy: ScenarioConnectionPolicy(), maxConcurrentStreams: maxConcurrentStreams)
        )
        defer { auth = state.auth }
        return process(request, streamID: streamID, connection: connection, state: &state, ids: &ids)
    }

    /// The outcome of a request that ended before it was decided, with its tenant when there are tenants.
    package func abandonedOutcome(
        _ request: borrowing APNsRequest, at receivedAt: Int64, because reason: String, state: ProviderConnectionState?
    ) -> RecordingOutcome {
        guard let tenants else { return .abandoned(at: receivedAt, because: reason) }
        let tenant = tenants.keptName(of: tenants.resolver.tenant(of: copy request, certificate: state?.auth.certificate))
        return RecordingOutcome(
            receivedAt: receivedAt,
            response: nil,
            extras: RecordExtras(abandonedBecause: reason, authentication: nil, scenarioRule: nil, faults: [], tenant: tenant)
        )
    }

    /// The processor's clock: milliseconds since the epoch (the injected clock in tests).
    package func currentMilliseconds() -> Int64 { now() }

    /// Decides the answer to `request`; the decision says what to send and what its recording needs.
    /// - Parameter receivedAt: when the request's last frame arrived (`currentMilliseconds()`); a caller with
    ///   several requests from one read passes one reading for all, instead of a clock reading each.
    package func process(
        _ request: APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        state: inout ProviderConnectionState,
        ids: inout APNsIDGenerator,
        receivedAt: Int64? = nil
    ) -> ProviderDecision {
        if hasTenants {
            if state.tenant.isNone || !tenantResolver.carries(state.tenant.unsafelyUnwrapped.key, in: request, certificate: state.auth.certificate) {
                findTenant(of: request, tenants: tenants.unsafelyUnwrapped, state: &state)
            }
            // Borrowed, as the engine below: the directory keeps every tenant's scenario.
            let active = state.tenant.unsafelyUnwrapped.scenario
            let generation = active._withUnsafeGuaranteedRef { $0.generation }
            if state.engine?.generation != generation { state.engine = active._withUnsafeGuaranteedRef { $0.current } }
        } else if state.engine?.generation != scenario.generation {
            state.engine = scenario.current
        }
        // The engine is borrowed, not retained, for the request: the connection's state holds it until this
        // returns (`decide` never replaces it), and retaining an engine every event loop shares moved its
        // reference count's cache line between their cores for every request.
        return Unmanaged.passUnretained(state.engine!)._withUnsafeGuaranteedRef { engine in
            decide(request, streamID: streamID, connection: connection, engine: engine, state: &state, ids: &ids, receivedAt: receivedAt ?? now())
        }
    }

    /// Finds the request's tenant and remembers it with what it was read from: the connection's next request with
    /// the same token, topic or host is the same tenant's without looking again (`TenantResolver.carries`). A
    /// connection moving to another tenant takes that tenant's engine and connection rules afresh.
    private func findTenant(of request: APNsRequest, tenants: TenantDirectory, state: inout ProviderConnectionState) {
        let certificate = state.auth.certificate
        let key = tenants.resolver.key(request, headers: APNsHeaders(request, knownAuthorization: state.auth.currentAuthorization), certificate: certificate)
        let name = tenants.keptName(of: tenants.resolver.tenant(key: key, certificate: certificate))
        if let memo = state.tenant, memo.name == name {
            state.tenant?.key = key
            return
        }
        let active = tenants.scenario(for: name)
        state.tenant = TenantMemo(key: key, name: name, scenario: Unmanaged.passUnretained(active))
        state.engine = nil
        state.scenario = active.current.makeConnectionState(maxConcurrentStreams: maxConcurrentStreams)
    }

    private func decide(
        _ request: APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        engine: ScenarioEngine,
        state: inout ProviderConnectionState,
        ids: inout APNsIDGenerator,
        receivedAt: Int64
    ) -> ProviderDecision {
        let headers = APNsHeaders(request, knownAuthorization: state.auth.currentAuthorization)
        var pendingActions: [ConnectionAction] = []
        if state.scenario.generation != engine.generation {
            // A new scenario is in force: its connection policy applies to connections opened before it too, with
            // its counters from zero. A stream limit lowered by the old policy is restored.
            let lowered = state.scenario.isStreamLimitLowered
            state.scenario = engine.makeConnectionState(maxConcurrentStreams: maxConcurrentStreams)
            if lowered, !state.auth.isStreamGated { pendingActions.append(.setMaxConcurrentStreams(maxConcurrentStreams)) }
        }
        // Bound only when there is one: an optional decision kept to the end of this function was destroyed there,
        // even when `nil`.
        if !request.headerListTooLarge, let scripted = engine.evaluate(request, headers: headers, connection: connection.id) {
            return decideInGeneral(
                request, headers: headers, scripted: scripted, pendingActions: pendingActions, connection: connection, engine: engine,
                state: &state, ids: &ids, receivedAt: receivedAt
            )
        }
        // A device push that no scenario rule touched, the request nearly every provider sends: decided by a path
        // that carries none of the broadcast API's and the scenario's optional state, whose copies and destroys
        // (even of `nil`) were most of the decision's value-witness time. The same checks in the same order as
        // `decideInGeneral`; the route's verdict refuses an oversized header list first.
        if pendingActions.isEmpty, connection.service == .provider, validator.routeVerdict(request) == .accepted {
            return decideDevicePush(request, headers: headers, engine: engine, state: &state, ids: &ids, receivedAt: receivedAt)
        }
        return decideInGeneral(
            request, headers: headers, scripted: nil, pendingActions: pendingActions, connection: connection, engine: engine,
            state: &state, ids: &ids, receivedAt: receivedAt
        )
    }

    /// A device push with a route that is accepted and no scenario decision: authentication, validation, the
    /// scenario's device registry, the answer. Inlined: called apart, it retained what it read of the processor.
    @inline(__always)
    private func decideDevicePush(
        _ request: APNsRequest,
        headers: APNsHeaders,
        engine: ScenarioEngine,
        state: inout ProviderConnectionState,
        ids: inout APNsIDGenerator,
        receivedAt: Int64
    ) -> ProviderDecision {
        let outcome = state.auth.authenticate(
            authorization: headers.authorization,
            policy: authentication,
            environment: environment,
            nowMilliseconds: receivedAt
        )
        if outcome.wrongCertificateEnvironment {
            return refuseWrongCertificateEnvironment(at: receivedAt, auth: outcome.record, tenant: state.tenant?.name)
        }
        let verdict: RequestValidator.Verdict
        var deviceAnswer: ScenarioResponse?
        var deviceKnown = false
        if let rejection = outcome.rejection {
            verdict = .rejected(rejection)
        } else {
            (verdict, deviceAnswer) = validateDevicePush(
                request, headers: headers, authenticated: outcome, engine: engine, receivedAt: receivedAt, deviceKnown: &deviceKnown
            )
        }
        var actions: [ConnectionAction] = []
        if outcome.raiseStreamLimit { actions.append(.setMaxConcurrentStreams(maxConcurrentStreams)) }
        let made = answer(
            to: request, headers: headers, verdict: verdict, scripted: deviceAnswer, channelAnswer: nil,
            isBroadcastAPI: false, isChannelService: false, receivedAt: receivedAt, ids: &ids
        )
        let recorded = state.scenario.record(status: made.status, reason: made.reason)
        if !recorded.isEmpty { actions += recorded }
        let reachesDevices = deviceKnown && made.status == 200
        // The connection's rules close connections (GOAWAY, then close) and never drop one, so the answer is sent.
        let warnings = lint && request.payloadSize > 0 ? lintWarnings(request, headers: headers, route: nil, state: &state) : []
        // A push with its connection's current token shares the previous recording's extras as they are: looked up
        // before `make`, whose optional parameter took a copy of the record only to compare it.
        // Read only with tenants: the memo's name read out of `nil` still went through the runtime, twice.
        let tenant = hasTenants ? state.tenant?.name : nil
        let extras = (warnings.isEmpty ? RecordExtras.shared(acceptance: outcome.acceptance, tenant: tenant, cache: state.recordExtras) : nil)
            ?? RecordExtras.make(
                abandonedBecause: nil,
                authentication: outcome.record,
                scenarioRule: nil,
                faults: [],
                broadcast: nil,
                warnings: warnings,
                acceptance: outcome.acceptance,
                tenant: tenant,
                cache: &state.recordExtras
            )
        // Moved into the decision (`consume`): values used again afterwards were copied, the extras retained.
        return ProviderDecision(
            actions: actions,
            outcome: RecordingOutcome(receivedAt: receivedAt, response: consume made, extras: consume extras, reachesDevices: reachesDevices),
            pushType: headers.pushType
        )
    }

    /// An authenticated device push's validation, then the scenario's device registry (a `410` or `400` for a
    /// token it lists); `deviceKnown` is set when the registry lists the token.
    @inline(__always)
    private func validateDevicePush(
        _ request: APNsRequest,
        headers: APNsHeaders,
        authenticated outcome: AuthenticationOutcome,
        engine: ScenarioEngine,
        receivedAt: Int64,
        deviceKnown: inout Bool
    ) -> (RequestValidator.Verdict, ScenarioResponse?) {
        let verdict = validator.validate(
            request,
            headers: headers,
            defaultTopic: outcome.defaultTopic,
            allowedTopics: outcome.allowedTopics,
            routeChecked: true
        )
        // From the path's bytes first: a token nobody registered makes no `String` and takes no lock.
        guard verdict == .accepted, engine.devices.mayKnow(tokenOf: request), let token = request.deviceToken else { return (verdict, nil) }
        // The device model's time: the wall clock moved by the mock clock's offset.
        let deviceTime = receivedAt &+ engine.devices.clock.offsetMilliseconds
        let answer = engine.deviceCheck(
            token: token, topic: headers.topic ?? outcome.defaultTopic, environment: environment, now: deviceTime, known: &deviceKnown
        )
        return (verdict, answer)
    }

    /// Everything else: a scenario's decision, the broadcast API, a refused route, an oversized header list.
    private func decideInGeneral(
        _ request: APNsRequest,
        headers: APNsHeaders,
        scripted: ScenarioDecision?,
        pendingActions: [ConnectionAction],
        connection: ConnectionInfo,
        engine: ScenarioEngine,
        state: inout ProviderConnectionState,
        ids: inout APNsIDGenerator,
        receivedAt: Int64
    ) -> ProviderDecision {
        var actions: [ConnectionAction] = pendingActions
        var authRecord: AuthenticationRecord?
        var authAcceptance: UInt64 = 0
        var verdict: RequestValidator.Verdict = request.headerListTooLarge ? .headerListTooLarge : .accepted
        var scriptedResponse: ScenarioResponse?
        var deviceKnown: Bool?
        // The broadcast API: a broadcast on the provider port, or anything on the channel-management port.
        var broadcastRoute: BroadcastRoute?
        var channelAnswer: BroadcastValidator.ChannelAnswer?
        let isChannelService = connection.service == .channelManagement
        // apns-channel-id, read once for the broadcast API (device pushes never look).
        lazy var channelHeader: String? = request.header("apns-channel-id")

        switch scripted?.answer {
        case .respond(let answer):
            scriptedResponse = answer
            // A scripted answer to the broadcast API is still one of its answers (apns-request-id, its kind).
            broadcastRoute = isChannelService ? BroadcastRoute(channelPath: request.path) : request.withPath { BroadcastRoute(providerPath: $0) }
        case .none?:
            break
        case .validated?, nil:
            if verdict == .accepted {
                if isChannelService {
                    broadcastRoute = BroadcastRoute(channelPath: request.path)
                    if broadcastRoute.isNone { verdict = .rejected(.badPath) }
                } else {
                    verdict = validator.routeVerdict(request)
                    // Only a path that is not a device push's is looked at again: the push path pays nothing.
                    if verdict == .rejected(.badPath), request.methodIs("POST"), let route = request.withPath({ BroadcastRoute(providerPath: $0) }) {
                        broadcastRoute = route
                        verdict = .accepted
                    }
                }
            }
            if verdict == .accepted {
                let outcome = state.auth.authenticate(
                    authorization: headers.authorization,
                    policy: authentication,
                    environment: environment,
                    nowMilliseconds: receivedAt
                )
                authRecord = outcome.record
                authAcceptance = outcome.acceptance
                if outcome.wrongCertificateEnvironment {
                    return refuseWrongCertificateEnvironment(at: receivedAt, auth: outcome.record, tenant: state.tenant?.name)
                }
                if let rejection = outcome.rejection {
                    verdict = .rejected(rejection)
                } else if case .broadcast(let bundleID)? = broadcastRoute {
                    let reason = broadcastValidator.validateBroadcast(
                        request, headers: headers, channelID: channelHeader, bundleID: bundleID, allowedTopics: outcome.allowedTopics,
                        channels: engine.channels, environment: environment
                    )
                    verdict = reason.map { .rejected($0) } ?? .accepted
                } else if let broadcastRoute {
                    let answer = broadcastValidator.channelOperation(
                        request, channelID: channelHeader, route: broadcastRoute, allowedTopics: outcome.allowedTopics, channels: engine.channels,
                        environment: environment, now: receivedAt
                    )
                    channelAnswer = answer
                    verdict = answer.reason.map { .rejected($0) } ?? .accepted
                } else {
                    var known = false
                    (verdict, scriptedResponse) = validateDevicePush(
                        request, headers: headers, authenticated: outcome, engine: engine, receivedAt: receivedAt, deviceKnown: &known
                    )
                    deviceKnown = known
                }
                if outcome.raiseStreamLimit { actions.append(.setMaxConcurrentStreams(maxConcurrentStreams)) }
            }
        }

        var response: APNsResponse?
        let isBroadcastAPI = isChannelService || broadcastRoute.isSome
        if scripted.map({ $0.answer != .none }) ?? true {
            // Made by a function that returns it, and stored once: an answer built in a local and then assigned
            // here was copied and destroyed (its IDs' strings retained and released) per push.
            let made = answer(
                to: request, headers: headers, verdict: verdict, scripted: scriptedResponse, channelAnswer: channelAnswer,
                isBroadcastAPI: isBroadcastAPI, isChannelService: isChannelService, receivedAt: receivedAt, ids: &ids
            )
            // Appending even nothing to an empty array allocates its buffer: most answers bring no action.
            let recorded = state.scenario.record(status: made.status, reason: made.reason)
            if !recorded.isEmpty { actions += recorded }
            response = consume made
        }

        var streamFault: StreamFault?
        var faultNotes: [String] = []
        if let faults = scripted?.faults, !faults.isEmpty {
            var effects = ScenarioFault.Effects()
            for fault in faults {
                fault.apply(to: &effects)
                faultNotes.append(fault.note)
            }
            streamFault = effects.streamFault
            actions += effects.actions
        }
        // A stream fault or a dropped connection means the answer never reaches the client.
        if streamFault != nil || actions.contains(.drop) { response = nil }

        let extras = RecordExtras.make(
            abandonedBecause: response.isNone ? "no answer: " + (faultNotes.isEmpty ? "scenario" : faultNotes.joined(separator: ", ")) : nil,
            authentication: authRecord,
            scenarioRule: scripted?.ruleName,
            faults: faultNotes,
            broadcast: isBroadcastAPI ? Self.broadcastRecord(request, channelID: channelHeader, route: broadcastRoute, answer: channelAnswer) : nil,
            warnings: lint && request.payloadSize > 0 ? lintWarnings(request, headers: headers, route: broadcastRoute, state: &state) : [],
            acceptance: authAcceptance,
            tenant: state.tenant?.name,
            // New shareable extras replace the connection's (`make` stores only a new object: storing the same
            // one again was a retain and a release per request).
            cache: &state.recordExtras
        )
        // Built in one expression from values used for the last time: a decision assigned to a variable and then
        // changed was copied on return, and the answer copied into it (retains of each of their references).
        let broadcastKind = isBroadcastAPI ? extras?.broadcast?.kind : nil
        // A scripted 200 skipped the registry's check: the device still takes it, as it takes a broadcast.
        let reachesDevices =
            response?.status == 200 && !engine.devices.isEmpty
            && (isBroadcastAPI || (deviceKnown ?? request.deviceToken.map { engine.devices.knows(token: $0) } ?? false))
        return ProviderDecision(
            streamFault: streamFault,
            actions: actions,
            delay: scripted?.delay,
            outcome: RecordingOutcome(receivedAt: receivedAt, response: consume response, extras: consume extras, reachesDevices: reachesDevices),
            pushType: headers.pushType,
            broadcastKind: broadcastKind
        )
    }

    /// The answer a decided request gets: its status and reason, `apns-id` (or `apns-request-id`) and
    /// `apns-unique-id`, a 410's timestamp, and a channel operation's own headers and body.
    private func answer(
        to request: APNsRequest,
        headers: APNsHeaders,
        verdict: RequestValidator.Verdict,
        scripted: ScenarioResponse?,
        channelAnswer: BroadcastValidator.ChannelAnswer?,
        isBroadcastAPI: Bool,
        isChannelService: Bool,
        receivedAt: Int64,
        ids: inout APNsIDGenerator
    ) -> APNsResponse {
        // Echo a well-formed apns-id exactly as sent (aioapns matches answers by it); otherwise make one. The
        // broadcast API does the same with apns-request-id.
        let apnsID: APNsResponse.ID
        if !isBroadcastAPI, let sent = headers.apnsID, RequestValidator.isCanonicalUUID(sent) {
            apnsID = .text(sent)
        } else if isBroadcastAPI, let sent = request.header("apns-request-id"), RequestValidator.isCanonicalUUID(sent) {
            apnsID = .text(sent)
        } else {
            apnsID = ids.nextID(uppercase: !isBroadcastAPI)
        }
        // Each part worked out first and the answer built once at the end: an answer built early and then changed
        // was copied out of the function and the original destroyed.
        var status = 200
        var reason: Reason?
        var timestamp: Int64?
        var uniqueID: APNsResponse.ID?
        var channelID: String?
        var successBody: String?
        if isBroadcastAPI {
            // A broadcast's answer carries apns-unique-id in both environments (documented without the
            // development-only note device pushes have); channel management answers carry none.
            if !isChannelService { uniqueID = ids.nextID(uppercase: false) }
            if let channelAnswer, channelAnswer.reason == nil {
                status = channelAnswer.status
                channelID = channelAnswer.channelID
                successBody = channelAnswer.body
            }
        } else if environment == .development {
            uniqueID = ids.nextID(uppercase: false)
        }
        if let scripted {
            status = scripted.status
            reason = scripted.reason
            if reason?.carriesTimestamp == true { timestamp = scripted.timestamp ?? receivedAt }
        } else {
            switch verdict {
            case .accepted:
                break
            case .rejected(let rejection):
                status = rejection.status
                reason = rejection
                if rejection.carriesTimestamp { timestamp = receivedAt }
                // Only a successful broadcast gets an apns-unique-id.
                if isBroadcastAPI { uniqueID = nil }
            case .headerListTooLarge:
                status = 431
            }
        }
        return APNsResponse(
            status: status, reason: reason, apnsID: apnsID, uniqueID: uniqueID, timestamp: timestamp,
            idHeader: isBroadcastAPI ? .requestID : .apnsID, channelID: channelID, successBody: successBody
        )
    }

    /// The payload's warnings, from the connection's memo when the same payload comes again with the same headers
    /// (a load test repeats one payload, and scanning it again for every push was a large part of a push's cost).
    private func lintWarnings(_ request: APNsRequest, headers: APNsHeaders, route: BroadcastRoute?, state: inout ProviderConnectionState) -> [PayloadWarning] {
        var isBroadcast = false
        if case .broadcast? = route { isBroadcast = true }
        // Asked in place (a copy of the memo retains its arrays), and before the size limit is worked out from the
        // push type and topic that the memo compares.
        if let warnings = state.lastLint?.warnings(for: request.payload, headers: headers, isBroadcast: isBroadcast) { return warnings }
        let context = PayloadLint.Context(
            pushType: headers.pushType,
            priority: headers.priority,
            sizeLimit: isBroadcast ? broadcastValidator.policy.maxPayloadBytes : validator.payloadLimit(pushType: headers.pushType.flatMap(PushType.init(rawValue:)), topic: headers.topic),
            isBroadcast: isBroadcast
        )
        let warnings = PayloadLint.warnings(request.payload, payloadSize: request.payloadSize, context: context)
        state.lastLint = LintMemo(payload: request.payload, context: context, topic: headers.topic, warnings: warnings)
        return warnings
    }

    /// What a broadcast-API request's recording says it was.
    static func broadcastRecord(_ request: APNsRequest, channelID named: String?, route: BroadcastRoute?, answer: BroadcastValidator.ChannelAnswer?) -> BroadcastRecord {
        switch route {
        case .broadcast(let bundleID)?:
            return BroadcastRecord(kind: .broadcast, bundleID: bundleID, channelID: named)
        case let route?:
            // Refused before the operation was looked at (authentication, a scenario rule): named all the same.
            let kind = answer?.kind ?? BroadcastRecord.kind(of: route, method: request.method)
            return BroadcastRecord(kind: kind, bundleID: route.bundleID, channelID: answer?.recordedChannelID ?? named)
        case nil:
            return BroadcastRecord(kind: .channelOther, bundleID: nil, channelID: named)
        }
    }

    /// APNs answers a certificate for the other environment with GOAWAY `{"reason":"BadCertificateEnvironment"}`
    /// (last stream 0, so the request counts as unprocessed), then a bare GOAWAY, then closes.
    private func refuseWrongCertificateEnvironment(at receivedAt: Int64, auth: AuthenticationRecord, tenant: String?) -> ProviderDecision {
        let debugData = Reason.badCertificateEnvironment.body()
        let because = "connection refused with GOAWAY \(debugData): the client certificate is not for \(environment.rawValue)"
        return ProviderDecision(
            actions: [
                .goAway(errorCode: 0, lastStreamID: 0, debugData: debugData),
                .goAway(errorCode: 0, lastStreamID: 0, debugData: ""),
                .close,
            ],
            outcome: RecordingOutcome(
                receivedAt: receivedAt,
                response: nil,
                extras: RecordExtras(abandonedBecause: because, authentication: auth, scenarioRule: nil, faults: [], tenant: tenant)
            )
        )
    }
}
