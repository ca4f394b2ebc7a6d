/// What the mock has received so far (`GET /admin/stats`).
public struct MockStatistics: Sendable, Hashable, Decodable {
    /// The recorder's own counts.
    public struct Recorder: Sendable, Hashable, Decodable {
        /// Recordings held now.
        public var stored: Int
        /// The most it holds (`--max-recorded`).
        public var capacity: Int
        /// Dropped, oldest first, to stay within `capacity` (or the retention).
        public var evicted: Int
        /// Of `evicted`, those dropped for their age.
        public var expired: Int?
        /// How long a recording is kept (`--retention`, such as `7d`); `nil`: as long as `capacity` allows.
        public var retention: String?
    }

    /// Provider connections.
    public struct Connections: Sendable, Hashable, Decodable {
        /// Open now.
        public var open: Int
        /// Accepted since the start.
        public var accepted: Int
    }

    /// A consumer of recordings besides the store (the record file, the live feed) and how far behind it is.
    public struct Sink: Sendable, Hashable, Decodable {
        /// `file`, `live`.
        public var name: String
        /// `lossless` or `skip-ahead`.
        public var policy: String
        /// The most recordings its queue holds.
        public var capacity: Int
        /// Recordings waiting to be written now.
        public var queued: Int
        /// The most that ever waited.
        public var peakQueued: Int
        /// Recordings written.
        public var written: Int
        /// Recordings a skip-ahead sink dropped because it fell behind.
        public var skipped: Int
        /// Times a lossless sink paused the provider port's reads.
        public var backPressurePauses: Int
        /// The last write error, if any.
        public var lastError: String?
    }

    /// Requests recorded since the start or the last clear.
    public var received: Int
    /// Answers by HTTP status (`"200"`, `"410"`, …).
    public var byStatus: [String: Int]
    /// Error answers by APNs reason.
    public var byReason: [String: Int]
    /// Requests by kind (`push`, `broadcast`, …).
    public var byKind: [String: Int]
    /// Payload warnings by code.
    public var byWarning: [String: Int]
    /// Requests that were never answered.
    public var abandoned: Int
    /// The in-memory store: how many recordings it holds, can hold and has evicted.
    public var recorder: Recorder
    /// The provider connections open now and accepted since the start.
    public var connections: Connections
    /// Every sink (the memory store, the record file, a database, the live feed) with its queue and counts.
    public var sinks: [Sink]
    /// Who can reach the admin API.
    public var adminAccess: AdminAccess?

    /// The admin API's listen address, whether it asks for a token, and the warning when it is open to a network.
    public struct AdminAccess: Sendable, Hashable, Decodable {
        /// `--admin-host`.
        public var host: String
        /// Only this machine can reach it.
        public var loopback: Bool
        /// It asks for `--admin-token`.
        public var token: Bool
        /// Set when it listens beyond loopback without a token.
        public var warning: String?
    }
}
