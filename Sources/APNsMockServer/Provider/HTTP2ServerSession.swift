import APNsMock
import CNGHTTP2
#if canImport(Glibc)
import Glibc
#else
import Darwin
#endif

/// The HTTP/2 SETTINGS the server announces. Defaults are what APNs was seen sending (2021–22).
package struct HTTP2Settings: Sendable, Equatable {
    package var headerTableSize: UInt32 = 4096
    package var maxConcurrentStreams: UInt32 = 1000
    package var initialWindowSize: UInt32 = 65535
    package var maxFrameSize: UInt32 = 16384
    package var maxHeaderListSize: UInt32 = 8000

    package init() {}
}

/// libnghttp2's own limits that can end a connection, set on purpose rather than left at the library's defaults.
package struct HTTP2SessionLimits: Sendable, Equatable {
    /// Incoming RST_STREAM frames allowed in a burst, and regained per second (a token bucket). libnghttp2's
    /// default (1,000, then 33/s) ends a connection with GOAWAY once a client has reset 1,000 streams quickly, and
    /// curl resets every stream it has already received an answer on: with the default, one curl connection could
    /// send only about 1,000 pushes. APNs' own limit is not known; a mock answers each stream at once, so rapid
    /// resets cost it nothing, and the default here lets any real client go on for ever.
    package var streamResetBurst: UInt64 = 1_000_000
    package var streamResetRatePerSecond: UInt64 = 1_000_000
    /// SETTINGS and PING acknowledgements queued but not yet sent (a client that floods them without reading).
    /// libnghttp2's default, kept on purpose: no real client comes near it.
    package var maxOutboundAcks = 1000
    /// Entries in one SETTINGS frame (libnghttp2's default, kept: HTTP/2 defines 6 settings).
    package var maxSettingsEntries = 32
    /// CONTINUATION frames after one HEADERS (libnghttp2's default, kept: 8 × 16 KiB is far past the 8,000-byte
    /// header list APNs allows).
    package var maxContinuations = 8

    package init() {}
}

/// Per-request size limits applied while bytes arrive, before any decision is made.
package struct HTTP2RequestLimits: Sendable, Equatable {
    /// Body bytes kept for the recording; the rest is counted and discarded.
    package var keptBodyBytes: Int = 16 * 1024
    /// A body larger than this is answered (413) and its stream reset at once, instead of read to the end.
    package var discardedBodyBound: Int = 16 * 1024 * 1024

    package init() {}
}

/// Something the session learned while reading that the connection handler must act on.
///
/// Each names its stream's state rather than carrying a copy of the request, which with its buffers is the larger
/// part of a stream; the session reuses a stream's state only once no event holds it. A `.finished` event carries
/// the outcome, moved out of the stream, so that it travels with the event to the one place that records it.
enum HTTP2SessionEvent {
    /// A request is complete (or its body passed the hard bound): it needs an answer.
    case request(HTTP2ServerSession.Stream)
    /// A stream ended before its request did: record it, there is nothing to answer.
    case abandoned(HTTP2ServerSession.Stream, because: String)
    /// A decided answer's fate is known: its last frame was handed to the socket layer, or the stream or the
    /// connection closed before it could be (then `delivery` says why). The outcome kept for it (`keep`) comes
    /// with the event, moved out of the stream.
    case finished(HTTP2ServerSession.Stream, RecordingOutcome, AnswerDelivery)
    /// libnghttp2 itself ended the connection with GOAWAY (a limit of its own, or a protocol error by the peer).
    case libraryGoAway(errorCode: UInt32, lastStreamID: Int32)
}

/// Why a session cannot go on.
enum HTTP2SessionError: Error, Equatable {
    /// The peer did not start with the HTTP/2 preface; `looksLikeHTTP1` when it sent an HTTP/1 request line.
    case notHTTP2(looksLikeHTTP1: Bool)
    /// libnghttp2 reported a fatal error (its code and message).
    case fatal(code: Int32, message: String)
}

/// One server-side libnghttp2 session: bytes in, request events out, answers in, bytes out.
///
/// It knows nothing of sockets or of NIO; `ProviderConnectionHandler` feeds it. libnghttp2 calls back
/// into this object synchronously from `receive` and `drainOutput`, through an unretained pointer; that is
/// sound because the C session is deleted in `close()` and `deinit`, before this object goes away.
final class HTTP2ServerSession {
    /// One stream: its request as it arrives, and what its answer's recording needs.
    final class Stream {
        fileprivate(set) var id: Int32
        /// The request as it arrives: its pseudo-headers and headers as bytes (no `String` per field), its body,
        /// its size and whether its header list passed the bound. Read in place through `withRequest`.
        fileprivate var received = APNsRequest(
            head: RequestHead(reservingCapacity: 256), payload: [], payloadSize: 0, headerListTooLarge: false
        )
        fileprivate var headerListSize = 0
        fileprivate var requestEnded = false
        /// An event asking for this stream's answer has been handed out.
        fileprivate var awaitingAnswer = false
        fileprivate var answered = false
        /// Answered before the client finished sending: reset the stream once the answer is out.
        fileprivate var resetAfterAnswer = false
        fileprivate var responseBody: [UInt8] = []
        fileprivate var responseBodyOffset = 0
        /// What the decided answer's recording needs (`keep`), the answer included: it leaves with the `.finished`
        /// event once its fate is known.
        fileprivate var outcome: RecordingOutcome?
        /// `outcome` waits for the answer's last frame to be sent, or the stream to close without it.
        fileprivate var awaitingDelivery = false
        /// Closed by libnghttp2 or with the session: answers and outcomes are no longer taken.
        fileprivate var isClosed = false

        fileprivate init(id: Int32) {
            self.id = id
        }

        /// Calls `body` with the request as received so far (all of it once the request has ended), in place: not
        /// copied, since a copy retained and released both buffers, nor moved out and back, which copied the whole
        /// request several times per push. `inout` because it is what reaches the stored value without a copy: a
        /// `borrowing` parameter or a `_read` accessor on this class's property still copied it, retains included
        /// (bench/counts shows them). `body` only reads it.
        func withRequest<Result>(_ body: (inout APNsRequest) -> Result) -> Result {
            body(&received)
        }

        /// Ready for another stream, with the buffers' capacity kept (a small body's only: a large one is let go).
        fileprivate func reuse(id: Int32) {
            self.id = id
            received.head.removeAll()
            headerListSize = 0
            received.headerListTooLarge = false
            if received.payload.capacity > Self.keptBodyCapacity {
                received.payload = []
            } else {
                received.payload.removeAll(keepingCapacity: true)
            }
            received.payloadSize = 0
            requestEnded = false
            awaitingAnswer = false
            answered = false
            resetAfterAnswer = false
            responseBody = []
            responseBodyOffset = 0
            outcome = nil
            awaitingDelivery = false
            isClosed = false
        }

        private static let keptBodyCapacity = 4096
    }

    private var session: OpaquePointer?
    /// libnghttp2's allocations, recycled (see `MemoryPool`); `deinit` and `close()` delete the session first.
    private let memory: MemoryPool
    private var streams = StreamTable<Stream>()
    /// Closed streams' state, reused by the next ones: allocating it and its buffers for every stream, and
    /// freeing them in bursts, was several percent of a request in profiles (glibc's bins churned). At most
    /// `maxSpareStreams`, and only as many as were open at once.
    private var spareStreams: [Stream] = []
    private static let maxSpareStreams = 128
    /// The last stream touched: requests arrive as HEADERS then DATA on one stream, so this saves most lookups.
    /// Unretained, so that reading it costs no retain and release (several callbacks per request): `streams`
    /// holds the state, and this is cleared whenever the state leaves `streams`.
    private var cachedStream: Unmanaged<Stream>?
    private var events: [HTTP2SessionEvent] = []
    /// Streams answered before their request ended (`Stream.resetAfterAnswer`): while there are none, a sent
    /// frame needs no stream lookup.
    private var streamsToResetAfterAnswer = 0
    /// The MAX_CONCURRENT_STREAMS value to write into the initial SETTINGS frame instead of libnghttp2's.
    private var pendingSettingsPatch: UInt32?
    private let settings: HTTP2Settings
    private let limits: HTTP2RequestLimits
    private let tracker: ConnectionTracker?
    /// The open streams the tracker last heard of from this session (`publishOpenStreams`).
    private var publishedOpenStreams = 0
    /// GOAWAY frames this side submitted and libnghttp2 has not sent yet: any other GOAWAY it sends is its own.
    private var goAwaysSubmitted = 0
    /// Streams whose outcome awaits its answer's delivery: while there are none, a sent frame needs no stream lookup.
    private var streamsAwaitingDelivery = 0

    init(
        settings: HTTP2Settings,
        limits: HTTP2RequestLimits,
        sessionLimits: HTTP2SessionLimits = HTTP2SessionLimits(),
        tracker: ConnectionTracker? = nil,
        memoryPoolLimit: Int = MemoryPool.defaultLimit
    ) {
        memory = MemoryPool(limit: memoryPoolLimit)
        self.settings = settings
        self.limits = limits
        self.tracker = tracker
        var callbacks: OpaquePointer?
        nghttp2_session_callbacks_new(&callbacks)
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.install(callbacks)
        var option: OpaquePointer?
        nghttp2_option_new(&option)
        defer { nghttp2_option_del(option) }
        // Our own SETTINGS go first, with the values APNs uses, not libnghttp2's defaults.
        nghttp2_option_set_no_recv_client_magic(option, 0)
        // Closed streams are kept (libnghttp2's default), so that a frame on a stream that has closed gets the
        // connection error RFC 9113 §5.1 asks for (GOAWAY STREAM_CLOSED) instead of silence, as h2spec checks.
        // Dropping them (no_closed_streams) saved nothing measurable: conformance wins.
        nghttp2_option_set_no_closed_streams(option, 0)
        // Every libnghttp2 limit that can end a connection is set here on purpose (HTTP2SessionLimits); when one
        // fires, libnghttp2 sends a GOAWAY of its own, which the handler logs.
        nghttp2_option_set_stream_reset_rate_limit(option, sessionLimits.streamResetBurst, sessionLimits.streamResetRatePerSecond)
        nghttp2_option_set_max_outbound_ack(option, sessionLimits.maxOutboundAcks)
        nghttp2_option_set_max_settings(option, sessionLimits.maxSettingsEntries)
        nghttp2_option_set_max_continuations(option, sessionLimits.maxContinuations)
        var allocator = memory.allocator
        nghttp2_session_server_new3(&session, callbacks, Unmanaged.passUnretained(self).toOpaque(), option, &allocator)
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    /// Queues the server's SETTINGS frame; call once, before the first `drainOutput`.
    /// - Parameter advertisedMaxConcurrentStreams: the SETTINGS_MAX_CONCURRENT_STREAMS the client is told when it
    ///   differs from the configured one (1 on a connection awaiting its first valid token, as APNs does).
    ///
    /// libnghttp2 refuses (RST_STREAM REFUSED_STREAM) streams beyond the limit it sent even before the client
    /// can have read it, so a client that starts a burst on a new connection (aioapns does) would lose streams
    /// that APNs serves. So libnghttp2 is given the configured limit, and only the value written on the wire is
    /// the advertised one: the client is told "1" and well-behaved clients wait, but a racing stream is not
    /// punished. The value is patched in the first frame libnghttp2 writes, which is this SETTINGS frame.
    func submitInitialSettings(advertisedMaxConcurrentStreams: UInt32? = nil) {
        if let advertised = advertisedMaxConcurrentStreams, advertised != settings.maxConcurrentStreams {
            pendingSettingsPatch = advertised
        }
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_HEADER_TABLE_SIZE.rawValue), value: settings.headerTableSize),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                value: settings.maxConcurrentStreams
            ),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue), value: settings.initialWindowSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_FRAME_SIZE.rawValue), value: settings.maxFrameSize),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue), value: settings.maxHeaderListSize),
        ]
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
    }

    /// Queues a SETTINGS frame that changes SETTINGS_MAX_CONCURRENT_STREAMS.
    func submitMaxConcurrentStreams(_ value: UInt32) {
        var entry = nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: value)
        _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entry, 1)
    }

    /// Feeds received bytes to libnghttp2 and returns what they completed.
    func receive(_ bytes: UnsafeRawBufferPointer) throws(HTTP2SessionError) -> [HTTP2SessionEvent] {
        guard let session, let base = bytes.baseAddress, bytes.count > 0 else { return takeEvents() }
        let result = nghttp2_session_mem_recv(session, base.assumingMemoryBound(to: UInt8.self), bytes.count)
        if result < 0 {
            let code = Int32(result)
            if code == NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue {
                throw .notHTTP2(looksLikeHTTP1: Self.looksLikeHTTP1RequestLine(bytes))
            }
            throw .fatal(code: code, message: String(cString: nghttp2_strerror(code)))
        }
        publishOpenStreams()
        return takeEvents()
    }

    /// Copies pending output frames into `sink`, up to about `maxBytes`; returns how many bytes it gave.
    func drainOutput(maxBytes: Int, into sink: (UnsafeRawBufferPointer) -> Void) throws(HTTP2SessionError) -> Int {
        guard let session else { return 0 }
        var total = 0
        while total < maxBytes {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 {
                let code = Int32(count)
                throw .fatal(code: code, message: String(cString: nghttp2_strerror(code)))
            }
            guard count > 0, let data else { break }
            if let patch = pendingSettingsPatch {
                pendingSettingsPatch = nil
                var frame = Array(UnsafeBufferPointer(start: data, count: count))
                Self.patchMaxConcurrentStreams(in: &frame, to: patch)
                frame.withUnsafeBytes { sink($0) }
            } else {
                sink(UnsafeRawBufferPointer(start: data, count: count))
            }
            total += count
        }
        publishOpenStreams()
        return total
    }

    /// Tells the tracker how many streams this session opened or closed since it last did: once per read and per
    /// write, not per stream. The tracker's counter is shared by every event loop, and two atomic updates of it
    /// per request moved its cache line between the cores for every push. Between a read and its write the count
    /// is behind by that batch's streams at most.
    private func publishOpenStreams() {
        let delta = streams.count - publishedOpenStreams
        guard delta != 0 else { return }
        publishedOpenStreams = streams.count
        tracker?.addOpenStreams(delta)
    }

    /// Events produced while draining output (streams closing once their answer is out).
    func takeEvents() -> [HTTP2SessionEvent] {
        if events.isEmpty { return [] }
        var taken: [HTTP2SessionEvent] = []
        swap(&taken, &events)
        // Room for a batch like this one, so the next batch does not grow its array step by step.
        events.reserveCapacity(taken.count)
        return taken
    }

    /// Whether libnghttp2 has finished with the connection (GOAWAY exchanged, or a fatal error).
    var isFinished: Bool {
        guard let session else { return true }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    /// Ends the session: every stream whose request never ended is reported as abandoned.
    func close(because reason: String) -> [HTTP2SessionEvent] {
        for stream in streams.allValues.sorted(by: { $0.id < $1.id }) {
            stream.isClosed = true
            if stream.awaitingDelivery {
                stream.awaitingDelivery = false
                events.append(finished(stream, .notSent(because: reason)))
            } else if !stream.answered, !stream.awaitingAnswer {
                events.append(.abandoned(stream, because: reason))
            }
        }
        streamsAwaitingDelivery = 0
        tracker?.addOpenStreams(-publishedOpenStreams)
        publishedOpenStreams = 0
        streams.removeAll()
        spareStreams.removeAll()
        streamsToResetAfterAnswer = 0
        cachedStream = nil
        if let session {
            nghttp2_session_del(session)
            self.session = nil
        }
        memory.trim(keepingBytes: 0)
        return takeEvents()
    }

    /// Bytes libnghttp2 has freed into this session's memory pool and not taken again.
    var pooledMemoryBytes: Int { memory.pooledBytes }

    /// Streams open now: a connection with any is not silent, whatever the client sends.
    var openStreams: Int { streams.count }

    // MARK: Answers and connection control

    /// Keeps what a stream's recording needs, its answer included, until the answer's last frame is sent or the
    /// stream closes first; either way a `.finished` event hands it back. Returns the outcome, keeping nothing,
    /// when the stream has closed; `nil` when the stream keeps it.
    func keep(_ outcome: consuming RecordingOutcome, for stream: Stream) -> RecordingOutcome? {
        guard session != nil, !stream.isClosed else { return outcome }
        if !stream.awaitingDelivery { streamsAwaitingDelivery += 1 }
        stream.awaitingDelivery = true
        stream.outcome = consume outcome
        return nil
    }

    /// The `.finished` event for a stream whose kept outcome's fate is known: the outcome moves into the event.
    private func finished(_ stream: Stream, _ delivery: AnswerDelivery) -> HTTP2SessionEvent {
        .finished(stream, stream.outcome.take() ?? .abandoned(at: 0, because: "no outcome was kept"), delivery)
    }

    /// What an answer handed to libnghttp2 said, for the metrics.
    struct SubmittedAnswer {
        var status: Int
        var reason: Reason?
    }

    /// Queues the answer the stream keeps (`keep`): a lone HEADERS frame for a 200, HEADERS + one DATA frame
    /// otherwise. `nil` when the stream is closed, keeps no answer, or libnghttp2 refused it.
    ///
    /// Takes the stream its request event named rather than its ID: a stream held by an event is not reused for
    /// another ID (`beginHeaders` takes only spares nothing else holds), and an open one is the table's.
    func respond(to stream: Stream) -> SubmittedAnswer? {
        guard stream.outcome.isSome, stream.outcome!.response.isSome else { return nil }
        // Read in place (`inout` reaches the stored answer without copying its strings).
        return submit(&stream.outcome!.response!, on: stream)
    }

    private func submit(_ response: inout APNsResponse, on stream: Stream) -> SubmittedAnswer? {
        guard let session, !stream.isClosed, !stream.answered else { return nil }
        let streamID = stream.id
        stream.answered = true
        lastAnsweredStreamID = max(lastAnsweredStreamID, streamID)
        stream.resetAfterAnswer = !stream.requestEnded
        if stream.resetAfterAnswer { streamsToResetAfterAnswer += 1 }
        if let body = response.body {
            stream.responseBody = Array(body.utf8)
        }
        let uniqueID = response.uniqueIDValue ?? .text("")
        let hasUniqueID = response.uniqueIDValue != nil
        let hasBody = !stream.responseBody.isEmpty
        var status = Self.statusText(response.status)
        var submitted: Int32 = 0
        // The broadcast API names its ID apns-request-id, and a channel create adds apns-channel-id.
        let (idName, idHeader): (StaticString, IDHeaderNames) = response.idHeader == .apnsID
            ? ("apns-id", .apnsID) : ("apns-request-id", .requestID)
        var channelID = response.channelID ?? ""
        let hasChannelID = response.channelID != nil
        let idIndexing = firstUse(of: idHeader)
        let uniqueIndexing = hasUniqueID && firstUse(of: .uniqueID)
        let channelIndexing = hasChannelID && firstUse(of: .channelID)
        response.apnsIDValue.withUTF8 { idBytes in
            uniqueID.withUTF8 { uniqueBytes in
                status.withUTF8 { statusBytes in
                    channelID.withUTF8 { channelBytes in
                    withUnsafeTemporaryAllocation(of: nghttp2_nv.self, capacity: 5) { nva in
                        var count = 0
                        nva[count] = Self.header(":status", statusBytes)
                        count += 1
                        if hasBody {
                            nva[count] = Self.header("content-type", Self.jsonContentType)
                            count += 1
                        }
                        // Every answer's IDs are new, so they are literals that are never indexed: each one
                        // added to the HPACK table would only push out entries worth keeping, on both sides. Only
                        // a connection's first answer with an ID header indexes it, which puts the header's
                        // name in both tables (see `IDHeaderNames`).
                        nva[count] = Self.header(idName, idBytes, neverIndexed: !idIndexing)
                        count += 1
                        if hasUniqueID {
                            nva[count] = Self.header("apns-unique-id", uniqueBytes, neverIndexed: !uniqueIndexing)
                            count += 1
                        }
                        if hasChannelID {
                            nva[count] = Self.header("apns-channel-id", channelBytes, neverIndexed: !channelIndexing)
                            count += 1
                        }
                        if hasBody {
                            var provider = nghttp2_data_provider(
                                source: nghttp2_data_source(ptr: nil),
                                read_callback: Self.readResponseBody
                            )
                            submitted = nghttp2_submit_response(session, streamID, nva.baseAddress, count, &provider)
                        } else {
                            // No data provider: HEADERS carries END_STREAM, and no empty DATA frame follows
                            // (aioapns parses every DATA frame as JSON).
                            submitted = nghttp2_submit_response(session, streamID, nva.baseAddress, count, nil)
                        }
                    }
                    }
                }
            }
        }
        return submitted == 0 ? SubmittedAnswer(status: response.status, reason: response.reason) : nil
    }

    /// The ID headers an answer carries, by name.
    ///
    /// A literal that is never indexed still names its header by an index when the name is in the HPACK table,
    /// and libnghttp2's encoder looks for it there. So the first answer with each name adds it (one entry of
    /// about 80 bytes, with that answer's value), and every later answer names it with one byte instead of a
    /// Huffman-coded string: a 200's HEADERS frame with both IDs is 60 or 61 bytes instead of 75, and neither side
    /// codes or decodes the names again. A client whose table is too small for the entries gets the names as
    /// strings, as before.
    struct IDHeaderNames: OptionSet {
        let rawValue: UInt8
        static let apnsID = Self(rawValue: 1 << 0)
        static let requestID = Self(rawValue: 1 << 1)
        static let uniqueID = Self(rawValue: 1 << 2)
        static let channelID = Self(rawValue: 1 << 3)
    }

    /// The ID header names an answer on this connection has already added to the HPACK table.
    private var indexedIDNames: IDHeaderNames = []

    /// Whether this is the connection's first answer with `name`, to be indexed; notes it.
    private func firstUse(of name: IDHeaderNames) -> Bool {
        indexedIDNames.insert(name).inserted
    }

    /// Resets a stream (RST_STREAM) instead of answering it.
    func resetStream(_ streamID: Int32, errorCode: UInt32) {
        guard let session, let stream = stream(streamID), !stream.answered else { return }
        stream.answered = true
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, errorCode)
    }

    /// Marks a stream as deliberately left unanswered, so closing it later is not reported as abandoned.
    func leaveUnanswered(_ streamID: Int32) {
        stream(streamID)?.answered = true
    }

    /// The highest stream id answered so far: a GOAWAY naming it tells the client every later stream was not
    /// processed and may be retried.
    private(set) var lastAnsweredStreamID: Int32 = 0

    /// Queues a GOAWAY with an error code and optional debug data (APNs puts `{"reason":…}` there).
    /// - Parameter lastStreamID: `nil` names the last stream answered.
    func goAway(errorCode: UInt32 = 0, lastStreamID: Int32? = nil, debugData: String = "") {
        guard let session else { return }
        let last = lastStreamID ?? lastAnsweredStreamID
        var debug = debugData
        let result = debug.withUTF8 { data in
            nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), last, errorCode, data.baseAddress, data.count)
        }
        if result == 0 { goAwaysSubmitted += 1 }
    }

    /// After a fatal error while reading: queues a GOAWAY naming the last stream processed, with the error code
    /// the failure calls for, so the client learns why the connection ends (libnghttp2 queues none for some of
    /// them). A GOAWAY libnghttp2 already queued makes this a no-op.
    func terminate(afterFatal code: Int32) {
        guard let session else { return }
        let errorCode: UInt32
        switch code {
        case NGHTTP2_ERR_FLOODED.rawValue, NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue: errorCode = NGHTTP2_ENHANCE_YOUR_CALM.rawValue
        case NGHTTP2_ERR_HEADER_COMP.rawValue: errorCode = NGHTTP2_COMPRESSION_ERROR.rawValue
        default: errorCode = NGHTTP2_PROTOCOL_ERROR.rawValue
        }
        if nghttp2_session_terminate_session(session, errorCode) == 0 { goAwaysSubmitted += 1 }
    }

    /// A GOAWAY frame (RFC 9113 §6.8) with last stream 0 and this error code, as bytes: for a peer that never sent
    /// the HTTP/2 preface, where libnghttp2 has no session state to write one from.
    static func goAwayFrame(errorCode: UInt32) -> [UInt8] {
        [0, 0, 8, 0x07, 0, 0, 0, 0, 0, 0, 0, 0, 0]
            + [UInt8(truncatingIfNeeded: errorCode >> 24), UInt8(truncatingIfNeeded: errorCode >> 16),
               UInt8(truncatingIfNeeded: errorCode >> 8), UInt8(truncatingIfNeeded: errorCode)]
    }

    /// What a client that speaks HTTP/1.1 gets: a readable answer saying to use HTTP/2, instead of binary frames.
    static let http1VersionNotSupported: [UInt8] = {
        let message = "apns-mock speaks HTTP/2 only, as APNs does: use an HTTP/2 client (ALPN h2, e.g. curl --http2).\n"
        return Array(
            ("HTTP/1.1 505 HTTP Version Not Supported\r\ncontent-type: text/plain\r\nconnection: close\r\n"
                + "content-length: \(message.utf8.count)\r\n\r\n\(message)").utf8
        )
    }()

    /// The highest stream id libnghttp2 has processed (received) so far.
    var lastReceivedStreamID: Int32 {
        guard let session else { return 0 }
        return nghttp2_session_get_last_proc_stream_id(session)
    }

    // MARK: Building requests

    private func stream(_ id: Int32) -> Stream? {
        if let cached = cachedStream, cached._withUnsafeGuaranteedRef({ $0.id == id }) { return cached.takeUnretainedValue() }
        let found = streams[id]
        cachedStream = found.map { .passUnretained($0) }
        return found
    }

    /// Calls `body` with the stream's state if it is open, the cached one without a retain: for the callbacks
    /// that run several times per request.
    @inline(__always)
    private func withOpenStream(_ id: Int32, _ body: (Stream) -> Void) {
        if let cached = cachedStream, cached._withUnsafeGuaranteedRef({ $0.id == id }) {
            cached._withUnsafeGuaranteedRef(body)
        } else if let found = streams.unretained(id) {
            cachedStream = found
            found._withUnsafeGuaranteedRef(body)
        }
    }

    fileprivate func beginHeaders(streamID: Int32) {
        let stream = takeSpareStream(for: streamID) ?? Stream(id: streamID)
        cachedStream = .passUnretained(stream)
        // Moved from the spares into the table: a local kept beside it cost a retain and a release per stream.
        streams.insert(stream, for: streamID)
    }

    /// A closed stream's state, ready for `id`, when a spare is free.
    private func takeSpareStream(for id: Int32) -> Stream? {
        while var spare = spareStreams.popLast() {
            // A spare still named by an event not yet handled (closed and reopened within one read) is left to
            // that event; taking it would change the request the event stands for.
            guard isKnownUniquelyReferenced(&spare) else { continue }
            spare.reuse(id: id)
            return spare
        }
        return nil
    }

    fileprivate func header(streamID: Int32, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        withOpenStream(streamID) { header(of: $0, name: name, value: value) }
    }

    private func header(of stream: Stream, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) {
        // RFC 9113 §6.5.2: each field counts its name, its value and 32 bytes of overhead.
        stream.headerListSize += name.count + value.count + 32
        if stream.headerListSize > Int(settings.maxHeaderListSize) {
            stream.received.headerListTooLarge = true
        }
        if name.first == UInt8(ascii: ":") {
            switch name.count {
            case 5 where Self.equals(name, ":path"): stream.received.head.setPseudo(.path, value)
            case 7 where Self.equals(name, ":method"): stream.received.head.setPseudo(.method, value)
            case 7 where Self.equals(name, ":scheme"): stream.received.head.setPseudo(.scheme, value)
            case 10 where Self.equals(name, ":authority"): stream.received.head.setPseudo(.authority, value)
            default: break
            }
            return
        }
        // Past the advertised limit the headers are not kept: the answer (431) does not need them.
        guard !stream.received.headerListTooLarge else { return }
        stream.received.head.appendHeader(name: name, value: value)
    }

    fileprivate func dataChunk(streamID: Int32, _ data: UnsafeBufferPointer<UInt8>) {
        withOpenStream(streamID) { dataChunk(of: $0, data) }
    }

    private func dataChunk(of stream: Stream, _ data: UnsafeBufferPointer<UInt8>) {
        guard !stream.answered else { return }
        let room = limits.keptBodyBytes - stream.received.payload.count
        if room > 0 {
            stream.received.payload.append(contentsOf: UnsafeBufferPointer(rebasing: data.prefix(room)))
        }
        stream.received.payloadSize += data.count
        if stream.received.payloadSize > limits.discardedBodyBound, !stream.requestEnded, !stream.awaitingAnswer {
            // Answer (413) without waiting for the end: the client may never stop.
            stream.awaitingAnswer = true
            events.append(.request(stream))
        }
    }

    fileprivate func requestEnded(streamID: Int32) {
        withOpenStream(streamID) { stream in
            stream.requestEnded = true
            guard !stream.answered, !stream.awaitingAnswer else { return }
            stream.awaitingAnswer = true
            events.append(.request(stream))
        }
    }

    fileprivate func frameSent(streamID: Int32, endedStream: Bool) {
        guard endedStream, streamsAwaitingDelivery > 0 || streamsToResetAfterAnswer > 0, let open = streams.unretained(streamID) else { return }
        // Borrowed from the table, which keeps it through this call (nothing here closes a stream).
        open._withUnsafeGuaranteedRef { frameSent(on: $0) }
    }

    private func frameSent(on stream: Stream) {
        let streamID = stream.id
        if stream.awaitingDelivery {
            // The answer's last frame is in the bytes about to be written: it counts as sent.
            stream.awaitingDelivery = false
            streamsAwaitingDelivery -= 1
            events.append(finished(stream, .sent))
        }
        guard streamsToResetAfterAnswer > 0, let session, stream.resetAfterAnswer else { return }
        stream.resetAfterAnswer = false
        streamsToResetAfterAnswer -= 1
        // The answer is out: tell the client to stop sending the rest of its body (RFC 9113 §8.1).
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), streamID, NGHTTP2_NO_ERROR.rawValue)
    }

    fileprivate func goAwaySent(errorCode: UInt32, lastStreamID: Int32) {
        if goAwaysSubmitted > 0 {
            goAwaysSubmitted -= 1
        } else {
            events.append(.libraryGoAway(errorCode: errorCode, lastStreamID: lastStreamID))
        }
    }

    fileprivate func streamClosed(streamID: Int32, errorCode: UInt32) {
        guard let stream = streams.remove(streamID) else { return }
        if stream.resetAfterAnswer { streamsToResetAfterAnswer -= 1 }
        if cachedStream?.toOpaque() == Unmanaged.passUnretained(stream).toOpaque() { cachedStream = nil }
        stream.isClosed = true
        if stream.awaitingDelivery {
            stream.awaitingDelivery = false
            streamsAwaitingDelivery -= 1
            let why = errorCode == 0
                ? "the stream closed before the answer was sent"
                : "the stream was closed (HTTP/2 error \(Self.errorName(errorCode))) before the answer was sent"
            events.append(finished(stream, .notSent(because: why)))
        } else if !stream.answered, !stream.awaitingAnswer {
            let why = errorCode == 0
                ? "stream closed before the request ended"
                : "stream reset before the request ended (HTTP/2 error \(Self.errorName(errorCode)))"
            events.append(.abandoned(stream, because: why))
        }
        if spareStreams.count < Self.maxSpareStreams { spareStreams.append(stream) }
    }

    fileprivate func readBody(streamID: Int32, into buffer: UnsafeMutablePointer<UInt8>, length: Int) -> (Int, Bool) {
        guard let stream = stream(streamID) else { return (0, true) }
        let remaining = stream.responseBody.count - stream.responseBodyOffset
        let count = min(remaining, length)
        stream.responseBody.withUnsafeBufferPointer { body in
            buffer.update(from: body.baseAddress! + stream.responseBodyOffset, count: count)
        }
        stream.responseBodyOffset += count
        return (count, stream.responseBodyOffset == stream.responseBody.count)
    }

    // MARK: Helpers

    /// Rewrites SETTINGS_MAX_CONCURRENT_STREAMS in a buffer that starts with a SETTINGS frame (RFC 9113 §6.5:
    /// a 9-byte header, then 6-byte entries of a 16-bit id and a 32-bit value). Anything else is left alone.
    static func patchMaxConcurrentStreams(in bytes: inout [UInt8], to value: UInt32) {
        guard bytes.count >= 9, bytes[3] == 0x04, bytes[4] & 0x01 == 0 else { return }
        let length = Int(bytes[0]) << 16 | Int(bytes[1]) << 8 | Int(bytes[2])
        var offset = 9
        while offset + 6 <= min(9 + length, bytes.count) {
            if bytes[offset] == 0, bytes[offset + 1] == 0x03 {
                bytes[offset + 2] = UInt8(truncatingIfNeeded: value >> 24)
                bytes[offset + 3] = UInt8(truncatingIfNeeded: value >> 16)
                bytes[offset + 4] = UInt8(truncatingIfNeeded: value >> 8)
                bytes[offset + 5] = UInt8(truncatingIfNeeded: value)
            }
            offset += 6
        }
    }

    private static let jsonContentType: StaticString = "application/json"

    /// Nearly every answer is a 200: written as a literal, not formatted from the integer each time (which showed
    /// in profiles).
    private static func statusText(_ status: Int) -> String { status == 200 ? "200" : String(status) }

    // Literal names and values live as long as the program, so libnghttp2 need not copy them (NO_COPY_*).
    private static func header(_ name: StaticString, _ value: StaticString) -> nghttp2_nv {
        nghttp2_nv(
            name: UnsafeMutablePointer(mutating: name.utf8Start),
            value: UnsafeMutablePointer(mutating: value.utf8Start),
            namelen: name.utf8CodeUnitCount,
            valuelen: value.utf8CodeUnitCount,
            flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | NGHTTP2_NV_FLAG_NO_COPY_VALUE.rawValue)
        )
    }

    private static func header(_ name: StaticString, _ value: UnsafeBufferPointer<UInt8>, neverIndexed: Bool = false) -> nghttp2_nv {
        // libnghttp2 copies the value during submit (no NO_COPY_VALUE), so its pointer may be temporary; an
        // empty value still needs a valid pointer.
        let noIndex = neverIndexed ? NGHTTP2_NV_FLAG_NO_INDEX.rawValue : 0
        return nghttp2_nv(
            name: UnsafeMutablePointer(mutating: name.utf8Start),
            value: UnsafeMutablePointer(mutating: value.baseAddress ?? name.utf8Start),
            namelen: name.utf8CodeUnitCount,
            valuelen: value.count,
            flags: UInt8(NGHTTP2_NV_FLAG_NO_COPY_NAME.rawValue | noIndex)
        )
    }

    private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
        guard bytes.count == literal.utf8CodeUnitCount else { return false }
        return ASCII.sameBytes(bytes.baseAddress!, literal.utf8Start, count: bytes.count)
    }

    static func errorName(_ code: UInt32) -> String { HTTP2ErrorCodeName.name(of: code) }

    /// `GET / HTTP/1.1`-style: one of HTTP/1.1's methods (RFC 9110 §9) and a space. Any other upper-case word is
    /// not taken for one: h2spec's `INVALID CONNECTION PREFACE` and a broken `PRI * HTTP/2.0` get GOAWAY
    /// PROTOCOL_ERROR, as RFC 9113 §3.4 asks.
    static func looksLikeHTTP1RequestLine(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var index = 0
        while index < bytes.count, index < 8, bytes[index] >= UInt8(ascii: "A"), bytes[index] <= UInt8(ascii: "Z") {
            index += 1
        }
        guard index > 0, index < bytes.count, bytes[index] == UInt8(ascii: " ") else { return false }
        return http1Methods.contains(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[..<index]), as: UTF8.self))
    }

    private static let http1Methods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    /// Calls `body` with the session behind libnghttp2's user data. Guaranteed, not retained: the session
    /// outlives every callback (see the type's comment), and a retain and release per callback (several per
    /// request) showed in profiles.
    private static func withOwner<Result>(_ userData: UnsafeMutableRawPointer?, _ body: (HTTP2ServerSession) -> Result) -> Result {
        Unmanaged<HTTP2ServerSession>.fromOpaque(userData!)._withUnsafeGuaranteedRef(body)
    }

    private static let readResponseBody: nghttp2_data_source_read_callback = {
        _, streamID, buffer, length, dataFlags, _, userData in
        let (count, finished) = HTTP2ServerSession.withOwner(userData) { $0.readBody(streamID: streamID, into: buffer!, length: length) }
        if finished { dataFlags!.pointee |= UInt32(NGHTTP2_DATA_FLAG_EOF.rawValue) }
        return count
    }

    private static func install(_ callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks) { _, frame, userData in
            // Fields read through the pointer: copying `pointee` would copy the whole frame union.
            let frame = frame!
            if frame.pointee.hd.type == UInt8(NGHTTP2_HEADERS.rawValue), frame.pointee.headers.cat == NGHTTP2_HCAT_REQUEST {
                HTTP2ServerSession.withOwner(userData) { $0.beginHeaders(streamID: frame.pointee.hd.stream_id) }
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, userData in
            HTTP2ServerSession.withOwner(userData) {
                $0.header(
                    streamID: frame!.pointee.hd.stream_id,
                    name: UnsafeBufferPointer(start: name, count: nameLength),
                    value: UnsafeBufferPointer(start: value, count: valueLength)
                )
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, streamID, data, length, userData in
            HTTP2ServerSession.withOwner(userData) { $0.dataChunk(streamID: streamID, UnsafeBufferPointer(start: data, count: length)) }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, userData in
            let header = frame!.pointee.hd
            let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            if endStream, header.type == UInt8(NGHTTP2_DATA.rawValue) || header.type == UInt8(NGHTTP2_HEADERS.rawValue) {
                HTTP2ServerSession.withOwner(userData) { $0.requestEnded(streamID: header.stream_id) }
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks) { _, frame, userData in
            let header = frame!.pointee.hd
            if header.type == UInt8(NGHTTP2_GOAWAY.rawValue) {
                let goAway = frame!.pointee.goaway
                HTTP2ServerSession.withOwner(userData) { $0.goAwaySent(errorCode: goAway.error_code, lastStreamID: goAway.last_stream_id) }
                return 0
            }
            let endStream = header.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
            if endStream, header.type == UInt8(NGHTTP2_DATA.rawValue) || header.type == UInt8(NGHTTP2_HEADERS.rawValue) {
                HTTP2ServerSession.withOwner(userData) { $0.frameSent(streamID: header.stream_id, endedStream: true) }
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, streamID, errorCode, userData in
            HTTP2ServerSession.withOwner(userData) { $0.streamClosed(streamID: streamID, errorCode: errorCode) }
            return 0
        }
    }
}
