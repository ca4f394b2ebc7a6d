import APNsMockTesting
import Foundation
import Testing

/// docs/devices.md's three worked examples through the testing module's public API, with AsyncHTTPClient as the
/// provider over HTTP/2; and the rest of the device API a test uses.
@Suite struct SimulatedDeviceExamplesTests {
    @Test func anOfflinePhoneNeverSeesAPushWithExpirationZero() async throws {
        try await MockAPNs.withRunningServer { mock in
            let phone = MockAPNsTests.deviceToken()
            try await mock.register(MockDevice(token: phone, topic: Provider.topic, state: .offline))
            var uniqueID: String?
            try await Provider.with(mock) { (provider: Provider) async throws in
                let answer = try await provider.push(to: phone, payload: #"{"aps":{"alert":"Your table is ready"}}"#, headers: [("apns-expiration", "0")])
                #expect(answer.status == 200)
                uniqueID = answer.uniqueID
            }
            try await mock.device(phone).comeOnline()
            let id = try #require(uniqueID)
            let log = try #require(try await mock.delivery(id: id))
            #expect(log.states == [.received, .discardedExpired])
            #expect(log.events.map(\.console) == ["Received by APNs", "Discarded – Expired"])
            #expect(try await mock.device(phone).received().isEmpty)
        }
    }

    @Test func fiveUpdatesWhileOfflineArriveOnceAsTheNewest() async throws {
        try await MockAPNs.withRunningServer { mock in
            let phone = MockAPNsTests.deviceToken()
            try await mock.register(MockDevice(token: phone, topic: Provider.topic))
            try await mock.device(phone).goOffline()
            var ids: [String] = []
            try await Provider.with(mock) { (provider: Provider) async throws in
                for goal in 1...5 {
                    let answer = try await provider.push(to: phone, payload: #"{"aps":{"alert":"Score: \#(goal)-0"}}"#)
                    #expect(answer.status == 200)
                    ids.append(try #require(answer.apnsID))
                }
            }
            #expect(try await mock.device(phone).stored().map(\.apnsId) == [ids[4]])
            async let arrived = mock.device(phone).waitForDelivery(count: 1, timeout: .seconds(10))
            try await mock.device(phone).comeOnline()
            let received = try await arrived
            #expect(received.map(\.apnsId) == [ids[4]])
            #expect(received.first?.states == [.received, .storedOffline, .deliveredFromStorage])
            for id in ids.dropLast() {
                #expect(try await mock.delivery(id: id)?.state == .discardedCoalesced)
            }
        }
    }

    @Test func anAppRemovedYesterdayAnswers410WithTheTimeOfItsRemoval() async throws {
        try await MockAPNs.withRunningServer { mock in
            let phone = MockAPNsTests.deviceToken()
            try await mock.register(MockDevice(token: phone, topic: Provider.topic, state: .offline))
            try await Provider.with(mock) { (provider: Provider) async throws in
                let waiting = try await provider.push(to: phone, payload: #"{"aps":{"alert":"Come back!"}}"#)
                #expect(waiting.status == 200)
                let removed = try await mock.device(phone).removeApp()
                let removedAt = try #require(removed.unregisteredAt)
                let moved = try await mock.clock.advance(by: .seconds(86_400))
                #expect(moved.offset == "1d")
                let answer = try await provider.push(to: phone, payload: #"{"aps":{"alert":"Still there?"}}"#)
                #expect(answer.status == 410)
                #expect(answer.body == #"{"reason":"Unregistered","timestamp":\#(removedAt)}"#)
                let waitingID = try #require(waiting.apnsID)
                #expect(try await mock.delivery(id: waitingID)?.state == .discardedUnregisteredFromStorage)
                #expect(try await mock.devices().first?.state == .appRemoved)
            }
            await #expect(throws: AdminRequestFailed.self) { try await mock.device(phone).comeOnline() }
        }
    }

    @Test func thirtyOneDaysInStorageIsAOneSecondTest() async throws {
        try await MockAPNs.withRunningServer { mock in
            let phone = MockAPNsTests.deviceToken()
            try await mock.register(MockDevice(token: phone, topic: Provider.topic, state: .offline))
            var id: String?
            try await Provider.with(mock) { (provider: Provider) async throws in
                id = try await provider.push(to: phone, payload: #"{"aps":{"alert":"Hi"}}"#).apnsID
            }
            let before = try await mock.clock.now()
            try await mock.clock.advance(by: .seconds(31 * 86_400))
            let sent = try #require(id)
            let log = try #require(try await mock.delivery(id: sent))
            #expect(log.states == [.received, .storedOffline, .discardedExpired])
            let last = try #require(log.events.last)
            #expect(last.at - log.receivedAt == 30 * 86_400_000)
            #expect(try await mock.clock.now().offsetMilliseconds == before.offsetMilliseconds + 31 * 86_400_000)
            try await mock.reset()
            #expect(try await mock.clock.now().offsetMilliseconds == 0)
        }
    }

    @Test func aWaitThatTimesOutSaysWhatIsStored() async throws {
        try await MockAPNs.withRunningServer { mock in
            let phone = MockAPNsTests.deviceToken()
            try await mock.register(MockDevice(token: phone, topic: Provider.topic, state: .offline))
            try await Provider.with(mock) { (provider: Provider) async throws in
                #expect(try await provider.push(to: phone, payload: #"{"aps":{"alert":"Hi"}}"#).status == 200)
            }
            do {
                _ = try await mock.device(phone).waitForDelivery(count: 1, timeout: .milliseconds(200))
                Issue.record("the wait returned though the phone is offline")
            } catch let timeout as DeliveryWaitTimeout {
                #expect(timeout.received.isEmpty)
                #expect(timeout.stored.map(\.state) == [.storedOffline])
                #expect(timeout.description.contains("Stored – Device Offline"))
            }
        }
    }

    @Test func theAdminClientSpeaksTheSameDeviceAPIOverHTTP() async throws {
        try await MockAPNs.withRunningServer { mock in
            let admin = mock.adminClient
            let phone = MockAPNsTests.deviceToken()
            try await admin.register(MockDevice(token: phone, topic: Provider.topic))
            #expect(try await admin.device(phone).enterLowPower().state == .lowPower)
            var ids: [String] = []
            try await Provider.with(mock) { (provider: Provider) async throws in
                let now = try await provider.push(to: phone, payload: #"{"aps":{"alert":"now"}}"#)
                let later = try await provider.push(to: phone, payload: #"{"aps":{"alert":"later"}}"#, headers: [("apns-priority", "5")])
                ids += [try #require(now.apnsID), try #require(later.apnsID)]
            }
            #expect(try await admin.device(phone).received().map(\.apnsId) == [ids[0]])
            #expect(try await admin.device(phone).stored().map(\.state) == [.storedPower])
            try await admin.device(phone).comeOnline()
            let received = try await admin.device(phone).waitForDelivery(count: 2)
            #expect(received.map(\.apnsId) == ids)
            #expect(try await admin.delivery(id: ids[1])?.states == [.received, .storedPower, .deliveredFromStorage])
            #expect(try await admin.delivery(id: "no-such-push") == nil)
            #expect(try await admin.clock.advance(by: .seconds(60)).offsetMilliseconds == 60_000)
            #expect(try await mock.clock.now().offsetMilliseconds == 60_000)
            // The mock in process answers the same as over HTTP.
            #expect(try await mock.delivery(id: ids[1]) == (try await admin.delivery(id: ids[1])))
        }
    }
}
