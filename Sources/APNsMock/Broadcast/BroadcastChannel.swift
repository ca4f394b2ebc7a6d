/// A broadcast channel for Live Activities (iOS 18+): made on APNs' channel-management service, subscribed to by
/// the app's Live Activities, addressed by broadcasts (`apns-channel-id`).
package struct BroadcastChannel: Sendable, Equatable {
    /// What APNs keeps of the channel's messages; fixed when the channel is made.
    package enum StoragePolicy: Int, Sendable, Equatable {
        /// 0, No Message Stored: a higher publishing budget; broadcasts must carry `apns-expiration: 0`.
        case noMessageStored = 0
        /// 1, Most Recent Message Stored: the newest message is kept (up to 8 hours).
        case mostRecentMessageStored = 1

        /// A JSON policy value: the number 0 or 1 (not `true`, not `1.5`), as APNs' create and the admin API take it.
        package init?(json value: JSONValue?) {
            guard case .number(let number)? = value, let whole = Int(exactly: number) else { return nil }
            self.init(rawValue: whole)
        }
    }

    /// Base64, as APNs makes them (random, never reused); clients must not assume a size.
    package var id: String
    package var bundleID: String
    package var environment: APNsEnvironment
    package var storagePolicy: StoragePolicy
    /// Milliseconds since the epoch.
    package var createdAt: Int64

    package init(id: String, bundleID: String, environment: APNsEnvironment, storagePolicy: StoragePolicy, createdAt: Int64) {
        self.id = id
        self.bundleID = bundleID
        self.environment = environment
        self.storagePolicy = storagePolicy
        self.createdAt = createdAt
    }

    /// The admin API's form.
    package func jsonObject() -> [String: Any] {
        [
            "id": id, "bundleId": bundleID, "environment": environment.rawValue,
            "messageStoragePolicy": storagePolicy.rawValue, "createdAt": ISO8601Time.format(milliseconds: createdAt),
        ]
    }
}
