/// Which APNs the mock stands in for: the sandbox (`api.sandbox.push.apple.com`) or production.
package enum APNsEnvironment: String, Sendable, CaseIterable, Codable {
    case development
    case production
}
