import Foundation

/// Which connection a request came in on, as far as the decision and the recording need to know.
public struct ConnectionInfo: Sendable, Equatable {
    public var id: UInt64
    public var remoteAddress: String?

    public init(id: UInt64, remoteAddress: String? = nil) {
        self.id = id
        self.remoteAddress = remoteAddress
    }
}

/// Turns a complete request into APNs' answer and records both: the one place where the provider endpoint
/// decides. It is called on the connection's event loop, so it does no blocking work.
public final class NotificationProcessor: Sendable {
    public let validator: RequestValidator
    public let environment: APNsEnvironment
    public let store: NotificationStore
    private let now: @Sendable () -> Int64

    /// - Parameter now: the wall clock in milliseconds since the epoch (injectable for tests).
    public init(
        validator: RequestValidator = RequestValidator(),
        environment: APNsEnvironment = .development,
        store: NotificationStore,
        now: @escaping @Sendable () -> Int64 = NotificationProcessor.systemMilliseconds
    ) {
        self.validator = validator
        self.environment = environment
        self.store = store
        self.now = now
    }

    public static let systemMilliseconds: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Decides the answer to `request`, records it, and returns the answer.
    public func process(
        _ request: APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        ids: inout APNsIDGenerator
    ) -> APNsResponse {
        let headers = APNsHeaders(request.headers)
        let verdict = validator.validate(request, headers: headers)
        let receivedAt = now()

        // Echo a well-formed apns-id exactly as sent (aioapns matches answers by it); otherwise make one.
        let apnsID: String
        if let sent = headers.apnsID, RequestValidator.isCanonicalUUID(sent) {
            apnsID = sent
        } else {
            apnsID = ids.next(uppercase: true)
        }
        var response = APNsResponse(status: 200, apnsID: apnsID)
        if environment == .development { response.uniqueID = ids.next(uppercase: false) }

        switch verdict {
        case .accepted:
            break
        case .rejected(let reason):
            response.status = reason.status
            response.reason = reason
            if reason.carriesTimestamp { response.timestamp = receivedAt }
        case .headerListTooLarge:
            response.status = 431
        }

        store.append(
            RecordedNotification(
                sequence: 0,
                receivedAt: receivedAt,
                connectionID: connection.id,
                streamID: streamID,
                request: request,
                response: response
            )
        )
        return response
    }

    /// Records a request that ended without an answer, so no request that reached the HTTP layer goes unseen.
    public func recordAbandoned(_ request: APNsRequest, streamID: Int32, connection: ConnectionInfo, because: String) {
        store.append(
            RecordedNotification(
                sequence: 0,
                receivedAt: now(),
                connectionID: connection.id,
                streamID: streamID,
                request: request,
                response: nil,
                abandonedBecause: because
            )
        )
    }
}
