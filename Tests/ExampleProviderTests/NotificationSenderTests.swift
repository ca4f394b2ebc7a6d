import APNsMockTesting
import Foundation
import Testing

/// The README's example: a provider's test with the mock in the same process.
@Suite struct NotificationSenderTests {
    @Test func sendsAnAlertAndStopsSendingToAnUninstalledApp() async throws {
        try await MockAPNs.withRunningServer { mock in
            let sender = NotificationSender(
                baseURL: mock.providerURL.absoluteString,
                tlsConfiguration: try mock.credentials.clientTLSConfiguration(),
                topic: "com.example.app",
                providerToken: { try mock.providerToken() }
            )
            let token = "a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2c3d4e5f6a1b2"

            // The push arrives as the provider meant it.
            guard case .delivered(let apnsID) = try await sender.send(alert: "Your order shipped", to: token) else {
                Issue.record("the first push was not delivered")
                return
            }
            let push = try #require(try await mock.notification(apnsID: apnsID))
            #expect(push.payload?["aps"]?["alert"]?.string == "Your order shipped")
            #expect(push.header("apns-push-type") == "alert")
            #expect(push.warnings.isEmpty)

            // The user uninstalls the app: APNs answers 410 with the time, and the provider drops the token.
            try await mock.setScenario(yaml: """
                name: uninstalled
                devices:
                  - name: phone
                    token: \(token)
                    topic: com.example.app
                    unregisteredAt: 2026-01-31T12:00:00Z
                """)
            #expect(try await sender.send(alert: "Still there?", to: token) == .unregistered(since: Date(timeIntervalSince1970: 1_769_860_800)))
            #expect(try await sender.send(alert: "Hello again", to: token) == .skipped)
            #expect(await sender.droppedTokens == [token])

            // Exactly two pushes reached APNs: the second got 410, the third was never sent.
            let all = try await mock.notifications(matching: NotificationFilter(deviceToken: token))
            #expect(all.map(\.status) == [200, 410])
            #expect(all.last?.reason == "Unregistered")
            try await sender.shutdown()
        }
    }
}
