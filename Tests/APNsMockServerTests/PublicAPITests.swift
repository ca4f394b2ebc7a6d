import Foundation
import Testing

/// The library products' public API is what docs/api/ lists: a change to it shows as a diff there. Every public
/// symbol is documented, and each module's DocC catalog builds without warnings.
@Suite("Public API")
struct PublicAPITests {
    @Test(.timeLimit(.minutes(2)))
    func isTheCommittedListingDocumentedAndItsCatalogsBuild() async throws {
        let root = TestPaths.repositoryRoot
        let result = try await ExternalTool.run(
            root.appendingPathComponent("scripts/api-listing").path, ["--check"], workingDirectory: root, timeout: .seconds(110)
        )
        #expect(result.exitCode == 0, "\(result)")
    }
}
