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
    public let authentication: AuthenticationPolicy
    public let environment: APNsEnvironment
    /// SETTINGS_MAX_CONCURRENT_STREAMS once a connection is no longer limited to one stream.
    public let maxConcurrentStreams: UInt32
    public let store: NotificationStore
    private let now: @Sendable () -> Int64

    /// - Parameter now: the wall clock in milliseconds since the epoch (injectable for tests).
    public init(
        validator: RequestValidator = RequestValidator(),
        authentication: AuthenticationPolicy = AuthenticationPolicy(mode: .none),
        environment: APNsEnvironment = .development,
        maxConcurrentStreams: UInt32 = 1000,
        store: NotificationStore,
        now: @escaping @Sendable () -> Int64 = NotificationProcessor.systemMilliseconds
    ) {
        self.validator = validator
        self.authentication = authentication
        self.environment = environment
        self.maxConcurrentStreams = maxConcurrentStreams
        self.store = store
        self.now = now
    }

    public static let systemMilliseconds: @Sendable () -> Int64 = {
        Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// A fresh authentication state for a new connection.
    public func makeAuthState(certificate: CertificateIdentity?) -> ConnectionAuthState {
        ConnectionAuthState(certificate: certificate, mode: authentication.mode)
    }

    /// SETTINGS_MAX_CONCURRENT_STREAMS for a new connection: 1 until a valid token arrives, as APNs does.
    public func initialMaxConcurrentStreams(for auth: ConnectionAuthState) -> UInt32 {
        auth.isStreamGated ? 1 : maxConcurrentStreams
    }

    /// Decides the answer to `request`, records it, and returns the decision.
    public func process(
        _ request: APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        auth: inout ConnectionAuthState,
        ids: inout APNsIDGenerator
    ) -> ProviderDecision {
        let headers = APNsHeaders(request.headers)
        let receivedAt = now()
        var actions: [ConnectionAction] = []
        var authRecord: AuthenticationRecord?

        var verdict = validator.routeVerdict(request)
        if verdict == .accepted {
            let outcome = auth.authenticate(
                authorization: headers.authorization,
                policy: authentication,
                environment: environment,
                nowMilliseconds: receivedAt
            )
            authRecord = outcome.record
            if outcome.wrongCertificateEnvironment {
                return refuseWrongCertificateEnvironment(request, streamID: streamID, connection: connection, at: receivedAt, auth: outcome.record)
            }
            if let rejection = outcome.rejection {
                verdict = .rejected(rejection)
            } else {
                verdict = validator.validate(
                    request,
                    headers: headers,
                    defaultTopic: outcome.defaultTopic,
                    allowedTopics: outcome.allowedTopics
                )
            }
            if outcome.raiseStreamLimit { actions.append(.setMaxConcurrentStreams(maxConcurrentStreams)) }
        }

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
                response: response,
                authentication: authRecord
            )
        )
        return ProviderDecision(response: response, actions: actions)
    }

    /// APNs answers a certificate for the other environment with GOAWAY `{"reason":"BadCertificateEnvironment"}`
    /// (last stream 0, so the request counts as unprocessed), then a bare GOAWAY, then closes.
    private func refuseWrongCertificateEnvironment(
        _ request: APNsRequest,
        streamID: Int32,
        connection: ConnectionInfo,
        at receivedAt: Int64,
        auth: AuthenticationRecord
    ) -> ProviderDecision {
        let debugData = Reason.badCertificateEnvironment.body()
        store.append(
            RecordedNotification(
                sequence: 0,
                receivedAt: receivedAt,
                connectionID: connection.id,
                streamID: streamID,
                request: request,
                response: nil,
                abandonedBecause: "connection refused with GOAWAY \(debugData): the client certificate is not for \(environment.rawValue)",
                authentication: auth
            )
        )
        return ProviderDecision(
            response: nil,
            actions: [
                .goAway(errorCode: 0, lastStreamID: 0, debugData: debugData),
                .goAway(errorCode: 0, lastStreamID: 0, debugData: ""),
                .close,
            ]
        )
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
