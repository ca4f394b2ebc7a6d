import APNsMock
import Foundation

/// A `POST /admin/clock` body: `{"advance": "31d"}` (a duration, as scenario files write it, or milliseconds), or
/// `{"to": "2027-01-01T00:00:00Z"}` (a time: milliseconds, ISO 8601, or relative such as `+2h`); the clock only
/// moves forward, and the devices with it.
struct ClockChange {
    enum Change {
        case advance(Int64)
        case to(String)
    }

    var change: Change

    init(json bytes: [UInt8]) throws(AdminInputError) {
        let parsed: Any
        do {
            parsed = try JSONSerialization.jsonObject(with: Data(bytes), options: [])
        } catch {
            throw AdminInputError(parameter: "body", message: "the body is not JSON; expected {\"advance\": \"31d\"} or {\"to\": \"2027-01-01T00:00:00Z\"}")
        }
        guard let object = parsed as? [String: Any], object.count == 1, let (key, value) = object.first else {
            throw AdminInputError(parameter: "body", message: "expected one of {\"advance\": \"31d\"} or {\"to\": \"2027-01-01T00:00:00Z\"}")
        }
        switch key {
        case "advance":
            if let text = value as? String {
                guard case .success(let milliseconds) = ScenarioTimeSyntax.parseSignedDuration(text) else {
                    throw AdminInputError(parameter: key, message: "'\(text)' is not a duration such as 31d, 2h or 90s")
                }
                change = .advance(milliseconds)
            } else if let number = value as? NSNumber, !(value is Bool), number.doubleValue.rounded() == number.doubleValue,
                abs(number.doubleValue) < 9.0e15
            {
                change = .advance(number.int64Value)
            } else {
                throw AdminInputError(parameter: key, message: "must be a duration such as \"31d\" or a number of milliseconds")
            }
        case "to":
            if let text = value as? String {
                change = .to(text)
            } else if let number = value as? NSNumber, !(value is Bool) {
                change = .to(number.stringValue)
            } else {
                throw AdminInputError(parameter: key, message: "must be a time: milliseconds since the epoch, an ISO 8601 date, or +2h")
            }
        default:
            throw AdminInputError(parameter: key, message: "unknown key; expected advance or to")
        }
    }

    func apply(to devices: DeviceRegistry) throws(AdminInputError) {
        switch change {
        case .advance(let milliseconds):
            do throws(ClockChangeRefused) {
                try devices.advanceClock(by: milliseconds)
            } catch {
                throw AdminInputError(parameter: "advance", message: error.message)
            }
        case .to(let text):
            guard let time = ScenarioTimeSyntax.parseTime(text, relativeTo: devices.clock.now()) else {
                throw AdminInputError(parameter: "to", message: "'\(text)' is not a time: milliseconds since the epoch, an ISO 8601 date, or +2h")
            }
            do throws(ClockChangeRefused) {
                try devices.advanceClock(to: time)
            } catch {
                throw AdminInputError(parameter: "to", message: error.message)
            }
        }
    }
}
