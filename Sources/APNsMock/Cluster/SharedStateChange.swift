import Synchronization

/// A change to the state that replicas sharing a store keep in common: the device registry's and the broadcast
/// channels' entries made at run time, and the scenario in force, the `unidentified` tenant's bare and every other
/// tenant's wrapped in ``inTenant(_:_:)``. Scenario-declared devices and channels are not changes of their own:
/// every replica derives them from the shared scenario.
package enum SharedStateChange: Sendable, Equatable {
    case devicePut(Device)
    case deviceRemoved(token: String)
    case devicesCleared
    case channelPut(BroadcastChannel)
    case channelRemoved(id: String)
    case channelsCleared
    /// A scenario put in force (`source` empty: none), with the version it took.
    case scenario(source: String, version: UInt64)
    /// A scenario put in force for one tenant (`--tenants`), with the version it took in that tenant.
    case tenantScenario(tenant: String, source: String, version: UInt64)
    /// A device or channel change made in one tenant (`--tenants`) other than `unidentified`.
    indirect case inTenant(String, SharedStateChange)
}

/// Where a registry reports its changes, so a cluster store can pass them to the other replicas. A change applied
/// from another replica is not reported again (the registries' `apply`), so none echoes back.
package final class SharedStateObserver: Sendable {
    private let observer = Mutex<(@Sendable (SharedStateChange) -> Void)?>(nil)

    package init() {}

    /// Sets the one observer (a cluster's publisher); called outside the registry's lock, on whatever thread made the
    /// change (an event loop for channel management): it must only queue.
    package func observe(_ observer: @escaping @Sendable (SharedStateChange) -> Void) {
        self.observer.withLock { $0 = observer }
    }

    func report(_ change: SharedStateChange) {
        guard let observer = observer.withLock({ $0 }) else { return }
        observer(change)
    }
}
