import APNsMock
import APNsMockCertificates
import Crypto

/// The parsers that take bytes from outside, one fuzz target each. Every target must return normally for every
/// input: a crash, a sanitizer report, a hang or unbounded memory is a bug in the parser, never in the input.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// A provider token (`authorization: bearer …`): JWT parsing, then signature verification.
    case jwt
    /// A push payload: the JSON scanner scenario conditions use and the object check the validator uses.
    case payload
    /// A JSON path (first line) and a payload (the rest), as a scenario's `payload` condition matches them.
    case jsonPath = "json-path"
    /// A scenario file, as `PUT /admin/scenario`, `--scenario` and `scenario check` read it.
    case scenario
    /// An admin query string (`token=…&since=-30s&limit=5`), as the notification routes parse it.
    case adminQuery = "admin-query"
    /// A client certificate (DER), as the provider port reads its topics and environments.
    case clientCertificate = "client-certificate"
    /// A whole request: header lines (`name: value`, pseudo-headers included), a blank line, the payload; decided
    /// by the engine with a scenario that matches on headers and payload, recorded, and written as JSON.
    case request

    /// Runs one input through the target.
    func run(_ input: [UInt8]) {
        switch self {
        case .jwt: FuzzRun.jwt(input)
        case .payload: FuzzRun.payload(input)
        case .jsonPath: FuzzRun.jsonPath(input)
        case .scenario: FuzzRun.scenario(input)
        case .adminQuery: FuzzRun.adminQuery(input)
        case .clientCertificate: FuzzRun.clientCertificate(input)
        case .request: FuzzRun.request(input)
        }
    }
}

/// What each target does with its input; the results are consumed (`sink`) so nothing is optimised away.
enum FuzzRun {
    /// A fixed key, so a seed token made with it reaches the signature check (the fuzzer cannot forge one).
    static let signer = ProviderTokenSigner(
        keyID: "FUZZKEY001", teamID: "FUZZTEAM01",
        privateKey: try! P256.Signing.PrivateKey(rawRepresentation: [UInt8](repeating: 7, count: 32))
    )

    static func jwt(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        let known = ProviderTokenVerifier(keys: [
            ProviderKey(keyID: signer.keyID, teamID: signer.teamID, publicKey: signer.privateKey.publicKey)
        ])
        sink(known.verify(text))
        sink(ProviderTokenVerifier(acceptUnknownKeys: true).verify(text))
    }

    static let paths: [JSONPath] = ["$.aps.alert.title", "$.aps.badge", "$.list[3]", #"$["dotted.key"][0].x"#].map {
        try! JSONPath(parsing: $0)
    }

    static func payload(_ input: [UInt8]) {
        sink(JSONObjectCheck.isJSONObject(input))
        sink(JSONScanner.parse(input))
        for path in paths { sink(JSONScanner.value(at: path, in: input)) }
    }

    static func jsonPath(_ input: [UInt8]) {
        let split = input.firstIndex(of: UInt8(ascii: "\n")) ?? input.endIndex
        guard let path = try? JSONPath(parsing: String(decoding: input[..<split], as: UTF8.self)) else { return }
        sink(path.description)
        sink(JSONScanner.value(at: path, in: Array(input[split...].dropFirst())))
    }

    static func scenario(_ input: [UInt8]) {
        guard let scenario = try? ScenarioLoader.load(text: String(decoding: input, as: UTF8.self), source: "fuzz.yaml") else { return }
        sink(scenario)
    }

    static func adminQuery(_ input: [UInt8]) {
        let text = String(decoding: input, as: UTF8.self)
        let parameters: [(String, String)] = text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? (String(parts[1]).removingPercentEncoding ?? String(parts[1])) : ""
            return (name, value)
        }
        guard let query = try? NotificationQuery(parameters: parameters, extraAllowed: ["count", "timeout"], now: 1_795_000_000_000) else {
            return
        }
        sink(queryStore.page(query).notifications.count)
    }

    static func clientCertificate(_ input: [UInt8]) {
        sink(try? ClientCertificateIdentity(derBytes: input))
    }

    /// The engine, shared by every `request` input as one server shares it between connections.
    static let processor = NotificationProcessor(
        scenario: ActiveScenario(try! ScenarioLoader.load(text: requestScenario, source: "fuzz-request.yaml"), now: { 1_795_000_000_000 }),
        now: { 1_795_000_000_000 }
    )
    /// Recordings of the `request` seeds' shapes, for queries to page through; filled once, so an input that
    /// keeps nothing allocates as much as it frees (otherwise libFuzzer runs a leak scan after every input).
    static let queryStore: NotificationStore = {
        let recorder = Recorder(capacity: 64)
        for token in ["ab", "de", "12"] {
            request(Array(":method: POST\n:path: /3/device/\(String(repeating: token, count: 32))\napns-topic: com.example.app\n\n{}".utf8), into: recorder)
        }
        return recorder.store
    }()
    static let requestScenario = """
        name: fuzz
        rules:
          - match: {tokenPrefix: dead}
            reason: BadDeviceToken
          - match: {headers: {apns-collapse-id: x}}
            reason: BadCollapseId
          - match: {payload: {"$.aps.alert.title": "t"}}
            status: 413
          - match: {payload: {"$.list[1].x": 2}}
            reason: Unregistered
        """

    static func request(_ input: [UInt8]) {
        request(input, into: Recorder(capacity: 4))
    }

    static func request(_ input: [UInt8], into recorder: Recorder) {
        var head = RequestHead(reservingCapacity: input.count)
        var position = input.startIndex
        while position < input.endIndex {
            let lineEnd = input[position...].firstIndex(of: UInt8(ascii: "\n")) ?? input.endIndex
            let line = Array(input[position..<lineEnd])
            position = min(lineEnd + 1, input.endIndex)
            if line.isEmpty { break }
            // The name ends at the first ':' after its first byte (pseudo-headers start with one).
            let colon = line.dropFirst().firstIndex(of: UInt8(ascii: ":")) ?? line.endIndex
            let name = Array(line[..<colon])
            var value = Array(line[colon...].dropFirst())
            if value.first == UInt8(ascii: " ") { value.removeFirst() }
            name.withUnsafeBufferPointer { name in
                value.withUnsafeBufferPointer { value in
                    switch Array(name) {
                    case Array(":method".utf8): head.setPseudo(.method, value)
                    case Array(":path".utf8): head.setPseudo(.path, value)
                    case Array(":scheme".utf8): head.setPseudo(.scheme, value)
                    case Array(":authority".utf8): head.setPseudo(.authority, value)
                    default: head.appendHeader(name: name, value: value)
                    }
                }
            }
        }
        let payload = Array(input[position...])
        let request = APNsRequest(head: head, payload: payload, payloadSize: payload.count, headerListTooLarge: false)
        var state = processor.makeConnectionState(certificate: nil)
        var ids = APNsIDGenerator()
        let decision = processor.process(request, streamID: 1, connection: ConnectionInfo(id: 1), state: &state, ids: &ids)
        var context = RecordingContext()
        let sequence = recorder.record(request, streamID: 1, connection: ConnectionInfo(id: 1), outcome: decision.outcome, context: &context)
        var query = NotificationQuery()
        query.afterSequence = sequence - 1
        query.limit = 1
        if let recorded = recorder.store.list(query).notifications.first {
            sink(recorded.jsonBytes())
        }
    }

    @inline(never)
    static func sink<T>(_ value: T) {
        withExtendedLifetime(value) {}
    }
}
