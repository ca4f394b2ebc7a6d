/// A connection-level fault a rule asks the transport to carry out, besides or instead of answering.
package enum ScenarioFault: Sendable, Equatable {
    /// Send GOAWAY (error code, last stream id, debug data), then close the connection. `lastStreamID == nil`:
    /// the highest stream already answered, so the triggering stream counts as unprocessed unless it was answered
    /// first. Without a scripted answer the stream is not answered.
    case goAway(errorCode: UInt32, lastStreamID: Int32?, debugData: String)
    /// Answer the stream with RST_STREAM and this error code instead of HEADERS.
    case resetStream(errorCode: UInt32)
    /// Close the TCP connection at once, without a frame.
    case drop
    /// Never answer the stream (the client gives up by itself).
    case hang
    /// Send SETTINGS with this SETTINGS_MAX_CONCURRENT_STREAMS, before the answer.
    case setMaxConcurrentStreams(UInt32)
    /// Close the connection (GOAWAY NO_ERROR, then close) once the answer is written.
    case closeAfterAnswer
}

/// Something the connection must do besides (or instead of) answering a stream.
package enum ConnectionAction: Sendable, Equatable {
    /// Send GOAWAY with this error code, last stream id (`nil`: the last one processed) and debug data.
    case goAway(errorCode: UInt32, lastStreamID: Int32?, debugData: String)
    /// Close the TCP connection once pending frames are written.
    case close
    /// Send a SETTINGS frame with a new SETTINGS_MAX_CONCURRENT_STREAMS.
    case setMaxConcurrentStreams(UInt32)
    /// Close the TCP connection at once, without another frame (a scripted network fault).
    case drop
}

/// What happens to the request's own stream when it gets no answer.
package enum StreamFault: Sendable, Equatable {
    /// RST_STREAM with this HTTP/2 error code.
    case reset(errorCode: UInt32)
    /// Never answer; the stream stays open until the client gives up or the connection closes.
    case hang
}

/// What a scripted fault does, in one place: how it shows (``note``, ``jsonEntry``) and what it asks of the
/// request's stream and of its connection (``apply(to:)``). A new fault is a case here, its spelling in
/// `ScenarioParser+Rules.swift`, and, when it needs a connection behaviour no ``ConnectionAction`` has yet,
/// that behaviour in the provider connection's state machine; then its test.
extension ScenarioFault {
    /// What faults ask of one request's stream and connection, gathered from a rule step's faults in order.
    package struct Effects: Sendable, Equatable {
        package var streamFault: StreamFault?
        package var actions: [ConnectionAction] = []

        package init() {}
    }

    /// Adds what this fault asks for.
    package func apply(to effects: inout Effects) {
        switch self {
        case .goAway(let errorCode, let lastStreamID, let debugData):
            effects.actions += [.goAway(errorCode: errorCode, lastStreamID: lastStreamID, debugData: debugData), .close]
        case .resetStream(let errorCode):
            effects.streamFault = .reset(errorCode: errorCode)
        case .drop:
            effects.actions.append(.drop)
        case .hang:
            effects.streamFault = .hang
        case .setMaxConcurrentStreams(let value):
            effects.actions.append(.setMaxConcurrentStreams(value))
        case .closeAfterAnswer:
            effects.actions += [.goAway(errorCode: 0, lastStreamID: nil, debugData: ""), .close]
        }
    }

    /// What the recording says was done (`faults`, and why there was no answer).
    package var note: String {
        switch self {
        case .goAway(let errorCode, _, let debugData):
            "GOAWAY \(HTTP2ErrorCodeName.name(of: errorCode))\(debugData.isEmpty ? "" : " " + debugData), then close"
        case .resetStream(let errorCode): "RST_STREAM \(HTTP2ErrorCodeName.name(of: errorCode))"
        case .drop: "connection dropped"
        case .hang: "no answer (hang)"
        case .setMaxConcurrentStreams(let value): "SETTINGS_MAX_CONCURRENT_STREAMS \(value)"
        case .closeAfterAnswer: "GOAWAY NO_ERROR and close after the answer"
        }
    }

    /// The fault as a rule step's key and value, as `GET /admin/scenario` shows it (the scenario file's spelling).
    package var jsonEntry: (key: String, value: Any) {
        switch self {
        case .goAway(let errorCode, let lastStreamID, let debugData):
            var goAway: [String: Any] = ["errorCode": HTTP2ErrorCodeName.jsonValue(errorCode), "debugData": debugData]
            if let lastStreamID { goAway["lastStreamId"] = Int(lastStreamID) }
            return ("goaway", goAway)
        case .resetStream(let errorCode): return ("reset", ["errorCode": HTTP2ErrorCodeName.jsonValue(errorCode)])
        case .drop: return ("drop", true)
        case .hang: return ("hang", true)
        case .setMaxConcurrentStreams(let limit): return ("maxConcurrentStreams", Int(limit))
        case .closeAfterAnswer: return ("closeConnection", true)
        }
    }
}

/// HTTP/2 error codes (RFC 9113 §7) by name, for scenario files and for showing a scenario.
/// RFC 9113's error code names, for scenario files, recordings and logs.
package enum HTTP2ErrorCodeName {
    static let all: [(name: String, code: UInt32)] = [
        ("NO_ERROR", 0x0), ("PROTOCOL_ERROR", 0x1), ("INTERNAL_ERROR", 0x2), ("FLOW_CONTROL_ERROR", 0x3),
        ("SETTINGS_TIMEOUT", 0x4), ("STREAM_CLOSED", 0x5), ("FRAME_SIZE_ERROR", 0x6), ("REFUSED_STREAM", 0x7),
        ("CANCEL", 0x8), ("COMPRESSION_ERROR", 0x9), ("CONNECT_ERROR", 0xA), ("ENHANCE_YOUR_CALM", 0xB),
        ("INADEQUATE_SECURITY", 0xC), ("HTTP_1_1_REQUIRED", 0xD),
    ]

    /// The code for a name, case-insensitively.
    /// `CANCEL` for 8; `0x1f` for codes RFC 9113 does not name.
    package static func name(of code: UInt32) -> String {
        all.first(where: { $0.code == code })?.name ?? "0x" + String(code, radix: 16)
    }

    static func code(named name: String) -> UInt32? {
        let upper = name.uppercased()
        return all.first(where: { $0.name == upper })?.code
    }

    /// The name of a code, or the number for codes without one.
    static func jsonValue(_ code: UInt32) -> Any {
        if let name = all.first(where: { $0.code == code })?.name { return name }
        return Int(code)
    }
}
