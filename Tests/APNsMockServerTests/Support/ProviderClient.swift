import AsyncHTTPClient
import NIOCore
import NIOSSL

/// One answer from the provider port, as AsyncHTTPClient saw it.
struct ProviderResponse: Sendable {
    var status: Int
    var isHTTP2: Bool
    /// Header names lower case, values as sent.
    var headers: [(name: String, value: String)]
    var body: [UInt8]

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The values of a header (names compared without regard to case).
    func values(_ name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }

    func header(_ name: String) -> String? { values(name).first }
}

/// An AsyncHTTPClient set up as an APNs provider would be: HTTP/2 (the server's ALPN offers only `h2`, and
/// each answer is checked to be HTTP/2), trusting the development CA in `Certs/ca.pem`.
struct ProviderClient: Sendable {
    let client: HTTPClient
    let server: TestServer

    enum Method: Sendable {
        case post, get
    }

    /// Sends one request to `path` (by default `/3/device/<token>`).
    func send(
        token: String = TestData.deviceToken(),
        path: String? = nil,
        method: Method = .post,
        headers: [(String, String)] = [("apns-topic", TestData.topic)],
        body: String? = TestData.alertPayload
    ) async throws -> ProviderResponse {
        var request = HTTPClientRequest(url: server.providerBaseURL + (path ?? "/3/device/" + token))
        switch method {
        case .post: request.method = .POST
        case .get: request.method = .GET
        }
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(string: body)) }
        let response = try await client.execute(request, timeout: .seconds(10))
        let collected = try await response.body.collect(upTo: 1024 * 1024)
        return ProviderResponse(
            status: Int(response.status.code),
            isHTTP2: response.version == .http2,
            headers: response.headers.map { ($0.name.lowercased(), $0.value) },
            body: Array(collected.readableBytesView)
        )
    }
}

/// Runs `body` with a provider client for `server`, and shuts the client down afterwards.
func withProviderClient<Result>(
    _ server: TestServer,
    _ body: (ProviderClient) async throws -> Result
) async throws -> Result {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .file(TestPaths.caCertificate)
    tls.minimumTLSVersion = .tlsv12
    var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
    configuration.httpVersion = .automatic
    let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    do {
        let result = try await body(ProviderClient(client: client, server: server))
        try await client.shutdown()
        return result
    } catch {
        try? await client.shutdown()
        throw error
    }
}

/// Checks the provider port still answers an ordinary push with 200: how every abuse test ends.
func expectServerStillAnswers(_ server: TestServer) async throws -> ProviderResponse {
    try await withProviderClient(server) { provider in
        try await provider.send()
    }
}
