#if FUZZING
import Foundation

/// The target libFuzzer drives, from `APNS_MOCK_FUZZ_TARGET` (scripts/fuzz sets it); read once.
let selectedTarget: FuzzTarget = {
    guard let name = ProcessInfo.processInfo.environment["APNS_MOCK_FUZZ_TARGET"], let target = FuzzTarget(rawValue: name) else {
        let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: ", ")
        FileHandle.standardError.write(Data("apns-mock-fuzz: set APNS_MOCK_FUZZ_TARGET to one of: \(names)\n".utf8))
        exit(2)
    }
    return target
}()

/// libFuzzer's entry point: built with `-sanitize=fuzzer` (scripts/fuzz), libFuzzer supplies `main`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    selectedTarget.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#endif
