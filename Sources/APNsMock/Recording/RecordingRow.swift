/// A recording as plain columns, for a persistent store: the fields the admin API filters on, and what rebuilds the
/// recording exactly (the request's method, path, headers and kept payload bytes, the answer, the extras).
///
/// `RecordedNotification(row:)` gives back a recording whose JSON is the original's.
package struct RecordingRow: Sendable, Equatable {
    // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
    package var sequence: UInt64
    package var receivedAt: Int64
    package var connectionID: UInt64
    package var streamID: Int32
    package var kind: String
    package var deviceToken: Optional<String>
    package var topic: Optional<String>
    package var pushType: Optional<String>
    package var priority: Optional<Int>
    package var status: Optional<Int>
    package var reason: Optional<String>
    package var apnsID: Optional<String>
    package var uniqueID: Optional<String>
    package var timestamp: Optional<Int64>
    package var authMethod: Optional<String>
    package var scenarioRule: Optional<String>
    /// Warning codes, comma-separated, for filtering.
    package var warningCodes: String
    package var method: String
    package var path: String
    package var authority: Optional<String>
    /// `[["name","value"], …]`, in arrival order.
    package var headersJSON: String
    /// The payload bytes the recorder kept.
    package var payload: [UInt8]
    package var payloadSize: Int
    /// `{"abandoned", "authentication", "rule", "faults", "warnings", "broadcast"}` (authentication and warnings
    /// in the recording JSON's form): what rebuilds the extras.
    package var extrasJSON: String

    /// The columns as stored.
    package init(
        sequence: UInt64,
        receivedAt: Int64,
        connectionID: UInt64,
        streamID: Int32,
        kind: String,
        deviceToken: String?,
        topic: String?,
        pushType: String?,
        priority: Int?,
        status: Int?,
        reason: String?,
        apnsID: String?,
        uniqueID: String?,
        timestamp: Int64?,
        authMethod: String?,
        scenarioRule: String?,
        warningCodes: String,
        method: String,
        path: String,
        authority: String?,
        headersJSON: String,
        payload: [UInt8],
        payloadSize: Int,
        extrasJSON: String
    ) {
        self.sequence = sequence
        self.receivedAt = receivedAt
        self.connectionID = connectionID
        self.streamID = streamID
        self.kind = kind
        self.deviceToken = deviceToken
        self.topic = topic
        self.pushType = pushType
        self.priority = priority
        self.status = status
        self.reason = reason
        self.apnsID = apnsID
        self.uniqueID = uniqueID
        self.timestamp = timestamp
        self.authMethod = authMethod
        self.scenarioRule = scenarioRule
        self.warningCodes = warningCodes
        self.method = method
        self.path = path
        self.authority = authority
        self.headersJSON = headersJSON
        self.payload = payload
        self.payloadSize = payloadSize
        self.extrasJSON = extrasJSON
    }

    package init(_ recording: RecordedNotification) {
        let request = recording.request
        self.init(recording, path: request.path, shape: ShapeColumns(recording, request: request), extras: ExtrasColumns(recording))
    }

    /// As above, for a writer of many rows (a store's batch): the columns a recording's shared request bytes decide
    /// and those its shared extras decide are made once per storage and per extras object in `cache` (a load
    /// test's rows differ only in their token, times and IDs).
    package init(_ recording: RecordedNotification, cache: inout RecordingRowCache) {
        // A text path lives in the storage, which is then the recording's own: nothing to share.
        guard recording.fields.pathEncoding != .text, let token = recording.deviceToken else {
            self.init(recording)
            return
        }
        let shape = cache.shape(for: recording)
        let extras = recording.extrasAreShareable ? cache.extras(for: recording) : ExtrasColumns(recording)
        self.init(recording, path: APNsPath.devicePrefix + token, shape: shape, extras: extras)
    }

    private init(_ recording: RecordedNotification, path: String, shape: ShapeColumns, extras: ExtrasColumns) {
        let response = recording.response
        sequence = recording.sequence
        receivedAt = recording.receivedAt
        connectionID = recording.connectionID
        streamID = recording.streamID
        kind = extras.kind
        deviceToken = recording.deviceToken
        topic = shape.topic
        pushType = shape.pushType
        priority = shape.priority
        status = recording.status
        reason = recording.reason?.rawValue
        apnsID = response?.apnsID
        uniqueID = response?.uniqueID
        timestamp = response?.timestamp
        authMethod = extras.authMethod
        scenarioRule = extras.scenarioRule
        warningCodes = extras.warningCodes
        method = shape.method
        self.path = path
        authority = shape.authority
        headersJSON = shape.headersJSON
        payload = shape.payload
        payloadSize = shape.payloadSize
        extrasJSON = extras.extrasJSON
    }

    /// The columns the request's bytes decide (shared by recordings with the same storage).
    struct ShapeColumns {
        // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
        var topic: Optional<String>
        var pushType: Optional<String>
        var priority: Optional<Int>
        var method: String
        var authority: Optional<String>
        var headersJSON: String
        var payload: [UInt8]
        var payloadSize: Int

        init(_ recording: RecordedNotification, request: APNsRequest) {
            topic = recording.topic
            pushType = recording.pushType
            priority = request.headers.first { $0.name == "apns-priority" }.flatMap { Int($0.value) }
            method = request.method
            authority = request.authority
            var headers = JSONWriter(reservingCapacity: 256)
            headers.beginArray()
            for header in request.headers {
                headers.beginArray()
                headers.string(header.name)
                if !recording.fields.keepsCredentials, header.name.lowercased() == "authorization" {
                    headers.string(ASCII.withUTF8(of: header.value) { CredentialRedaction.redacted($0) })
                } else {
                    headers.string(header.value)
                }
                headers.endArray()
            }
            headers.endArray()
            headersJSON = String(decoding: headers.bytes, as: UTF8.self)
            payload = request.payload
            payloadSize = request.payloadSize
        }
    }

    /// The columns the recording's extras decide (shared by recordings with the same extras object).
    struct ExtrasColumns {
        // Optionals that `init` sets are `Optional<…>`, not `…?`: see Support/Optional+CaseTest.swift.
        var kind: String
        var authMethod: Optional<String>
        var scenarioRule: Optional<String>
        var warningCodes: String
        var extrasJSON: String

        init(_ recording: RecordedNotification) {
            kind = recording.kind
            authMethod = recording.authentication?.method
            scenarioRule = recording.scenarioRule
            warningCodes = recording.warnings.map(\.code).joined(separator: ",")
            extrasJSON = RecordingRow.extrasJSON(recording)
        }
    }

    fileprivate static func extrasJSON(_ recording: RecordedNotification) -> String {
        var json = JSONWriter(reservingCapacity: 256)
        json.beginObject()
        if let abandoned = recording.abandonedBecause {
            json.key("abandoned")
            json.string(abandoned)
        }
        if let authentication = recording.authentication {
            json.key("authentication")
            RecordedNotification.write(authentication, into: &json)
        }
        if let rule = recording.scenarioRule {
            json.key("rule")
            json.string(rule)
        }
        if let tenant = recording.tenant {
            json.key("tenant")
            json.string(tenant)
        }
        json.key("faults")
        json.beginArray()
        for fault in recording.faults { json.string(fault) }
        json.endArray()
        json.key("warnings")
        RecordedNotification.write(recording.warnings, into: &json)
        if let broadcast = recording.broadcast {
            json.key("broadcast")
            json.beginObject()
            json.key("kind")
            json.string(broadcast.kind.rawValue)
            json.key("bundleId")
            json.string(broadcast.bundleID)
            json.key("channelId")
            json.string(broadcast.channelID)
            json.endObject()
        }
        json.endObject()
        return String(decoding: json.bytes, as: UTF8.self)
    }
}

/// A stored row that does not rebuild a recording (a column written by something else, or damaged).
package struct RecordingRowError: Error, CustomStringConvertible {
    package var sequence: UInt64
    package var field: String

    package var description: String { "recording \(sequence): the stored \(field) cannot be read back" }
}

extension RecordedNotification {
    /// The recording a row was made from, with its sequence number.
    package init(row: RecordingRow) throws(RecordingRowError) {
        guard case .array(let headerPairs)? = JSONScanner.parse(Array(row.headersJSON.utf8)) else {
            throw RecordingRowError(sequence: row.sequence, field: "headers")
        }
        var headers: [HeaderField] = []
        for pair in headerPairs {
            guard case .array(let parts) = pair, parts.count == 2, case .string(let name) = parts[0], case .string(let value) = parts[1] else {
                throw RecordingRowError(sequence: row.sequence, field: "headers")
            }
            headers.append(HeaderField(name: name, value: value))
        }
        guard case .object(let extras)? = JSONScanner.parse(Array(row.extrasJSON.utf8)) else {
            throw RecordingRowError(sequence: row.sequence, field: "extras")
        }
        let request = APNsRequest(
            method: row.method, path: row.path, authority: row.authority, headers: headers, payload: row.payload, payloadSize: row.payloadSize
        )
        var response: APNsResponse?
        if let status = row.status {
            response = APNsResponse(
                status: status, reason: row.reason.flatMap(Reason.init(rawValue:)), apnsID: row.apnsID ?? "", uniqueID: row.uniqueID,
                timestamp: row.timestamp
            )
        }
        var unshared = RecordShapeCache()
        self.init(
            sequence: row.sequence,
            receivedAt: row.receivedAt,
            connectionID: row.connectionID,
            streamID: row.streamID,
            request: request,
            response: response,
            extras: try Self.extras(extras, sequence: row.sequence),
            shapes: &unshared
        )
    }

    private static func extras(_ object: [String: JSONValue], sequence: UInt64) throws(RecordingRowError) -> RecordExtras? {
        func string(_ value: JSONValue?) -> String? {
            if case .string(let text)? = value { return text }
            return nil
        }
        var authentication: AuthenticationRecord?
        if case .object(let auth)? = object["authentication"] {
            switch string(auth["method"]) {
            case "none": authentication = AuthenticationRecord.none
            case "missing": authentication = .missing
            case "token":
                var issuedAt: Int64?
                if case .number(let value)? = auth["issuedAt"] { issuedAt = Int64(exactly: value) }
                var verified = false
                if case .bool(let value)? = auth["signatureVerified"] { verified = value }
                authentication = .token(
                    keyID: string(auth["keyId"]), teamID: string(auth["teamId"]), issuedAt: issuedAt, signatureVerified: verified,
                    error: string(auth["error"])
                )
            case "certificate":
                var topics: [String] = []
                if case .array(let values)? = auth["topics"] { topics = values.compactMap(string) }
                authentication = .certificate(subject: string(auth["subject"]) ?? "", topics: topics)
            default:
                throw RecordingRowError(sequence: sequence, field: "authentication")
            }
        }
        var faults: [String] = []
        if case .array(let values)? = object["faults"] { faults = values.compactMap(string) }
        var warnings: [PayloadWarning] = []
        if case .array(let values)? = object["warnings"] {
            for value in values {
                guard case .object(let warning) = value, let code = string(warning["code"]), let path = string(warning["path"]),
                    let message = string(warning["message"])
                else { throw RecordingRowError(sequence: sequence, field: "warnings") }
                warnings.append(PayloadWarning(code: code, path: path, message: message))
            }
        }
        var broadcast: BroadcastRecord?
        if case .object(let record)? = object["broadcast"] {
            guard let kind = string(record["kind"]).flatMap(BroadcastRecord.Kind.init(rawValue:)) else {
                throw RecordingRowError(sequence: sequence, field: "broadcast")
            }
            broadcast = BroadcastRecord(kind: kind, bundleID: string(record["bundleId"]), channelID: string(record["channelId"]))
        }
        let abandoned = string(object["abandoned"])
        let rule = string(object["rule"])
        let tenant = string(object["tenant"])
        if abandoned == nil, authentication == nil, rule == nil, faults.isEmpty, warnings.isEmpty, broadcast == nil, tenant == nil { return nil }
        return RecordExtras(
            abandonedBecause: abandoned, authentication: authentication, scenarioRule: rule, faults: faults, broadcast: broadcast,
            warnings: warnings, tenant: tenant
        )
    }
}

/// The row columns a store's writer made from what recordings share (see `RecentlyShared` and
/// `RecordingRow.init(_:cache:)`).
package struct RecordingRowCache {
    private var shapes = RecentlyShared<RecordStorage, RecordingRow.ShapeColumns>()
    private var extras = RecentlyShared<RecordExtras, RecordingRow.ExtrasColumns>()

    package init() {}

    mutating func shape(for recording: RecordedNotification) -> RecordingRow.ShapeColumns {
        shapes.value(for: recording.storage, detail: recording.fields.payloadSize) {
            RecordingRow.ShapeColumns(recording, request: recording.request)
        }
    }

    mutating func extras(for recording: RecordedNotification) -> RecordingRow.ExtrasColumns {
        extras.value(for: recording.fields.extras) { RecordingRow.ExtrasColumns(recording) }
    }
}
