import APNsMock
import Foundation
import Hummingbird

/// The simulated devices' side of the admin API: a device's state, what it received and what is stored for it, the
/// Console's look-up of one push, and the mock's clock.
extension AdminRoutes {
    static func addDeliveryRoutes(to router: RouteListingRouter<AdminRequestContext>, _ base: AdminContext) {
        router.put("/admin/devices/:token/state") { request, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            let body = try await request.body.collect(upTo: 64 * 1024)
            let newState: DeviceState
            do throws(DeviceJSONError) {
                newState = try Device.state(json: Array(body.readableBytesView))
            } catch {
                return json(["error": error.message, "parameter": error.field ?? "body"], status: .badRequest)
            }
            do throws(DeviceStateRefused) {
                guard let device = try admin.scenario.devices.setState(token: token, to: newState) else { return noDevice(token) }
                return json(device.jsonObject())
            } catch {
                return json(["error": error.message, "parameter": "state"], status: .conflict)
            }
        }

        router.post("/admin/devices/:token/subscriptions") { request, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            let body = try await request.body.collect(upTo: 64 * 1024)
            let channelID: String
            do throws(AdminInputError) {
                channelID = try Self.subscription(json: Array(body.readableBytesView))
            } catch {
                return badInput(error)
            }
            do throws(DeviceSubscriptionRefused) {
                guard let device = try admin.scenario.devices.subscribe(token: token, toChannel: channelID) else { return noDevice(token) }
                return json(device.jsonObject())
            } catch {
                return json(["error": error.message, "parameter": "channel"], status: .notFound)
            }
        }

        router.delete("/admin/devices/:token/subscriptions/:channel") { _, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            guard let device = admin.scenario.devices.unsubscribe(token: token, fromChannel: pathParameter(context, "channel")) else { return noDevice(token) }
            return json(device.jsonObject())
        }

        router.get("/admin/devices/:token/received") { request, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            guard let received = admin.scenario.devices.received(token: token) else { return noDevice(token) }
            var hidePreviews = false
            for (name, value) in parameters(of: request) {
                guard name == "hidePreviews" || name == "hide-previews" else {
                    return badInput(AdminInputError(parameter: name, message: "unknown parameter; expected hidePreviews"))
                }
                guard let parsed = Bool(value) else {
                    return badInput(AdminInputError(parameter: name, message: "'\(value)' is not true or false"))
                }
                hidePreviews = parsed
            }
            // Notification Center as the device shows it: built from what reached it, newest first.
            let delivered = received.reversed().compactMap(\.recording)
            return json([
                "token": token,
                "received": received.map { $0.jsonObject() },
                "preview": NotificationCenterPreview(recordings: delivered, hidePreviews: hidePreviews, now: admin.scenario.devices.clock.now()).jsonObject(),
            ])
        }

        router.get("/admin/devices/:token/received/wait") { request, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            var (count, timeout) = (1, defaultWait)
            do throws(AdminInputError) {
                for (name, value) in parameters(of: request) where try !waitOption(name, value, count: &count, timeout: &timeout) {
                    throw AdminInputError(parameter: name, message: "unknown parameter; expected count or timeout")
                }
            } catch {
                return badInput(error)
            }
            guard admin.scenario.devices.device(token: token) != nil else { return noDevice(token) }
            let satisfied = await admin.scenario.devices.waitForDeliveries(token: token, count: count, timeout: timeout)
            let received = admin.scenario.devices.received(token: token) ?? []
            var body: [String: Any] = [
                "token": token,
                "received": received.map { $0.jsonObject() },
                "stored": (admin.scenario.devices.stored(token: token) ?? []).map { $0.jsonObject() },
            ]
            guard satisfied else {
                body["error"] = "timed out: \(received.count) of \(count) pushes reached the device"
                return json(body, status: .requestTimeout)
            }
            return json(body)
        }

        router.get("/admin/devices/:token/stored") { _, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            guard let stored = admin.scenario.devices.stored(token: token) else { return noDevice(token) }
            return json(["token": token, "stored": stored.map { $0.jsonObject() }])
        }

        router.get("/admin/devices/:token/deliveries") { _, context -> Response in
            let admin = base.scoped(context)
            let token = pathParameter(context, "token")
            guard let logs = admin.scenario.devices.deliveries(token: token) else { return noDevice(token) }
            return json(["token": token, "deliveries": logs.map { $0.jsonObject() }])
        }

        router.get("/admin/delivery") { request, context -> Response in
            let admin = base.scoped(context)
            var id: String?
            for (name, value) in parameters(of: request) {
                // The list filters' spelling (`apns-id`), and the Console's field names.
                guard ["apns-unique-id", "apns-id", "apnsUniqueId", "apnsId"].contains(name) else {
                    return badInput(AdminInputError(parameter: name, message: "unknown parameter; expected apns-unique-id or apns-id"))
                }
                id = value
            }
            guard let id, !id.isEmpty else {
                return badInput(AdminInputError(parameter: "apns-unique-id", message: "give the apns-unique-id (or apns-id) of the push to look up"))
            }
            if let object = admin.deliveryObject(id: id) { return json(object) }
            return json(["error": "no push with apns-unique-id or apns-id \(id) was accepted (or its log is no longer kept)"], status: .notFound)
        }

        router.get("/admin/clock") { _, context -> Response in
            let admin = base.scoped(context)
            return json(admin.scenario.devices.clock.jsonObject())
        }

        router.post("/admin/clock") { request, context -> Response in
            let admin = base.scoped(context)
            let body = try await request.body.collect(upTo: 64 * 1024)
            do throws(AdminInputError) {
                try ClockChange(json: Array(body.readableBytesView)).apply(to: admin.scenario.devices)
            } catch {
                return badInput(error)
            }
            return json(admin.scenario.devices.clock.jsonObject())
        }
    }

    /// `{"channel": "<channel id>"}`.
    private static func subscription(json bytes: [UInt8]) throws(AdminInputError) -> String {
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw AdminInputError(parameter: "body", message: "expected a JSON object such as {\"channel\": \"dHN0LXNyY2gtY2hubA==\"}")
        }
        if let unknown = object.keys.sorted().first(where: { $0 != "channel" }) {
            throw AdminInputError(parameter: unknown, message: "unknown key; expected channel")
        }
        guard let channel = object["channel"] as? String, !channel.isEmpty else {
            throw AdminInputError(parameter: "channel", message: "is required: the channel id (apns-channel-id)")
        }
        return channel
    }

    private static func noDevice(_ token: String) -> Response {
        json(["error": "no device with token \(token)"], status: .notFound)
    }
}
