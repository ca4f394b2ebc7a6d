/// A connection-level fault a rule asks the transport to carry out, besides or instead of answering.
public enum ScenarioFault: Sendable, Equatable {
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

/// HTTP/2 error codes (RFC 9113 §7) by name, for scenario files and for showing a scenario.
/// RFC 9113's error code names, for scenario files, recordings and logs.
public enum HTTP2ErrorCodeName {
    static let all: [(name: String, code: UInt32)] = [
        ("NO_ERROR", 0x0), ("PROTOCOL_ERROR", 0x1), ("INTERNAL_ERROR", 0x2), ("FLOW_CONTROL_ERROR", 0x3),
        ("SETTINGS_TIMEOUT", 0x4), ("STREAM_CLOSED", 0x5), ("FRAME_SIZE_ERROR", 0x6), ("REFUSED_STREAM", 0x7),
        ("CANCEL", 0x8), ("COMPRESSION_ERROR", 0x9), ("CONNECT_ERROR", 0xA), ("ENHANCE_YOUR_CALM", 0xB),
        ("INADEQUATE_SECURITY", 0xC), ("HTTP_1_1_REQUIRED", 0xD),
    ]

    /// The code for a name, case-insensitively.
    /// `CANCEL` for 8; `0x1f` for codes RFC 9113 does not name.
    public static func name(of code: UInt32) -> String {
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
