import Foundation
import Synchronization

/// Runs a ``Scenario``: decides, for each request, which rule answers and how, and keeps the counters, sequence
/// positions and seeded random draws that make runs repeatable.
///
/// One engine is shared by every connection. Each call takes one lock, briefly; compiled regular expressions live
/// inside that lock (Swift's `Regex` is not `Sendable`), and the payload is decoded (outside it) only when some rule
/// has a payload condition.
package final class ScenarioEngine: Sendable {
    package let scenario: Scenario
    /// The devices of the scenario (added at start and on ``reset()``) and any added at run time.
    package let devices: DeviceRegistry
    /// Broadcast channels: the scenario's (added at start and on ``reset()``) and any made at run time.
    package let channels: ChannelRegistry
    /// The seed in use: the scenario's, or the random one picked for `seed: random`.
    package let seed: UInt64
    /// Which scenario of the process this is: each replacement counts one up, so an open connection can tell that
    /// the scenario it took its connection policy from is no longer in force.
    package let generation: UInt64
    private let now: @Sendable () -> Int64
    private let plan: Plan
    private let compiled: [CompiledRule]
    private let state: Mutex<State>
    /// Requests seen while `plan.countsInertRequests` (no rule to evaluate, so no lock taken).
    private let inertRequests = Atomic<UInt64>(0)

    /// What evaluation needs, worked out once so requests pay only for the conditions in use.
    private struct Plan: Sendable {
        var needsToken: Bool
        /// Some rule matches on the bundle ID of a broadcast-API path.
        var needsBundleID: Bool
        var countsPerToken: Bool
        var countsPerConnection: Bool
        /// No rules and no default latency: nothing to decide.
        var isInert: Bool
        /// Inert, but a scenario was loaded (devices, outages, a connection policy): its requests are still counted
        /// for `GET /admin/scenario`, without the lock.
        var countsInertRequests: Bool
    }

    private struct RuleState {
        var hits: UInt64 = 0
        var nextStep = 0
        var chance: SeededGenerator
        var jitter: SeededGenerator
    }

    private struct State {
        var startedAt: Int64
        var requests: UInt64 = 0
        var perToken: [TokenKey: UInt64] = [:]
        var perConnection: [UInt64: UInt64] = [:]
        var rules: [RuleState]
        var latency: SeededGenerator
        /// Per rule; `nil` for rules without `tokenRegex` (or, for a scenario built in code, an invalid one, which
        /// then never matches).
        let regexes: [Regex<AnyRegexOutput>?]
    }

    /// - Parameters:
    ///   - startedAt: the start that time windows, outages and relative device times count from (milliseconds
    ///     since the epoch); `nil`: now.
    ///   - now: the mock's clock in milliseconds since the epoch (inject one in tests).
    ///   - devices: the registry to fill with the scenario's devices; pass the previous engine's to keep devices
    ///     added at run time across a scenario change. `nil`: a new one on a clock that reads `now`.
    package init(
        scenario: Scenario,
        startedAt: Int64? = nil,
        now: @escaping @Sendable () -> Int64 = WallClock.milliseconds,
        devices: DeviceRegistry? = nil,
        channels: ChannelRegistry = ChannelRegistry(),
        generation: UInt64 = 0
    ) {
        self.scenario = scenario
        self.generation = generation
        self.devices = devices ?? DeviceRegistry(clock: MockClock(wall: now))
        self.channels = channels
        self.now = now
        var system = SystemRandomNumberGenerator()
        let seed = scenario.seed ?? system.next()
        self.seed = seed
        let rules = scenario.rules
        plan = Plan(
            needsToken: rules.contains { $0.conditions.needsToken || $0.conditions.nthForToken != nil },
            needsBundleID: rules.contains { $0.conditions.bundleIDs != nil },
            countsPerToken: rules.contains { $0.conditions.nthForToken != nil },
            countsPerConnection: rules.contains { $0.conditions.nthOnConnection != nil },
            isInert: rules.isEmpty && scenario.defaults.latency == nil,
            countsInertRequests: rules.isEmpty && scenario.defaults.latency == nil
                && (!scenario.devices.isEmpty || !scenario.channels.isEmpty || !scenario.outages.isEmpty
                    || scenario.connection != ScenarioConnectionPolicy())
        )
        compiled = rules.map(CompiledRule.init)
        let start = startedAt ?? now()
        let regexes = rules.map { rule in rule.conditions.tokenRegex.flatMap { try? Regex($0) } }
        state = Mutex(
            State(
                startedAt: start,
                rules: Self.freshRuleStates(count: rules.count, seed: seed),
                latency: SeededGenerator(seed: seed, stream: 0),
                regexes: regexes
            )
        )
        for device in scenario.devices { self.devices.add(device.device(startedAt: start), origin: .scenario) }
        restoreChannels(at: start)
    }


    private static func freshRuleStates(count: Int, seed: UInt64) -> [RuleState] {
        (0..<count).map { index in
            let stream = UInt64(index + 1) << 1
            return RuleState(
                chance: SeededGenerator(seed: seed, stream: stream),
                jitter: SeededGenerator(seed: seed, stream: stream | 1)
            )
        }
    }

    /// Milliseconds since the epoch at which the scenario (re)started.
    package var startedAt: Int64 { state.withLock { $0.startedAt } }

    package var connectionPolicy: ScenarioConnectionPolicy { scenario.connection }

    // MARK: Requests

    /// The decision of the first rule that matches `request`, or `nil` when none does and there is no default
    /// latency (then answer as usual). Counts the request (overall, per token, per connection) and advances the
    /// matching rule's sequence and `times`.
    package func evaluate(_ request: APNsRequest, headers: APNsHeaders, connection: UInt64) -> ScenarioDecision? {
        if plan.isInert {
            if plan.countsInertRequests { inertRequests.add(1, ordering: .relaxed) }
            return nil
        }
        let now = self.now()
        var token: Substring?
        if plan.needsToken, request.path.utf8.starts(with: APNsPath.devicePrefix.utf8) {
            token = request.path.dropFirst(APNsPath.devicePrefix.utf8.count)
        }
        var input = MatchInput(token: token, headers: headers, fields: request.headers, payload: request.payload)
        if plan.needsBundleID {
            let path = request.path
            input.bundleID = (BroadcastRoute(providerPath: path) ?? BroadcastRoute(channelPath: path))?.bundleID.lowercased()
        }
        let compiled = self.compiled
        let plan = self.plan
        let latency = scenario.defaults.latency
        let pick: Pick = state.withLock { state in
            state.requests += 1
            var ordinals = Ordinals(overall: state.requests, forToken: 0, onConnection: 0)
            if plan.countsPerToken, let token, !token.isEmpty {
                ordinals.forToken = Self.increment(&state.perToken[TokenKey(token), default: 0])
            }
            if plan.countsPerConnection {
                ordinals.onConnection = Self.increment(&state.perConnection[connection, default: 0])
            }
            let elapsed = now - state.startedAt
            for (index, rule) in compiled.enumerated() {
                if let times = rule.times, state.rules[index].hits >= times { continue }
                guard rule.matches(input, regex: state.regexes[index], ordinals: ordinals, elapsed: elapsed) else {
                    continue
                }
                // Drawn only once everything else holds, so a rule's draws depend on its own matches alone.
                if let probability = rule.conditions.probability,
                    !(state.rules[index].chance.nextUnitInterval() < probability)
                {
                    continue
                }
                state.rules[index].hits += 1
                let step = state.rules[index].nextStep
                if step + 1 < rule.steps.count {
                    state.rules[index].nextStep = step + 1
                } else if rule.cycles {
                    state.rules[index].nextStep = 0
                }
                let delay = (rule.steps[step].delay ?? latency).map { state.rules[index].jitter.draw($0) }
                return .rule(index: index, step: step, delay: delay)
            }
            if let latency { return .defaultLatency(state.latency.draw(latency)) }
            return .none
        }

        switch pick {
        case .none:
            return nil
        case .defaultLatency(let milliseconds):
            return ScenarioDecision(
                ruleIndex: nil,
                ruleName: nil,
                answer: .validated,
                delay: .milliseconds(milliseconds)
            )
        case .rule(let index, let stepIndex, let delay):
            let rule = compiled[index]
            let step = rule.steps[stepIndex]
            let answer: ScenarioAnswer
            if step.faultReplacesAnswer {
                answer = .none
            } else if let scripted = step.answer {
                answer = .respond(resolve(scripted, request: request, now: now))
            } else {
                answer = .validated
            }
            return ScenarioDecision(
                ruleIndex: index,
                ruleName: rule.name,
                step: stepIndex,
                answer: answer,
                delay: delay.map { .milliseconds($0) },
                faults: step.faults
            )
        }
    }

    private static func increment(_ count: inout UInt64) -> UInt64 {
        count += 1
        return count
    }

    private enum Pick {
        case rule(index: Int, step: Int, delay: Int64?)
        case defaultLatency(Int64)
        case none
    }

    /// Fills in a 410's timestamp: as scripted, or the device's unregistration time, or now.
    private func resolve(_ scripted: ScriptedAnswer, request: APNsRequest, now: Int64) -> ScenarioResponse {
        var response = ScenarioResponse(status: scripted.status, reason: scripted.reason)
        guard scripted.reason?.carriesTimestamp ?? (scripted.status == 410) else { return response }
        switch scripted.timestamp {
        case .time(let time)?:
            response.timestamp = time.resolve(base: now)
        case .unregistered?:
            response.timestamp = request.deviceToken.flatMap { devices.device(token: $0)?.unregisteredAt } ?? now
        case nil:
            let device = request.deviceToken.flatMap { devices.device(token: $0) }
            response.timestamp = device.flatMap { $0.isUnregistered(at: now) ? $0.unregisteredAt : nil } ?? now
        }
        return response
    }

    // MARK: Devices and connections

    /// What the device registry says of a push (see ``DeviceRegistry/check(token:topic:environment:now:)``):
    /// `400 BadDeviceToken` for the wrong environment, `400 DeviceTokenNotForTopic` for the wrong topic,
    /// `410 Unregistered` with the unregistration time; `nil` for unknown tokens and good pushes.
    package func deviceCheck(
        token: String,
        topic: String?,
        environment: APNsEnvironment,
        now: Int64? = nil
    ) -> ScenarioResponse? {
        devices.check(token: token, topic: topic, environment: environment, now: now ?? self.now())
    }

    /// As above; `known` tells whether the token is a registered device's.
    package func deviceCheck(token: String, topic: String?, environment: APNsEnvironment, now: Int64, known: inout Bool) -> ScenarioResponse? {
        devices.check(token: token, topic: topic, environment: environment, now: now, known: &known)
    }

    /// How to refuse a new connection now, or `nil` when there is no outage.
    package func isRefusingConnections(now: Int64? = nil) -> OutageMode? {
        let outages = scenario.outages
        if outages.isEmpty { return nil }
        let elapsed = (now ?? self.now()) - startedAt
        return outages.first(where: { $0.contains(elapsed: elapsed) })?.mode
    }

    /// A fresh per-connection state for ``connectionPolicy``. `maxConcurrentStreams` is the limit to restore.
    package func makeConnectionState(maxConcurrentStreams: UInt32) -> ScenarioConnectionState {
        var state = ScenarioConnectionState(policy: scenario.connection, maxConcurrentStreams: maxConcurrentStreams)
        state.generation = generation
        return state
    }

    /// Forgets a closed connection's request count (kept only when a rule uses `nthOnConnection`).
    package func connectionClosed(_ connection: UInt64) {
        guard plan.countsPerConnection else { return }
        state.withLock { _ = $0.perConnection.removeValue(forKey: connection) }
    }

    // MARK: Control

    /// Starts the scenario over: the start becomes now, counters, `times` and sequences go back to the beginning,
    /// random draws repeat from the seed, and the scenario's devices are restored as declared (with relative times
    /// counted from the new start). Devices added at run time that the scenario does not declare are kept.
    package func reset() {
        let start = now()
        let count = scenario.rules.count
        let seed = self.seed
        state.withLock { state in
            state.startedAt = start
            state.requests = 0
            inertRequests.store(0, ordering: .relaxed)
            state.perToken = [:]
            state.perConnection = [:]
            state.rules = Self.freshRuleStates(count: count, seed: seed)
            state.latency = SeededGenerator(seed: seed, stream: 0)
        }
        for device in scenario.devices { devices.add(device.device(startedAt: start), origin: .scenario) }
        restoreChannels(at: start)
    }

    /// Puts the scenario's channels in the registry (again), as declared.
    private func restoreChannels(at start: Int64) {
        for channel in scenario.channels {
            channels.put(
                BroadcastChannel(id: channel.id, bundleID: channel.bundleID, environment: channel.environment, storagePolicy: channel.storagePolicy, createdAt: start),
                origin: .scenario
            )
        }
    }

    /// The scenario with its counters, for `GET /admin/scenario`.
    package func snapshot() -> ScenarioSnapshot {
        let rules = scenario.rules
        let (startedAt, requests, statistics) = state.withLock { state in
            let statistics = rules.indices.map { index in
                let ruleState = state.rules[index]
                return ScenarioSnapshot.RuleStatistics(
                    index: index,
                    name: rules[index].name,
                    hits: ruleState.hits,
                    exhausted: rules[index].times.map { ruleState.hits >= UInt64($0) } ?? false,
                    nextStep: rules[index].isSequence ? ruleState.nextStep : nil
                )
            }
            return (state.startedAt, state.requests + inertRequests.load(ordering: .relaxed), statistics)
        }
        return ScenarioSnapshot(
            scenario: scenario,
            seed: seed,
            startedAt: startedAt,
            requests: requests,
            rules: statistics,
            devices: devices.list()
        )
    }
}

extension SeededGenerator {
    /// A delay in milliseconds: fixed, or drawn uniformly from a jitter range.
    mutating func draw(_ delay: ScenarioDelay) -> Int64 {
        switch delay {
        case .fixed(let milliseconds): return milliseconds
        case .jitter(let low, let high): return next(in: low, high)
        }
    }
}
