import Synchronization

/// The tenants the mock has met (`--tenants`), each with its own scenario, clock, devices and channels (an
/// ``ActiveScenario``); recordings carry their tenant and the admin API filters on it.
///
/// A tenant comes into being the first time a request or an admin call names it, with the start scenario
/// (`--scenario`) in force. At most ``limit`` are kept apart, so a provider sending a new team ID, topic or host
/// name with each request cannot grow the mock without bound; past it, new names share the tenant ``overflow``.
package final class TenantDirectory: Sendable {
    package let resolver: TenantResolver
    package var mode: TenantMode { resolver.mode }
    /// How many tenants are kept apart.
    package let limit: Int
    /// Where tenants beyond ``limit`` go.
    package static let overflow = "overflow"

    private let tenants: Mutex<[String: ActiveScenario]>
    private let makeScenario: @Sendable () -> ActiveScenario
    private let startScenario: Mutex<Scenario?>
    /// Scenarios other replicas put in force for tenants not met here yet: such a tenant starts with its own.
    private let adopted = Mutex<[String: (scenario: Scenario, version: UInt64)]>([:])

    /// Each tenant's scenario, device and channel changes made here
    /// (``SharedStateChange/tenantScenario(tenant:source:version:)``, ``SharedStateChange/inTenant(_:_:)``), for
    /// replicas sharing a store; the `unidentified` tenant's are its scenario's and registries' own.
    package let changes = SharedStateObserver()

    /// - Parameters:
    ///   - primary: the scenario of ``TenantResolver/unidentified``, the one tenant when the mode is `off`.
    ///   - makeScenario: a new tenant's scenario, clock, devices and channels (the start scenario is put in force
    ///     afterwards).
    package init(
        mode: TenantMode,
        limit: Int = 1000,
        primary: ActiveScenario,
        startScenario: Scenario? = nil,
        makeScenario: @escaping @Sendable () -> ActiveScenario
    ) {
        self.resolver = TenantResolver(mode: mode)
        self.limit = max(1, limit)
        self.tenants = Mutex([TenantResolver.unidentified: primary])
        self.makeScenario = makeScenario
        self.startScenario = Mutex(startScenario)
    }

    /// The tenant's scenario, made with the start scenario if the tenant is new (or the overflow's, past ``limit``).
    package func scenario(for tenant: String) -> ActiveScenario {
        if let known = existing(tenant) { return known }
        let start = startScenario.withLock { $0 }
        return tenants.withLock { tenants in
            if let known = tenants[tenant] { return known }
            let name = tenants.count < limit || tenant == Self.overflow ? tenant : Self.overflow
            if let known = tenants[name] { return known }
            let made = makeScenario()
            if let shared = adopted.withLock({ $0.removeValue(forKey: name) }) {
                made.apply(shared.scenario, version: shared.version)
            } else if let start {
                made.replace(with: start)
            }
            // From now on, not before: a tenant's start is not a change to share.
            let changes = self.changes
            made.changes.observe { change in
                guard case .scenario(let source, let version) = change else { return }
                changes.report(.tenantScenario(tenant: name, source: source, version: version))
            }
            made.devices.changes.observe { changes.report(.inTenant(name, $0)) }
            made.channels.changes.observe { changes.report(.inTenant(name, $0)) }
            tenants[name] = made
            return made
        }
    }

    /// The name a tenant is kept under: itself, or ``overflow`` when it came past ``limit``.
    package func keptName(of tenant: String) -> String {
        tenants.withLock { tenants in
            tenants[tenant] != nil || tenants.count < limit ? tenant : Self.overflow
        }
    }

    /// The tenant's scenario if it has one yet.
    package func existing(_ tenant: String) -> ActiveScenario? {
        tenants.withLock { $0[tenant] }
    }

    /// Every tenant met, by name.
    package var all: [(name: String, scenario: ActiveScenario)] {
        tenants.withLock { $0.map { (name: $0.key, scenario: $0.value) } }.sorted { $0.name < $1.name }
    }

    /// Every tenant back to its start state (`POST /admin/reset` for all), and no start scenario for new ones.
    package func resetAll() {
        startScenario.withLock { $0 = nil }
        for tenant in all {
            tenant.scenario.resetToStart()
            tenant.scenario.channels.removeAll()
        }
    }

    /// Puts the scenario another replica put in force for `tenant`, at its version, without reporting it again;
    /// for a tenant not met here yet, it is the scenario the tenant starts with. An older version than the
    /// tenant's changes nothing.
    package func adopt(_ scenario: Scenario, version: UInt64, forTenant tenant: String) {
        // Under the tenants' lock, so a tenant made meanwhile either finds the scenario waiting or gets it here.
        tenants.withLock { tenants in
            if let known = tenants[tenant] {
                if version > known.version { known.apply(scenario, version: version) }
            } else {
                adopted.withLock { adopted in
                    if version > adopted[tenant]?.version ?? 0 { adopted[tenant] = (scenario, version) }
                }
            }
        }
    }

    /// Applies a device or channel change another replica made in `tenant`, without reporting it again; a tenant
    /// not met here yet is made for it (with the start scenario, or the one another replica put in force).
    package func apply(_ change: SharedStateChange, inTenant tenant: String) {
        let scenario = scenario(for: tenant)
        scenario.devices.apply(change)
        scenario.channels.apply(change)
    }

    /// The version of `tenant`'s scenario here, or of the one waiting for it; `0` for none.
    package func scenarioVersion(ofTenant tenant: String) -> UInt64 {
        existing(tenant)?.version ?? adopted.withLock { $0[tenant]?.version ?? 0 }
    }

    /// Puts `scenario` in force for every tenant, and for the ones still to come.
    package func replaceAll(with scenario: Scenario) {
        startScenario.withLock { $0 = scenario }
        for tenant in all { tenant.scenario.replace(with: scenario) }
    }
}
