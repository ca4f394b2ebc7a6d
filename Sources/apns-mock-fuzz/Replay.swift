#if !FUZZING
import Foundation

/// Without libFuzzer (a normal build): runs files through a target, to replay a crash libFuzzer found or to check
/// the seed corpus in the test suite.
///
///   apns-mock-fuzz TARGET FILE|DIRECTORY...
@main
struct Replay {
    static func main() throws {
        let arguments = CommandLine.arguments.dropFirst()
        guard let name = arguments.first, let target = FuzzTarget(rawValue: name), arguments.count > 1 else {
            let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: "|")
            FileHandle.standardError.write(Data("usage: apns-mock-fuzz \(names) FILE|DIRECTORY...\n".utf8))
            exit(2)
        }
        var count = 0
        for path in arguments.dropFirst() {
            for file in try files(at: path) {
                target.run(Array(try Data(contentsOf: URL(fileURLWithPath: file))))
                count += 1
            }
        }
        print("\(target.rawValue): \(count) inputs ran")
    }

    static func files(at path: String) throws -> [String] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue else { return [path] }
        return try FileManager.default.contentsOfDirectory(atPath: path).sorted().map { path + "/" + $0 }
    }
}
#endif
