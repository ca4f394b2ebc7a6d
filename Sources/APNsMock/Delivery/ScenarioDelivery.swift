/// A scenario's `delivery:` settings: the store-and-forward rules of its simulated devices where they differ from
/// the command line's (`--stored-per-app`, `--max-storage`, `--background-budget`, `--low-priority-interval`). Each
/// left out keeps the command line's value.
package struct ScenarioDelivery: Sendable, Equatable {
    package var storedPerApp: Int?
    /// Milliseconds.
    package var maximumStorage: Int64?
    /// `.some(nil)`: no budget (`backgroundBudget: none`).
    package var backgroundBudget: Int??
    /// Milliseconds.
    package var lowPriorityInterval: Int64?

    package init(storedPerApp: Int? = nil, maximumStorage: Int64? = nil, backgroundBudget: Int?? = nil, lowPriorityInterval: Int64? = nil) {
        self.storedPerApp = storedPerApp
        self.maximumStorage = maximumStorage
        self.backgroundBudget = backgroundBudget
        self.lowPriorityInterval = lowPriorityInterval
    }

    /// `base` with these settings over it.
    package func applied(to base: DeliveryPolicy) -> DeliveryPolicy {
        DeliveryPolicy(
            storedPerApp: storedPerApp ?? base.storedPerApp,
            maximumStorage: maximumStorage ?? base.maximumStorage,
            backgroundBudget: backgroundBudget ?? base.backgroundBudget,
            lowPriorityInterval: lowPriorityInterval ?? base.lowPriorityInterval,
            recordsPerDevice: base.recordsPerDevice,
            recordsInAll: base.recordsInAll
        )
    }

    /// The keys of the scenario file, in the order the guide lists them.
    static let keys = ["storedPerApp", "maxStorage", "backgroundBudget", "lowPriorityInterval"]
}
