import AsyncHTTPClient
import Foundation
import NIOCore
import NIOSSL

/// A tiny provider, as a team's own code would look: alerts over HTTP/2 with a provider token, and no more pushes
/// to a device token once APNs has answered `410 Unregistered` for it. Nothing here knows about the mock: a test
/// gives it the mock's address and credentials where production gives Apple's.
actor NotificationSender {
    enum Outcome: Equatable {
        case delivered(apnsID: String)
        /// APNs said the app is gone (410): the token is dropped.
        case unregistered(since: Date)
        case rejected(status: Int, reason: String)
        /// Not sent: the token was dropped earlier.
        case skipped
    }

    private let client: HTTPClient
    private let baseURL: String
    private let topic: String
    private let providerToken: @Sendable () throws -> String
    private(set) var droppedTokens: Set<String> = []

    init(baseURL: String, tlsConfiguration: TLSConfiguration, topic: String, providerToken: @escaping @Sendable () throws -> String) {
        var configuration = HTTPClient.Configuration(tlsConfiguration: tlsConfiguration)
        configuration.httpVersion = .automatic
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.baseURL = baseURL
        self.topic = topic
        self.providerToken = providerToken
    }

    func send(alert: String, to deviceToken: String) async throws -> Outcome {
        guard !droppedTokens.contains(deviceToken) else { return .skipped }
        var request = HTTPClientRequest(url: "\(baseURL)/3/device/\(deviceToken)")
        request.method = .POST
        request.headers.add(name: "authorization", value: "bearer \(try providerToken())")
        request.headers.add(name: "apns-topic", value: topic)
        request.headers.add(name: "apns-push-type", value: "alert")
        let payload = try JSONSerialization.data(withJSONObject: ["aps": ["alert": alert]])
        request.body = .bytes(ByteBuffer(bytes: payload))
        let response = try await client.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 4096)
        if response.status == .ok {
            return .delivered(apnsID: response.headers.first(name: "apns-id") ?? "")
        }
        let answer = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any] ?? [:]
        let reason = answer["reason"] as? String ?? ""
        if response.status.code == 410, let milliseconds = answer["timestamp"] as? Double {
            droppedTokens.insert(deviceToken)
            return .unregistered(since: Date(timeIntervalSince1970: milliseconds / 1000))
        }
        return .rejected(status: Int(response.status.code), reason: reason)
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}
