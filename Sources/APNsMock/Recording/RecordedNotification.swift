/// One request the provider endpoint received, accepted or not, and the answer it got.
///
/// A recording is kept compact, since a million of them must fit in a few hundred megabytes: the answer's
/// scalars and the device token in `RecordFields`, the request's bytes in a tail-allocated `RecordStorage`
/// (shared by recordings with the same bytes); `request` and `response` are rebuilt from them when read (by the
/// admin API, never on the hot path).
package struct RecordedNotification: Sendable, Equatable {
    /// Arrival order, from 1; never reused, not even after a clear.
    package var sequence: UInt64
    /// When the request's last frame arrived, in milliseconds since the epoch.
    package var receivedAt: Int64
    package var connectionID: UInt64
    package var streamID: Int32
    let fields: RecordFields
    /// Immutable once made (see `RecordStorage`), so reading it from any thread is safe.
    nonisolated(unsafe) let storage: RecordStorage

    package init(
        sequence: UInt64,
        receivedAt: Int64,
        connectionID: UInt64,
        streamID: Int32,
        request: APNsRequest,
        response: APNsResponse?,
        abandonedBecause: String? = nil,
        authentication: AuthenticationRecord? = nil,
        scenarioRule: String? = nil,
        faults: [String] = [],
        tenant: String? = nil
    ) {
        var unshared = RecordShapeCache()
        var unsharedExtras: RecordExtras?
        self.init(
            sequence: sequence,
            receivedAt: receivedAt,
            connectionID: connectionID,
            streamID: streamID,
            request: request,
            response: response,
            extras: RecordExtras.make(
                abandonedBecause: abandonedBecause, authentication: authentication, scenarioRule: scenarioRule, faults: faults,
                tenant: tenant, cache: &unsharedExtras
            ),
            shapes: &unshared
        )
    }

    /// As above, with the extras already made (possibly shared with earlier recordings), taking the storage in
    /// `shapes` for the request's bytes when they are the same (see `RecordStorage`).
    init(
        sequence: UInt64,
        receivedAt: Int64,
        connectionID: UInt64,
        streamID: Int32,
        // Borrowed: an initializer takes its arguments owned, and the caller's copy of the request (a retain
        // of each of its buffers, then a release) showed in profiles. Only its bytes are copied.
        request: borrowing APNsRequest,
        response: borrowing APNsResponse?,
        extras: RecordExtras?,
        reachesDevices: Bool = false,
        shapes: inout RecordShapeCache
    ) {
        self.sequence = sequence
        self.receivedAt = receivedAt
        self.connectionID = connectionID
        self.streamID = streamID
        var (fields, storage) = RecordStorage.make(request: request, response: response, extras: extras, shapes: &shapes)
        fields.reachesDevices = reachesDevices
        self.fields = fields
        self.storage = storage
    }

    /// The request as it arrived.
    package var request: APNsRequest { storage.request(fields) }
    /// The answer given, or `nil` when the request never completed (see `abandonedBecause`).
    package var response: APNsResponse? {
        guard var response = storage.response(fields) else { return nil }
        if let broadcast {
            response.idHeader = .requestID
            if broadcast.kind == .channelCreate, response.status == 201 { response.channelID = broadcast.channelID }
        }
        return response
    }
    /// Why there is no answer: the client reset the stream, or the connection closed before the request ended.
    package var abandonedBecause: String? { fields.extras?.abandonedBecause }
    /// How the request was authenticated (`nil` when it was refused before authentication, e.g. 404, or
    /// answered by a scenario rule).
    package var authentication: AuthenticationRecord? { fields.extras?.authentication }
    /// The scenario rule that decided the answer, if one did.
    package var scenarioRule: String? { fields.extras?.scenarioRule }
    /// Faults a scenario injected with or instead of the answer (`RST_STREAM CANCEL`, `GOAWAY …`, `drop`).
    package var faults: [String] { fields.extras?.faults ?? [] }
    /// For the broadcast API: the operation, the app and the channel (`nil` for a device push).
    package var broadcast: BroadcastRecord? { fields.extras?.broadcast }
    /// What the payload gets wrong that APNs accepted anyway; never changes the answer.
    package var warnings: [PayloadWarning] { fields.extras?.warnings ?? [] }
    /// The tenant it was decided for (`--tenants`), or `nil` when the mock has one tenant.
    package var tenant: String? { fields.extras?.tenant }
    /// `push` for a device push, else the broadcast operation (`broadcast`, `channel-create`, …).
    package var kind: String { broadcast?.kind.rawValue ?? "push" }

    /// Took an earlier recording's storage for its request's bytes instead of making one.
    var sharesRequestBytes: Bool { fields.sharesStorage }
    /// Its extras (if any) may be shared with other recordings: nothing in them is this request's alone (a rule, a
    /// fault, an abandonment), so what a writer makes of them can be reused (see `RecentlyShared`).
    var extrasAreShareable: Bool { fields.extras?.isShareable ?? true }

    package var deviceToken: String? { storage.deviceToken(fields) }
    package var topic: String? { storage.header(named: "apns-topic") }
    package var pushType: String? { storage.header(named: "apns-push-type") }
    package var apnsID: String? { response?.apnsID ?? storage.header(named: "apns-id") }
    /// The answer's status, read without rebuilding the answer.
    package var status: Int? { fields.hasResponse ? Int(fields.status) : nil }
    /// An accepted push the simulated devices take (a registered token's, or a broadcast): only these are handed to
    /// them, so pushes to tokens nobody registered cost what they cost with no device at all.
    package var reachesDevices: Bool { fields.reachesDevices }
    /// The answer's reason, read without rebuilding the answer.
    package var reason: Reason? { fields.hasResponse ? fields.reason : nil }

    package static func == (lhs: RecordedNotification, rhs: RecordedNotification) -> Bool {
        lhs.sequence == rhs.sequence && lhs.receivedAt == rhs.receivedAt && lhs.connectionID == rhs.connectionID
            && lhs.streamID == rhs.streamID && lhs.request == rhs.request && lhs.response == rhs.response
            && lhs.abandonedBecause == rhs.abandonedBecause && lhs.authentication == rhs.authentication
            && lhs.scenarioRule == rhs.scenarioRule && lhs.faults == rhs.faults && lhs.tenant == rhs.tenant
    }
}

/// What few recordings have: kept out of line so the common recording does not pay for it.
final class RecordExtras: Sendable {
    /// - Parameter cache: a connection's previous shareable extras (no abandonment, rule or fault), returned again
    ///   when these are the same (a run of equal broadcasts or token pushes shares one object), and replaced by new
    ///   shareable ones. Read in place: comparing the result with the cache and storing it afterwards retained and
    ///   released the shared object again on every request.
    static func make(
        abandonedBecause: String?,
        authentication: AuthenticationRecord?,
        scenarioRule: String?,
        faults: [String],
        broadcast: BroadcastRecord? = nil,
        warnings: [PayloadWarning] = [],
        acceptance: UInt64 = 0,
        tenant: String? = nil,
        cache: inout RecordExtras?
    ) -> RecordExtras? {
        guard abandonedBecause == nil, scenarioRule == nil, faults.isEmpty else {
            return RecordExtras(
                abandonedBecause: abandonedBecause, authentication: authentication, scenarioRule: scenarioRule, faults: faults,
                broadcast: broadcast, warnings: warnings, tenant: tenant
            )
        }
        if broadcast.isSome || !warnings.isEmpty {
            // A broadcast's extras: shared with the previous recording's when every part is the same.
            if let cached = cache, cached.isShareable, cached.hasAuthentication(authentication, acceptance: acceptance),
                cached.broadcast == broadcast, cached.warnings == warnings, cached.isFor(tenant: tenant)
            {
                return cached
            }
            let made = RecordExtras(
                abandonedBecause: nil, authentication: authentication, scenarioRule: nil, faults: [], broadcast: broadcast, warnings: warnings,
                acceptance: acceptance, tenant: tenant
            )
            cache = made
            return made
        }
        // Shared by a connection's recordings, not by all: one object for every connection (`--auth none`'s, the
        // common case in CI) was retained several times per request from every event loop, and its reference
        // count's cache line moving between their cores cost more than all else that sharing saves.
        // Its case tested, not unwrapped: binding it copied the record out (and `!= nil` copies it too, see `isSome`).
        guard authentication.isSome || tenant.isSome else { return nil }
        if let cached = cache, cached.isAuthenticationOnly, cached.isFor(tenant: tenant), cached.hasAuthentication(authentication, acceptance: acceptance) {
            return cached
        }
        let made = RecordExtras(
            abandonedBecause: nil, authentication: authentication, scenarioRule: nil, faults: [], acceptance: acceptance, tenant: tenant
        )
        cache = made
        return made
    }

    /// Nothing in it belongs to one request alone: it may be shared by the next recordings that are the same.
    /// Stored, as is `isAuthenticationOnly`: asked on every request, and working them out from the optionals
    /// copied each one out and back.
    let isShareable: Bool
    let isAuthenticationOnly: Bool

    let abandonedBecause: String?
    let authentication: AuthenticationRecord?
    let scenarioRule: String?
    let faults: [String]
    /// What a request of the broadcast API was (`nil` for a device push).
    let broadcast: BroadcastRecord?
    /// What the payload gets wrong that APNs accepts (see ``PayloadWarning``).
    let warnings: [PayloadWarning]
    /// The connection's token acceptance that gave `authentication` (see `AuthenticationOutcome.acceptance`; 0:
    /// none). The extras are shared by one connection's recordings only, so the number names one record.
    let acceptance: UInt64
    /// The tenant the request was decided for (`--tenants`; `nil` when off).
    let tenant: String?

    init(
        abandonedBecause: String?, authentication: AuthenticationRecord?, scenarioRule: String?, faults: [String],
        broadcast: BroadcastRecord? = nil, warnings: [PayloadWarning] = [], acceptance: UInt64 = 0, tenant: String? = nil
    ) {
        self.tenant = tenant
        self.warnings = warnings
        self.acceptance = acceptance
        self.abandonedBecause = abandonedBecause
        self.authentication = authentication
        self.scenarioRule = scenarioRule
        self.faults = faults
        self.broadcast = broadcast
        isShareable = abandonedBecause == nil && scenarioRule == nil && faults.isEmpty
        isAuthenticationOnly = isShareable && broadcast.isNone && warnings.isEmpty
    }

    /// `cache` when a recording of a token push with acceptance `acceptance` (see `AuthenticationOutcome`) and no
    /// abandonment, rule, fault, broadcast or warning may share it as it is, without its record at hand.
    static func shared(acceptance: UInt64, tenant: String?, cache: RecordExtras?) -> RecordExtras? {
        guard acceptance != 0, let cache, cache.isAuthenticationOnly, cache.acceptance == acceptance, cache.isFor(tenant: tenant) else { return nil }
        return cache
    }

    /// `tenant == self.tenant`, by case first: without tenants both are `nil`, and the `Optional` `==` copied both
    /// into a tuple on every request to find that out.
    func isFor(tenant other: String?) -> Bool {
        if other.isNone { return tenant.isNone }
        return tenant == other
    }

    /// `authentication == other`, with the stored record read in place: passed to a function or compared with
    /// the `Optional` `==`, it was copied out of the object and destroyed again on every request. A record from the
    /// same token acceptance as this one's is the same without looking: a token record compared with the `Optional`
    /// `==` copied both records into a tuple first, retaining and releasing every string in them.
    func hasAuthentication(_ other: AuthenticationRecord?, acceptance: UInt64) -> Bool {
        if acceptance != 0, acceptance == self.acceptance { return true }
        switch authentication {
        case nil:
            return other.isNone
        case .none?:
            if case .none? = other { return true }
            return false
        case .missing?:
            if case .missing? = other { return true }
            return false
        case .token?, .certificate?:
            return authentication == other
        }
    }
}
