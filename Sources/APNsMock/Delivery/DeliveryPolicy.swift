/// The store-and-forward rules' settings where Apple gives no number (each a ❓ of the delivery facts, with the
/// default named in docs/devices.md).
package struct DeliveryPolicy: Sendable, Equatable {
    /// Pushes kept per device and app while it cannot take them; a newer one replaces the oldest. Apple says "the
    /// most recent" (1) and elsewhere mentions a queue.
    package var storedPerApp: Int
    /// How long a push without `apns-expiration` is kept, in milliseconds (30 days).
    package var maximumStorage: Int64
    /// Background pushes (`apns-push-type: background`) a device takes per 24 hours; `nil`: no budget. Apple
    /// gives no number.
    package var backgroundBudget: Int?
    /// Priority-1 pushes wait for the next multiple of this (milliseconds since the epoch) and arrive together.
    package var lowPriorityInterval: Int64
    /// Finished delivery logs kept per device (the oldest go first); stored pushes are always kept.
    package var recordsPerDevice: Int
    /// Finished delivery logs kept in all, across a registry's devices: each device keeps at most its share
    /// (this divided by the number of devices, at least one), so memory stays bounded however many devices are
    /// pushed to. The server sets it to `--max-recorded`: logs are kept about as long as their recordings.
    package var recordsInAll: Int

    /// A day, in milliseconds: a background budget's window.
    package static let day: Int64 = 86_400_000

    package init(
        storedPerApp: Int = 1,
        maximumStorage: Int64 = 30 * DeliveryPolicy.day,
        backgroundBudget: Int? = nil,
        lowPriorityInterval: Int64 = 15 * 60_000,
        recordsPerDevice: Int = 1000,
        recordsInAll: Int = 100_000
    ) {
        self.storedPerApp = max(1, storedPerApp)
        self.maximumStorage = max(0, maximumStorage)
        self.backgroundBudget = backgroundBudget.map { max(0, $0) }
        self.lowPriorityInterval = max(1, lowPriorityInterval)
        self.recordsPerDevice = max(1, recordsPerDevice)
        self.recordsInAll = max(1, recordsInAll)
    }
}
