import Foundation
import Subprocess
import Synchronization
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// How a child process ended.
public enum ChildExit: Sendable, Equatable, CustomStringConvertible {
    case exited(Int32)
    case signalled(Int32)

    /// The exit code, or the number of the signal that ended the process (Foundation's `terminationStatus`).
    public var status: Int32 {
        switch self {
        case .exited(let code), .signalled(let code): code
        }
    }

    /// A signal ended the process (it did not exit by itself).
    public var bySignal: Bool {
        if case .signalled = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .exited(let code): "exit \(code)"
        case .signalled(let signal): "signal \(signal)"
        }
    }
}

/// A program the tests start: curl, h2load, openssl, Python clients, apns-mock itself.
///
/// Not Foundation's `Process`: on Linux its `run()` copies 256 bytes from every `/proc/self/fd` entry, past the end
/// of glibc's directory buffer, and crashed the whole test run (SIGSEGV in `Process.run`) when the test process held
/// ~1,350 descriptors, as it does while every suite starts its servers at once (swift-corelibs-foundation #5472).
/// swift-subprocess closes the child's descriptors with `close_range` and resets its signal mask, so a child started
/// from a thread that blocks SIGTERM still obeys one.
///
/// Output goes to files the caller names, which can be read while the program runs and cannot fill up and stall it.
public final class ChildProcess: Sendable {
    /// The child's process id, for logs and for `/proc`.
    public let pid: Int32
    private let ending: Task<ChildExit, any Error>
    private let ended: EndedBox

    private init(pid: Int32, ending: Task<ChildExit, any Error>, ended: EndedBox) {
        self.pid = pid
        self.ending = ending
        self.ended = ended
    }

    /// Starts `executable` (a full path) with standard output and error appended to the files at `stdout` and
    /// `stderr`, and standard input read from `stdin` (`/dev/null` when `nil`). `environment` replaces the test
    /// process's when given.
    public static func start(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        stdin: String? = nil,
        stdout: String,
        stderr: String
    ) async throws -> ChildProcess {
        // Standard input from /dev/null when none is given, so both cases take the same path.
        var opened: [FileDescriptor] = []
        let input: FileDescriptor, output: FileDescriptor, error: FileDescriptor
        do {
            input = try FileDescriptor.open(FilePath(stdin ?? "/dev/null"), .readOnly)
            opened.append(input)
            output = try FileDescriptor.open(FilePath(stdout), .writeOnly, options: [.create, .append], permissions: .ownerReadWrite)
            opened.append(output)
            error = try FileDescriptor.open(FilePath(stderr), .writeOnly, options: [.create, .append], permissions: .ownerReadWrite)
        } catch let failure {
            for descriptor in opened { try? descriptor.close() }
            throw failure
        }
        let subprocessEnvironment: Environment = environment.map { variables in
            // A name swift-subprocess refuses (empty, or with "=") cannot be set by any program either: left out.
            .custom(Dictionary(uniqueKeysWithValues: variables.compactMap { name, value in Environment.Key(rawValue: name).map { ($0, value) } }))
        } ?? .inherit
        let (started, announce) = AsyncStream<Int32>.makeStream()
        let ended = EndedBox()
        let ending = Task { () throws -> ChildExit in
            defer { announce.finish() }
            let configuration = Configuration(
                executable: .path(FilePath(executable)),
                arguments: Arguments(arguments),
                environment: subprocessEnvironment,
                workingDirectory: workingDirectory.map { FilePath($0) }
            )
            // The body only reports the process id; `run` returns once the process has ended.
            let result = try await Subprocess.run(
                configuration,
                input: .fileDescriptor(input, closeAfterSpawningProcess: true),
                output: .fileDescriptor(output, closeAfterSpawningProcess: true),
                error: .fileDescriptor(error, closeAfterSpawningProcess: true)
            ) { execution in announce.yield(execution.processIdentifier.value) }
            let exit: ChildExit = switch result.terminationStatus {
            case .exited(let code): .exited(code)
            case .signaled(let signal): .signalled(signal)
            }
            ended.exit.withLock { $0 = exit }
            return exit
        }
        var pids = started.makeAsyncIterator()
        guard let pid = await pids.next() else {
            // It never started: `ending` holds why.
            _ = try await ending.value
            throw ChildProcessError(description: "\(executable) ended before it started")
        }
        return ChildProcess(pid: pid, ending: ending, ended: ended)
    }

    /// Runs `executable` to its end, feeding it `stdin` (nothing when `nil`), and returns what it printed, killing
    /// it after `timeout` (`timedOut` then says so). With `includingErrors`, standard error goes into `stdout` in
    /// the order written, as a shared pipe would have it, and `stderr` is empty.
    public static func capture(
        _ executable: String,
        _ arguments: [String],
        stdin: Data? = nil,
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        includingErrors: Bool = false,
        timeout: Duration
    ) async throws -> ChildRun {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-child-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdoutPath = scratch.appendingPathComponent("stdout").path
        let stderrPath = includingErrors ? stdoutPath : scratch.appendingPathComponent("stderr").path
        let stdinPath = try stdin.map { bytes in
            let path = scratch.appendingPathComponent("stdin").path
            try bytes.write(to: URL(fileURLWithPath: path))
            return path
        }
        let child = try await start(
            executable, arguments, environment: environment, workingDirectory: workingDirectory,
            stdin: stdinPath, stdout: stdoutPath, stderr: stderrPath
        )
        let (exit, timedOut) = try await child.waitForExit(killingAfter: timeout)
        func read(_ path: String) -> String {
            String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: path))) ?? Data(), as: UTF8.self)
        }
        return ChildRun(exit: exit, stdout: read(stdoutPath), stderr: includingErrors ? "" : read(stderrPath), timedOut: timedOut)
    }

    /// ``capture(_:_:stdin:environment:workingDirectory:includingErrors:timeout:)`` for a program that must finish:
    /// past `timeout` it is killed and that is an error. Returns how it ended and its standard output.
    public static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String]? = nil,
        workingDirectory: String? = nil,
        includingErrors: Bool = false,
        timeout: Duration = .seconds(60)
    ) async throws -> (exit: ChildExit, output: String) {
        let run = try await capture(
            executable, arguments, environment: environment, workingDirectory: workingDirectory,
            includingErrors: includingErrors, timeout: timeout
        )
        if run.timedOut { throw ChildProcessError(description: "\(executable) \(arguments) still ran after \(timeout): killed\n\(run.stdout)") }
        return (run.exit, run.stdout)
    }

    /// How it ended, or `nil` while it runs.
    public var exit: ChildExit? { ended.exit.withLock { $0 } }

    /// Sends `number` to the process, unless it has already ended.
    public func signal(_ number: Int32) {
        // The id is free for reuse once swift-subprocess has reaped the process, just before the end is recorded here;
        // Linux hands out ids in rising order, so no other process gets it within that moment.
        ended.exit.withLock { exit in
            if exit == nil { _ = kill(pid, number) }
        }
    }

    /// Waits until the process has ended.
    public func waitForExit() async throws -> ChildExit {
        try await ending.value
    }

    /// Waits until the process has ended, killing it (SIGKILL) if it still runs after `timeout`: a stalled tool
    /// must not hang the test run. `timedOut` says whether the deadline came first.
    public func waitForExit(killingAfter timeout: Duration) async throws -> (exit: ChildExit, timedOut: Bool) {
        let deadline = Task { () -> Bool in
            do { try await Task.sleep(for: timeout) } catch { return false }
            signal(SIGKILL)
            return true
        }
        let exit = try await ending.value
        deadline.cancel()
        return (exit, await deadline.value)
    }
}

/// How the process ended, shared by the task that waits for it and the ``ChildProcess`` that reports it.
private final class EndedBox: Sendable {
    let exit = Mutex<ChildExit?>(nil)
}

/// What a program run to its end did.
public struct ChildRun: Sendable {
    public var exit: ChildExit
    public var stdout: String
    public var stderr: String
    /// It ran past its deadline and was killed.
    public var timedOut: Bool
}

/// A child process could not be started.
public struct ChildProcessError: Error, CustomStringConvertible {
    public var description: String
}
