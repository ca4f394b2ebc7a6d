import Synchronization

/// The tenants the mock has met (`--tenants`), each with its own scenario, clock, devices and channels (an
/// ``ActiveScenario``); recordings carry their tenant and the admin API filters on it.
///
/// A tenant comes into being the first time a request or an admin call names it, with the start scenario
/// (`--scenario`) in force. At most ``limit`` are kept apart, so a provider sending a new team ID, topic or host
/// name with each request cannot grow the mock without bound; past it, new names share the tenant ``overflow``.
public final class TenantDirectory: Sendable {
    public let resolver: TenantResolver
    public var mode: TenantMode { resolver.mode }
    /// How many tenants are kept apart.
    public let limit: Int
    /// Where tenants beyond ``limit`` go.
    public static let overflow = "overflow"

    private let tenants: Mutex<[String: ActiveScenario]>
    private let makeScenario: @Sendable () -> ActiveScenario
    private let startScenario: Mutex<Scenario?>

    /// - Parameters:
    ///   - primary: the scenario of ``TenantResolver/unidentified``, the one tenant when the mode is `off`.
    ///   - makeScenario: a new tenant's scenario, clock, devices and channels (the start scenario is put in force
    ///     afterwards).
    public init(
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
    public func scenario(for tenant: String) -> ActiveScenario {
        if let known = existing(tenant) { return known }
        let start = startScenario.withLock { $0 }
        return tenants.withLock { tenants in
            if let known = tenants[tenant] { return known }
            let name = tenants.count < limit || tenant == Self.overflow ? tenant : Self.overflow
            if let known = tenants[name] { return known }
            let made = makeScenario()
            if let start { made.replace(with: start) }
            tenants[name] = made
            return made
        }
    }

    /// The name a tenant is kept under: itself, or ``overflow`` when it came past ``limit``.
    public func keptName(of tenant: String) -> String {
        tenants.withLock { tenants in
            tenants[tenant] != nil || tenants.count < limit ? tenant : Self.overflow
        }
    }

    /// The tenant's scenario if it has one yet.
    public func existing(_ tenant: String) -> ActiveScenario? {
        tenants.withLock { $0[tenant] }
    }

    /// Whether some tenant simulates a device: without one, accepted pushes need not be handed to any.
    public var simulatesDevices: Bool {
        tenants.withLock { tenants in tenants.values.contains { !$0.devices.isEmpty } }
    }

    /// Every tenant met, by name.
    public var all: [(name: String, scenario: ActiveScenario)] {
        tenants.withLock { $0.map { (name: $0.key, scenario: $0.value) } }.sorted { $0.name < $1.name }
    }

    /// Every tenant back to its start state (`POST /admin/reset` for all), and no start scenario for new ones.
    public func resetAll() {
        startScenario.withLock { $0 = nil }
        for tenant in all {
            tenant.scenario.resetToStart()
            tenant.scenario.channels.removeAll()
        }
    }

    /// Puts `scenario` in force for every tenant, and for the ones still to come.
    public func replaceAll(with scenario: Scenario) {
        startScenario.withLock { $0 = scenario }
        for tenant in all { tenant.scenario.replace(with: scenario) }
    }
}
