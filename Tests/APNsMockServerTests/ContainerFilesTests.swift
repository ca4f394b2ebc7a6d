import ChildProcesses
import APNsMockServer
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Docker is not available where these tests run, so the container files are checked without it:
// the Dockerfile is parsed (every path it copies must exist and pass .dockerignore; the runtime stage runs as a
// non-root user, checks /healthz, exposes the ports), the image's exact command line (ENTRYPOINT + CMD with its
// ENV, paths mapped back to the repository) is run outside a container until /healthz answers and then stopped
// with SIGTERM, and docker-compose.yml is validated by Debian's `docker-compose config`.

// MARK: - A small Dockerfile parser

/// One instruction: its keyword (upper case), its arguments with continuation lines joined, and the line it
/// starts on.
struct DockerfileInstruction: Sendable, CustomStringConvertible {
    var keyword: String
    var arguments: String
    var line: Int

    var description: String { "line \(line): \(keyword) \(arguments)" }

    /// `["a", "b"]` (exec form) as its strings, or `nil` when the arguments are in shell form.
    var execForm: [String]? {
        Self.jsonArray(arguments)
    }

    /// Splits `--name=value` flags from the words that follow them (COPY, ADD, HEALTHCHECK, FROM).
    var flagsAndWords: (flags: [String: String], words: [String]) {
        var flags: [String: String] = [:]
        var rest = Substring(arguments)
        while true {
            rest = rest.drop(while: \.isWhitespace)
            guard rest.hasPrefix("--") else { break }
            let word = rest.prefix { !$0.isWhitespace }
            rest = rest.dropFirst(word.count)
            let body = word.dropFirst(2)
            if let equals = body.firstIndex(of: "=") {
                flags[String(body[..<equals])] = String(body[body.index(after: equals)...])
            } else {
                flags[String(body)] = ""
            }
        }
        let text = String(rest).trimmingCharacters(in: .whitespaces)
        let words = Self.jsonArray(text) ?? ShellWords.split(text)
        return (flags, words)
    }

    static func jsonArray(_ text: String) -> [String]? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("["), let data = trimmed.data(using: .utf8),
            let array = try? JSONSerialization.jsonObject(with: data) as? [Any]
        else { return nil }
        let strings = array.compactMap { $0 as? String }
        return strings.count == array.count ? strings : nil
    }
}

/// A build stage: `FROM image [AS name]` and the instructions up to the next `FROM`.
struct DockerfileStage: Sendable {
    var index: Int
    var baseImage: String
    var name: String?
    var instructions: [DockerfileInstruction]

    func all(_ keyword: String) -> [DockerfileInstruction] { instructions.filter { $0.keyword == keyword } }
    func last(_ keyword: String) -> DockerfileInstruction? { instructions.last { $0.keyword == keyword } }

    /// The variables the stage's `ENV` instructions set, in order (later ones win).
    func environment() throws -> [(name: String, value: String)] {
        var variables: [(String, String)] = []
        for instruction in all("ENV") {
            let words = ShellWords.split(instruction.arguments)
            guard let first = words.first else { throw TestFailure("empty ENV at \(instruction)") }
            if first.contains("=") {
                for word in words {
                    guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                        throw TestFailure("ENV word '\(word)' is not NAME=value at \(instruction)")
                    }
                    variables.append((String(word[..<equals]), String(word[word.index(after: equals)...])))
                }
            } else {
                // The legacy form: ENV NAME value with spaces.
                variables.append((first, words.dropFirst().joined(separator: " ")))
            }
        }
        return variables
    }
}

/// A `COPY` or `ADD`: where from (the build context or a stage), which sources, where to.
struct DockerfileCopy: Sendable {
    var instruction: DockerfileInstruction
    var from: String?
    var sources: [String]
    var destination: String
}

struct Dockerfile: Sendable {
    var stages: [DockerfileStage]
    /// `ARG`s before the first `FROM`.
    var globalArguments: [DockerfileInstruction]

    var runtimeStage: DockerfileStage { stages[stages.count - 1] }

    func stage(named reference: String) -> DockerfileStage? {
        if let index = Int(reference), stages.indices.contains(index) { return stages[index] }
        return stages.first { $0.name?.lowercased() == reference.lowercased() }
    }

    /// Parses Dockerfile text the way Docker reads it: `#` lines are comments (also between continuation
    /// lines, where Docker drops them too), a trailing backslash continues the instruction on the next line,
    /// blank lines inside a continuation are skipped, `FROM` starts a stage. Heredocs and a non-default
    /// `# escape=` directive are refused rather than misread.
    static func parse(_ text: String) throws -> Dockerfile {
        var instructions: [DockerfileInstruction] = []
        var pending: (text: String, line: Int)?
        var sawInstruction = false
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let lineNumber = offset + 1
            let line = rawLine.hasSuffix("\r") ? String(rawLine.dropLast()) : String(rawLine)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("#") {
                if !sawInstruction, pending == nil {
                    let directive = trimmed.dropFirst().trimmingCharacters(in: .whitespaces).lowercased()
                    if directive.hasPrefix("escape="), !directive.hasSuffix("\\") {
                        throw TestFailure("line \(lineNumber): a non-default escape directive is not supported")
                    }
                }
                continue
            }
            if trimmed.isEmpty { continue }
            sawInstruction = true
            var content = pending.map { $0.text } ?? ""
            let startLine = pending?.line ?? lineNumber
            // As Docker: a backslash at the end of the line (trailing blanks allowed) continues it.
            if trimmed.hasSuffix("\\") {
                var body = line
                while body.last == " " || body.last == "\t" { body.removeLast() }
                body.removeLast()
                pending = (content + body, startLine)
                continue
            }
            content += line
            pending = nil
            instructions.append(try instruction(content, line: startLine))
        }
        if let pending {
            throw TestFailure("line \(pending.line): the last instruction ends with a continuation backslash")
        }

        var stages: [DockerfileStage] = []
        var global: [DockerfileInstruction] = []
        for instruction in instructions {
            if instruction.keyword == "FROM" {
                let words = instruction.flagsAndWords.words
                guard let image = words.first else { throw TestFailure("FROM without an image at \(instruction)") }
                var name: String?
                if words.count == 3, words[1].uppercased() == "AS" {
                    name = words[2]
                } else if words.count != 1 {
                    throw TestFailure("cannot read \(instruction)")
                }
                stages.append(DockerfileStage(index: stages.count, baseImage: image, name: name, instructions: []))
            } else if stages.isEmpty {
                guard instruction.keyword == "ARG" else {
                    throw TestFailure("\(instruction) comes before the first FROM (only ARG may)")
                }
                global.append(instruction)
            } else {
                stages[stages.count - 1].instructions.append(instruction)
            }
        }
        guard !stages.isEmpty else { throw TestFailure("the Dockerfile has no FROM") }
        return Dockerfile(stages: stages, globalArguments: global)
    }

    private static func instruction(_ content: String, line: Int) throws -> DockerfileInstruction {
        let trimmed = content.trimmingCharacters(in: .whitespaces)
        let keyword = trimmed.prefix { !$0.isWhitespace }
        let arguments = trimmed.dropFirst(keyword.count).trimmingCharacters(in: .whitespaces)
        let known: Set<String> = [
            "FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME",
            "USER", "WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL",
        ]
        let upper = keyword.uppercased()
        guard known.contains(upper) else { throw TestFailure("line \(line): unknown instruction '\(keyword)'") }
        if ["RUN", "COPY", "ADD"].contains(upper), arguments.range(of: #"<<-?["']?[A-Za-z_]"#, options: .regularExpression) != nil {
            throw TestFailure("line \(line): heredocs are not supported by this parser")
        }
        return DockerfileInstruction(keyword: upper, arguments: arguments, line: line)
    }

    /// Every `COPY` and `ADD` of a stage.
    func copies(in stage: DockerfileStage) throws -> [DockerfileCopy] {
        try stage.instructions.filter { $0.keyword == "COPY" || $0.keyword == "ADD" }.map { instruction in
            let (flags, words) = instruction.flagsAndWords
            guard words.count >= 2 else { throw TestFailure("\(instruction) needs a source and a destination") }
            return DockerfileCopy(
                instruction: instruction,
                from: flags["from"],
                sources: Array(words.dropLast()),
                destination: words[words.count - 1]
            )
        }
    }
}

/// Splits text into words as a POSIX shell would for quoting purposes: whitespace separates, single and double
/// quotes group, a backslash escapes the next character. (No expansion: the Dockerfile here has none to do.)
enum ShellWords {
    static func split(_ text: String) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
                continue
            }
            if let open = quote {
                if character == open {
                    quote = nil
                } else if character == "\\", open == "\"" {
                    escaped = true
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case "\\":
                escaped = true
                inWord = true
            case "\"", "'":
                quote = character
                inWord = true
            case _ where character.isWhitespace:
                if inWord { words.append(current) }
                current = ""
                inWord = false
            default:
                current.append(character)
                inWord = true
            }
        }
        if inWord { words.append(current) }
        return words
    }
}

// MARK: - Paths in the build context

/// The repository as a Docker build context: wildcard expansion and `.dockerignore`.
struct BuildContext: Sendable {
    let root: URL
    /// `.dockerignore` patterns in order; `true` for an exception (`!pattern`).
    let ignorePatterns: [(pattern: String, exception: Bool)]

    init(root: URL) throws {
        self.root = root
        let ignoreFile = root.appendingPathComponent(".dockerignore")
        var patterns: [(String, Bool)] = []
        if let text = try? String(contentsOf: ignoreFile, encoding: .utf8) {
            for rawLine in text.split(separator: "\n") {
                var line = rawLine.trimmingCharacters(in: .whitespaces)
                if line.isEmpty || line.hasPrefix("#") { continue }
                let exception = line.hasPrefix("!")
                if exception { line = String(line.dropFirst()).trimmingCharacters(in: .whitespaces) }
                patterns.append((Self.clean(line), exception))
            }
        }
        ignorePatterns = patterns
    }

    static func clean(_ path: String) -> String {
        var parts: [Substring] = []
        for part in path.split(separator: "/") where part != "." && !part.isEmpty {
            if part == "..", !parts.isEmpty, parts.last != ".." { parts.removeLast() } else { parts.append(part) }
        }
        return parts.joined(separator: "/")
    }

    static func hasWildcard(_ path: String) -> Bool { path.contains { "*?[".contains($0) } }

    /// The context paths a `COPY` source names: itself when it exists, the matches of a wildcard.
    func expand(_ source: String) -> [String] {
        let cleaned = Self.clean(source)
        if cleaned.hasPrefix("..") { return [] }
        var candidates = [""]
        for component in cleaned.split(separator: "/").map(String.init) {
            var next: [String] = []
            for base in candidates {
                let directory = base.isEmpty ? root.path : root.appendingPathComponent(base).path
                if Self.hasWildcard(component) {
                    let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                    for entry in entries.sorted() where fnmatch(component, entry, FNM_PERIOD) == 0 {
                        next.append(base.isEmpty ? entry : base + "/" + entry)
                    }
                } else if FileManager.default.fileExists(atPath: directory + "/" + component) {
                    next.append(base.isEmpty ? component : base + "/" + component)
                }
            }
            candidates = next
        }
        return cleaned.isEmpty ? [""] : candidates
    }

    /// Whether `.dockerignore` keeps `path` out of the context. As Docker decides: the last pattern that
    /// matches the path or one of its parent folders wins.
    func isIgnored(_ path: String) -> Bool {
        let components = Self.clean(path).split(separator: "/").map(String.init)
        var ignored = false
        for (pattern, exception) in ignorePatterns {
            let regex = Self.regex(for: pattern)
            let matches = (1...max(components.count, 1)).contains { length in
                let prefix = components.prefix(length).joined(separator: "/")
                return prefix.range(of: regex, options: .regularExpression) != nil
            }
            if matches { ignored = !exception }
        }
        return ignored
    }

    /// A `.dockerignore` pattern as an anchored regular expression: `**` any number of folders, `*` and `?`
    /// within one path component, `[…]` a character class.
    static func regex(for pattern: String) -> String {
        var regex = "^"
        let characters = Array(pattern)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            switch character {
            case "*":
                if index + 1 < characters.count, characters[index + 1] == "*" {
                    index += 1
                    if index + 1 < characters.count, characters[index + 1] == "/" {
                        index += 1
                        regex += "(.*/)?"
                    } else {
                        regex += ".*"
                    }
                } else {
                    regex += "[^/]*"
                }
            case "?":
                regex += "[^/]"
            case "[":
                if let close = characters[index...].firstIndex(of: "]") {
                    var body = String(characters[(index + 1)..<close])
                    if body.hasPrefix("!") { body = "^" + body.dropFirst() }
                    regex += "[" + body + "]"
                    index = close
                } else {
                    regex += "\\["
                }
            case "\\":
                if index + 1 < characters.count {
                    index += 1
                    regex += NSRegularExpression.escapedPattern(for: String(characters[index]))
                }
            default:
                regex += NSRegularExpression.escapedPattern(for: String(character))
            }
            index += 1
        }
        return regex + "$"
    }
}

// MARK: - The image's command line, outside a container

/// What the image runs: `ENTRYPOINT` + `CMD`, with the runtime stage's `ENV`.
struct ImageCommand: Sendable {
    var arguments: [String]
    var environment: [(name: String, value: String)]

    static func from(_ dockerfile: Dockerfile) throws -> ImageCommand {
        let stage = dockerfile.runtimeStage
        guard let entrypoint = stage.last("ENTRYPOINT") else { throw TestFailure("the runtime stage has no ENTRYPOINT") }
        guard let entrypointWords = entrypoint.execForm, !entrypointWords.isEmpty else {
            throw TestFailure("ENTRYPOINT must be in exec form (a JSON array) so signals reach apns-mock: \(entrypoint)")
        }
        var cmdWords: [String] = []
        if let cmd = stage.last("CMD") {
            guard let words = cmd.execForm else { throw TestFailure("CMD must be in exec form: \(cmd)") }
            cmdWords = words
        }
        return ImageCommand(arguments: entrypointWords + cmdWords, environment: try stage.environment())
    }
}

/// Maps paths inside the image back to where they come from in the repository, using the runtime stage's
/// `COPY` instructions from the build context (`/etc/apns-mock/certs` → `<repo>/Certs`).
struct ImagePathMap: Sendable {
    var mappings: [(imagePath: String, repositoryPath: String)]
    /// Destinations of `COPY --from=<stage>`: files only the image has.
    var stageOnlyPaths: [String]

    init(dockerfile: Dockerfile, context: BuildContext) throws {
        mappings = []
        stageOnlyPaths = []
        for copy in try dockerfile.copies(in: dockerfile.runtimeStage) {
            let destination = Self.normalize(copy.destination)
            if copy.from != nil {
                stageOnlyPaths.append(destination)
                continue
            }
            guard copy.sources.count == 1, let source = context.expand(copy.sources[0]).first else { continue }
            mappings.append((destination, context.root.appendingPathComponent(source).path))
        }
    }

    static func normalize(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// The repository path for an image path, or `nil` when the image path comes from no context `COPY`.
    func repositoryPath(for imagePath: String) -> String? {
        let path = Self.normalize(imagePath)
        for (imageRoot, repositoryRoot) in mappings {
            if path == imageRoot { return repositoryRoot }
            if path.hasPrefix(imageRoot + "/") { return repositoryRoot + path.dropFirst(imageRoot.count) }
        }
        return nil
    }
}

/// Runs a process with a given environment and working folder, its output in files that can be read while it
/// runs (so the start-up log line can be waited for).
final class LaunchedProcess: Sendable {
    let process: ChildProcess
    let scratch: URL
    let stdoutURL: URL
    let stderrURL: URL

    init(executable: String, arguments: [String], environment: [String: String], workingDirectory: URL) async throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("apns-mock-image-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        stdoutURL = scratch.appendingPathComponent("stdout")
        stderrURL = scratch.appendingPathComponent("stderr")
        process = try await ChildProcess.start(
            executable, arguments, environment: environment, workingDirectory: workingDirectory.path,
            stdout: stdoutURL.path, stderr: stderrURL.path
        )
    }

    var stdout: String { String(decoding: (try? Data(contentsOf: stdoutURL)) ?? Data(), as: UTF8.self) }
    var stderr: String { String(decoding: (try? Data(contentsOf: stderrURL)) ?? Data(), as: UTF8.self) }
    /// The exit code (or the signal's number), once the process has ended.
    var exitStatus: Int32? { process.exit?.status }
    var exitedBySignal: Bool { process.exit?.bySignal ?? false }
    var pid: Int32 { process.pid }

    func signal(_ number: Int32) {
        process.signal(number)
    }

    /// The exit status, once the process has ended, or `nil` when `timeout` passes first.
    func waitForExit(timeout: Duration) async throws -> Int32? {
        do {
            return try await poll(timeout: timeout, "the process to exit") { self.exitStatus }
        } catch is TestFailure {
            return nil
        }
    }

    /// Kills the process if it still runs (swift-subprocess reaps it) and removes its output files.
    func cleanUp() {
        process.signal(SIGKILL)
        try? FileManager.default.removeItem(at: scratch)
    }

    var output: String { "stdout:\n\(stdout.suffix(4000))\nstderr:\n\(stderr.suffix(4000))" }
}

// MARK: - The tests

@Suite("Container files: Dockerfile, .dockerignore, docker-compose.yml")
struct ContainerFilesTests {
    static let root = TestPaths.repositoryRoot

    static func dockerfile() throws -> Dockerfile {
        try Dockerfile.parse(String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8))
    }

    // MARK: The parser itself

    @Test func parserJoinsContinuationsSkipsCommentsAndSplitsStages() throws {
        let text = """
            # syntax=docker/dockerfile:1
            ARG BASE=debian:bookworm-slim
            FROM swift:6.2 AS build
            RUN apt-get update \\
                # a comment between continuation lines, dropped as Docker drops it
                && apt-get install -y \\

                    pkg-config
            COPY --from=build /a /b
            FROM ${BASE}
            ENV A=1 B="two words" \\
                C=/etc/x
            ENV LEGACY value with spaces
            CMD ["serve", "--port", "1"]
            """
        let dockerfile = try Dockerfile.parse(text)
        #expect(dockerfile.globalArguments.count == 1)
        #expect(dockerfile.stages.count == 2)
        #expect(dockerfile.stages[0].name == "build")
        #expect(dockerfile.stage(named: "BUILD")?.index == 0)
        let run = try #require(dockerfile.stages[0].last("RUN"))
        #expect(ShellWords.split(run.arguments) == ["apt-get", "update", "&&", "apt-get", "install", "-y", "pkg-config"])
        #expect(run.line == 4)
        let copy = try #require(try dockerfile.copies(in: dockerfile.stages[0]).first)
        #expect(copy.from == "build" && copy.sources == ["/a"] && copy.destination == "/b")
        let environment = try dockerfile.stages[1].environment()
        #expect(environment.map(\.name) == ["A", "B", "C", "LEGACY"])
        #expect(environment.map(\.value) == ["1", "two words", "/etc/x", "value with spaces"])
        #expect(dockerfile.stages[1].last("CMD")?.execForm == ["serve", "--port", "1"])
        #expect(throws: TestFailure.self) { try Dockerfile.parse("RUN echo before FROM") }
        #expect(throws: TestFailure.self) { try Dockerfile.parse("FROM a\nRUN <<EOF\necho\nEOF") }
        #expect(throws: TestFailure.self) { try Dockerfile.parse("FROM a\nRUN echo \\") }
    }

    @Test func dockerignoreMatchingFollowsDockersRules() throws {
        let context = try BuildContext(root: Self.root)
        // The repository's own .dockerignore admits only what the Dockerfile copies.
        #expect(!context.isIgnored("Sources/apns-mock/ServeCommand.swift"))
        #expect(!context.isIgnored("Certs/ca.pem"))
        #expect(!context.isIgnored("Package.swift"))
        #expect(context.isIgnored(".build/debug/apns-mock"))
        #expect(context.isIgnored(".git/HEAD"))
        #expect(context.isIgnored("Sources/.build/anything"))
        #expect(context.isIgnored("bench/results/x.json"))
        #expect(BuildContext.regex(for: "**/.build") == "^(.*/)?\\.build$")
        #expect("a/b/c.swift".range(of: BuildContext.regex(for: "a/**"), options: .regularExpression) != nil)
        #expect("a/b".range(of: BuildContext.regex(for: "a/*/c"), options: .regularExpression) == nil)
    }

    // MARK: The Dockerfile

    @Test func everyCopiedPathExistsAndIsInTheContext() throws {
        let dockerfile = try Self.dockerfile()
        let context = try BuildContext(root: Self.root)
        let text = try String(contentsOf: Self.root.appendingPathComponent("Dockerfile"), encoding: .utf8)
        let requiresBuildKit = text.hasPrefix("# syntax=docker/dockerfile:")
        var checked = 0
        for stage in dockerfile.stages {
            for copy in try dockerfile.copies(in: stage) {
                if copy.instruction.keyword == "ADD" {
                    #expect(
                        !copy.sources.contains { $0.contains("://") },
                        "ADD with a URL fetches at build time; copy a file from the repository instead: \(copy.instruction)"
                    )
                }
                if let from = copy.from {
                    // A path in an earlier stage: the stage must exist, and the path must be one it makes.
                    guard let source = dockerfile.stage(named: from) else {
                        Issue.record("\(copy.instruction): --from=\(from) names no earlier stage")
                        continue
                    }
                    #expect(source.index < stage.index, "\(copy.instruction): --from=\(from) is not an earlier stage")
                    let stageText = source.instructions.map(\.arguments).joined(separator: "\n")
                    for path in copy.sources {
                        #expect(
                            stageText.contains(path),
                            "\(copy.instruction): stage '\(from)' never mentions \(path), so nothing makes it there"
                        )
                    }
                    checked += 1
                    continue
                }
                var found = 0
                for source in copy.sources {
                    #expect(!BuildContext.clean(source).hasPrefix(".."), "\(copy.instruction): \(source) is outside the context")
                    let matches = context.expand(source)
                    if !BuildContext.hasWildcard(source) {
                        #expect(!matches.isEmpty, "\(copy.instruction): \(source) does not exist in the repository")
                    }
                    for match in matches {
                        #expect(!context.isIgnored(match), "\(copy.instruction): \(match) is excluded by .dockerignore")
                    }
                    found += matches.count
                }
                // BuildKit copies nothing for a wildcard that matches nothing (Scenario[s] while Scenarios/ has
                // no files); the classic builder would fail, so such a Dockerfile must ask for BuildKit.
                if copy.sources.allSatisfy(BuildContext.hasWildcard) {
                    #expect(requiresBuildKit, "\(copy.instruction) may match nothing: start with # syntax=docker/dockerfile:1")
                } else {
                    #expect(found > 0, "\(copy.instruction): none of its sources exists in the repository")
                }
                checked += 1
            }
        }
        #expect(checked >= 4, "expected COPY instructions for the manifest, sources, the binary and Certs")
    }

    @Test func buildAndRuntimeStagesAreAsDocumented() throws {
        let dockerfile = try Self.dockerfile()
        #expect(dockerfile.stages.count >= 2, "a multi-stage build: the Swift image builds, a slim image runs")
        let build = dockerfile.stages[0]
        #expect(build.baseImage.hasPrefix("swift:"))
        let buildCommands = build.all("RUN").map(\.arguments).joined(separator: "\n")
        #expect(buildCommands.contains("--static-swift-stdlib"))
        #expect(buildCommands.contains("-c release"))
        #expect(buildCommands.contains("libnghttp2-dev"))
        // Cache-friendly order: the manifest is copied (and resolved) before the sources.
        let copies = try dockerfile.copies(in: build)
        let manifest = copies.firstIndex { $0.sources.contains("Package.swift") }
        let sources = copies.firstIndex { $0.sources.contains { $0.hasPrefix("Sources") } }
        #expect(manifest != nil && sources != nil && manifest! < sources!)

        let runtime = dockerfile.runtimeStage
        #expect(!runtime.baseImage.hasPrefix("swift:"), "the runtime stage should be a slim image, not the toolchain")
        let runtimeCommands = runtime.all("RUN").map(\.arguments).joined(separator: "\n")
        #expect(runtimeCommands.contains("libnghttp2-14"), "the runtime stage must install libnghttp2")
        #expect(runtimeCommands.contains("curl"), "HEALTHCHECK uses curl")
    }

    @Test func runtimeStageRunsAsANonRootUser() throws {
        let runtime = try Self.dockerfile().runtimeStage
        let user = try #require(runtime.last("USER"), "the runtime stage has no USER: it would run as root")
        let name = String(user.arguments.split(separator: ":").first ?? "")
        #expect(!["root", "0", ""].contains(name), "USER \(user.arguments) is root")
        if Int(name) == nil {
            let creates = runtime.all("RUN").contains { run in
                let words = ShellWords.split(run.arguments)
                return (words.contains("useradd") || words.contains("adduser")) && words.contains(name)
            }
            #expect(creates, "no RUN creates the user '\(name)' (useradd/adduser)")
        }
        let userAdd = runtime.all("RUN").map(\.arguments).first { $0.contains("useradd") } ?? ""
        #expect(userAdd.contains("--uid 10001"), "the user has the fixed uid 10001, so mounted files can be granted to it")
    }

    @Test func healthCheckHitsHealthzOnTheAdminPort() throws {
        let runtime = try Self.dockerfile().runtimeStage
        let check = try #require(runtime.last("HEALTHCHECK"), "the runtime stage has no HEALTHCHECK")
        let (_, words) = check.flagsAndWords
        #expect(words.first?.uppercased() == "CMD", "HEALTHCHECK \(check.arguments) is not a CMD check")
        // After CMD: exec form (a JSON array) or shell form.
        let afterCMD = check.arguments.range(of: "CMD").map { String(check.arguments[$0.upperBound...]) } ?? ""
        let command = (DockerfileInstruction.jsonArray(afterCMD) ?? ShellWords.split(afterCMD)).joined(separator: " ")
        #expect(command.contains("/healthz"))
        #expect(command.contains("APNS_MOCK_ADMIN_PORT"), "the check should follow APNS_MOCK_ADMIN_PORT")
        #expect(command.contains("8080"), "the check should default to the admin port 8080")
    }

    @Test func exposesTheProviderAndAdminPorts() throws {
        let runtime = try Self.dockerfile().runtimeStage
        let ports = Set(
            runtime.all("EXPOSE").flatMap { ShellWords.split($0.arguments) }
                .compactMap { Int($0.split(separator: "/").first ?? "") }
        )
        #expect(ports.isSuperset(of: [2197, 8080]), "EXPOSE lists \(ports.sorted())")
    }

    @Test func environmentConfiguresTheMockForAContainer() throws {
        let dockerfile = try Self.dockerfile()
        let command = try ImageCommand.from(dockerfile)
        let known = Set(ConfigurationKey.allCases.map(\.environmentVariable))
        var values: [String: String] = [:]
        for (name, value) in command.environment {
            values[name] = value
            if name.hasPrefix("APNS_MOCK_") {
                #expect(known.contains(name), "ENV \(name) is not a setting apns-mock reads")
            }
        }
        #expect(values["APNS_MOCK_HOST"] == "0.0.0.0", "the provider port must listen beyond the container's loopback")
        #expect(values["APNS_MOCK_ADMIN_HOST"] == "0.0.0.0", "the admin API must listen beyond the container's loopback")
        let certs = try #require(values["APNS_MOCK_CERTS_DIR"])
        let map = try ImagePathMap(dockerfile: dockerfile, context: BuildContext(root: Self.root))
        #expect(map.repositoryPath(for: certs) == Self.root.appendingPathComponent("Certs").path)

        // The entrypoint is the installed binary, on the image's PATH.
        let executable = try #require(command.arguments.first)
        let installed = try dockerfile.copies(in: dockerfile.runtimeStage).filter { $0.from != nil }.map(\.destination)
        let path = values["PATH"] ?? "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        let onPath = path.split(separator: ":").contains { installed.contains("\($0)/\(executable)") }
        #expect(
            executable.hasPrefix("/") ? installed.contains(executable) : onPath,
            "ENTRYPOINT runs '\(executable)', which no COPY --from installs on PATH (\(installed))"
        )
        #expect(Array(command.arguments.dropFirst()) == ["serve"])
    }

    // MARK: Running the image's command line outside a container

    /// The built `apns-mock` next to this test binary (the same configuration and scratch path), or in
    /// `.build/debug`.
    static func builtBinary() throws -> String {
        var candidates: [String] = []
        if let testBinary = CommandLine.arguments.first {
            var directory = URL(fileURLWithPath: testBinary).deletingLastPathComponent()
            // On macOS the test binary sits inside a .xctest bundle.
            while directory.path.contains(".xctest") { directory.deleteLastPathComponent() }
            candidates.append(directory.appendingPathComponent("apns-mock").path)
        }
        candidates.append(root.appendingPathComponent(".build/debug/apns-mock").path)
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) { return found }
        throw TestFailure("no built apns-mock at \(candidates); run `swift build --product apns-mock` first")
    }

    /// The environment the image gives apns-mock, mapped to this machine: `APNS_MOCK_*` variables from the
    /// Dockerfile with image paths turned into repository paths, listening on loopback and ephemeral ports.
    /// Other variables (SWIFT_BACKTRACE) tune the Swift runtime and name files only the image has: left out.
    static func imageEnvironment(_ dockerfile: Dockerfile) throws -> (environment: [String: String], arguments: [String]) {
        let command = try ImageCommand.from(dockerfile)
        let map = try ImagePathMap(dockerfile: dockerfile, context: BuildContext(root: root))
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") }
        for (name, value) in command.environment where name.hasPrefix("APNS_MOCK_") {
            if value.hasPrefix("/") {
                guard let mapped = map.repositoryPath(for: value) else {
                    throw TestFailure("ENV \(name)=\(value): no COPY from the repository puts anything there")
                }
                #expect(FileManager.default.fileExists(atPath: mapped), "ENV \(name)=\(value) maps to \(mapped), which is missing")
                environment[name] = mapped
            } else {
                environment[name] = value
            }
        }
        environment["APNS_MOCK_HOST"] = "127.0.0.1"
        environment["APNS_MOCK_ADMIN_HOST"] = "127.0.0.1"
        environment["APNS_MOCK_PORT"] = "0"
        environment["APNS_MOCK_ADMIN_PORT"] = "0"
        environment["APNS_MOCK_CHANNELS_PORT"] = "0"
        let arguments = command.arguments.dropFirst().map { argument in
            argument.hasPrefix("/") ? (map.repositoryPath(for: argument) ?? argument) : argument
        }
        return (environment, Array(arguments))
    }

    /// Starts the image's command line, waits for its start-up line and for `/healthz` to answer 200, runs
    /// `body` with the ports, then stops it with SIGTERM and returns its exit status (`nil`: it did not exit).
    static func withImageCommand(
        _ body: (_ providerPort: Int, _ adminPort: Int, _ environment: [String: String]) async throws -> Void
    ) async throws -> (status: Int32?, bySignal: Bool, output: String) {
        let dockerfile = try dockerfile()
        let (environment, arguments) = try imageEnvironment(dockerfile)
        // A fresh working folder: nothing may depend on the repository being the current directory.
        let workingDirectory = FileManager.default.temporaryDirectory
            .appendingPathComponent("apns-mock-workdir-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: workingDirectory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: workingDirectory) }
        let launched = try await LaunchedProcess(
            executable: try builtBinary(),
            arguments: arguments,
            environment: environment,
            workingDirectory: workingDirectory
        )
        defer { launched.cleanUp() }

        let ports: (provider: Int, admin: Int)
        do {
            ports = try await poll(timeout: .seconds(60), "the start-up line with the ports") {
                if let status = launched.exitStatus {
                    throw TestFailure("apns-mock \(arguments) exited \(status) at start-up")
                }
                return Self.listeningPorts(in: launched.stderr + launched.stdout)
            }
        } catch let failure as TestFailure {
            throw TestFailure("\(failure.description)\n\(launched.output)")
        }
        let admin = AdminClient(port: ports.admin)
        _ = try await poll(timeout: .seconds(30), "/healthz to answer 200") {
            let health = try? await admin.request(.get, "/healthz")
            return health?.status == 200 ? true : nil
        }
        try await body(ports.provider, ports.admin, environment)

        launched.signal(SIGTERM)
        let status = try await launched.waitForExit(timeout: .seconds(20))
        return (status, status != nil && launched.exitedBySignal, launched.output)
    }

    /// The provider and admin ports from the "listening" log line: the https:// URL is the provider port,
    /// the http:// URL the admin API (the line's layout may change; the URLs stay).
    static func listeningPorts(in log: String) -> (provider: Int, admin: Int)? {
        listeningAddresses(in: log).map { ($0["provider"]!, $0["admin"]!) }
    }

    /// Every port of the "listening" log line by its key: `provider`, `channels` and `admin`.
    static func listeningAddresses(in log: String) -> [String: Int]? {
        guard let line = log.split(separator: "\n").first(where: { $0.contains("listening") }) else { return nil }
        // By key (`provider=https://…`, or `"provider":"https://…"` in JSON logs).
        func port(of key: String, after scheme: String) -> Int? {
            guard let range = line.range(of: #"\#(key)"?[=:]"?\#(scheme)://[^\s"',]+:([0-9]+)"#, options: .regularExpression) else { return nil }
            let url = line[range]
            return Int(url[url.index(after: url.lastIndex(of: ":")!)...])
        }
        guard let provider = port(of: "provider", after: "https"), let channels = port(of: "channels", after: "https"),
            let admin = port(of: "admin", after: "https?")
        else { return nil }
        return ["provider": provider, "channels": channels, "admin": admin]
    }

    @Test(.timeLimit(.minutes(2)))
    func imageCommandLineServesHealthzAndExitsZeroOnSIGTERM() async throws {
        let (status, bySignal, output) = try await Self.withImageCommand { providerPort, adminPort, _ in
            #expect(providerPort != 0 && adminPort != 0 && providerPort != adminPort)
            let health = try await AdminClient(port: adminPort).request(.get, "/healthz")
            #expect(health.status == 200)
        }
        #expect(!bySignal, "apns-mock was killed by the signal instead of handling it\n\(output)")
        #expect(status == 0, "apns-mock should exit 0 on SIGTERM (status \(String(describing: status)))\n\(output)")
    }

    /// The compose file's example provider, run against the image's command line: token from
    /// `apns-mock token`, the push over HTTP/2 trusting Certs/ca.pem, the recording read back.
    @Test(.timeLimit(.minutes(2)))
    func exampleProviderScriptPushesToTheImageCommandLine() async throws {
        _ = try ExternalTool.require("curl")
        let binaryDirectory = URL(fileURLWithPath: try Self.builtBinary()).deletingLastPathComponent().path
        let script = Self.root.appendingPathComponent("scripts/compose/provider-example.sh").path
        let deviceToken = TestData.deviceToken()
        let (status, _, output) = try await Self.withImageCommand { providerPort, adminPort, serverEnvironment in
            var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("APNS_MOCK_") }
            environment["PATH"] = binaryDirectory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
            environment["APNS_URL"] = "https://127.0.0.1:\(providerPort)"
            environment["ADMIN_URL"] = "http://127.0.0.1:\(adminPort)"
            environment["CERTS_DIR"] = serverEnvironment["APNS_MOCK_CERTS_DIR"]
            environment["DEVICE_TOKEN"] = deviceToken
            let run = try await LaunchedProcess(
                executable: "/bin/sh",
                arguments: [script],
                environment: environment,
                workingDirectory: FileManager.default.temporaryDirectory
            )
            defer { run.cleanUp() }
            let exit = try await run.waitForExit(timeout: .seconds(60))
            #expect(exit == 0, "scripts/compose/provider-example.sh failed\n\(run.output)")
            #expect(run.stdout.contains("answered HTTP 200"), "\(run.output)")
            let recordings = try await AdminClient(port: adminPort).notifications([("token", deviceToken)])
            #expect(recordings.count == 1)
            #expect(recordings.first?.status == 200)
            #expect(recordings.first?.json["authentication"]?["method"]?.string == "token")
            #expect(recordings.first?.json["authentication"]?["signatureVerified"]?.bool == true)
        }
        #expect(status == 0, "\(output)")
    }

    // MARK: docker-compose.yml

    static let dockerCompose: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/docker-compose" }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }()

    /// `docker-compose config` as JSON: Compose v2 prints it with `--format json`; v1 (Debian's) prints YAML,
    /// read with the PyYAML it depends on.
    static func composeConfiguration(profiles: [String] = []) async throws -> JSON {
        let file = root.appendingPathComponent("docker-compose.yml").path
        let selection = ["--file", file] + profiles.flatMap { ["--profile", $0] }
        let yaml = try await ExternalTool.run("docker-compose", selection + ["config"], timeout: .seconds(60))
        guard yaml.exitCode == 0 else { throw TestFailure("docker-compose.yml does not validate: \(yaml)") }
        let json = try await ExternalTool.run("docker-compose", selection + ["config", "--format", "json"], timeout: .seconds(60))
        if json.exitCode == 0, let parsed = try? JSON(parsing: Array(json.stdout.utf8)) { return parsed }
        let converted = try await ExternalTool.run(
            "python3",
            ["-c", "import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)"],
            stdin: Data(yaml.stdout.utf8)
        )
        guard converted.exitCode == 0 else { throw TestFailure("cannot read docker-compose config's YAML: \(converted)") }
        return try JSON(parsing: Array(converted.stdout.utf8))
    }

    /// A volume as (source, target, read-only), from Compose v1's `src:dst:ro` strings or v2's objects.
    static func mounts(_ service: JSON?) -> [(source: String, target: String, readOnly: Bool)] {
        (service?["volumes"]?.array ?? []).compactMap { volume in
            if let text = volume.string {
                let parts = text.split(separator: ":").map(String.init)
                guard parts.count >= 2 else { return nil }
                return (parts[0], parts[1], parts.count > 2 && parts[2].split(separator: ",").contains("ro"))
            }
            guard let source = volume["source"]?.string, let target = volume["target"]?.string else { return nil }
            return (source, target, volume["read_only"]?.bool == true)
        }
    }

    static func portPairs(_ service: JSON?) -> Set<String> {
        Set((service?["ports"]?.array ?? []).compactMap { port -> String? in
            if let text = port.string { return text.split(separator: "/").first.map(String.init) }
            func number(_ value: JSON?) -> String? { value?.string ?? value?.int.map(String.init) }
            guard let published = number(port["published"]), let target = number(port["target"]) else { return nil }
            return "\(published):\(target)"
        })
    }

    @Test(
        .enabled(
            if: dockerCompose != nil,
            "docker-compose is not installed (Debian: apt-get install docker-compose; scripts/test installs it)"
        ),
        .timeLimit(.minutes(2))
    )
    func composeFileValidatesAndWiresTheProviderToTheMock() async throws {
        let configuration = try await Self.composeConfiguration()
        let services = try #require(configuration["services"])
        let mock = try #require(services["apns-mock"], "docker-compose.yml has no apns-mock service")
        let provider = try #require(services["provider"], "docker-compose.yml has no provider service")

        // The mock: built from the repository's Dockerfile, its ports published, health checked.
        #expect(mock["build"]?["context"]?.string.map { URL(fileURLWithPath: $0).standardized.path }
            == Self.root.standardized.path)
        #expect(Self.portPairs(mock).isSuperset(of: ["2197:2197", "8080:8080"]), "ports: \(Self.portPairs(mock))")
        let healthTest = mock["healthcheck"]?["test"]?.array?.compactMap(\.string).joined(separator: " ")
            ?? mock["healthcheck"]?["test"]?.string ?? ""
        #expect(healthTest.contains("/healthz"), "the apns-mock health check does not hit /healthz: \(healthTest)")

        // Its volumes: ./Scenarios and ./Certs, read-only, exactly where the image expects them.
        let dockerfile = try Self.dockerfile()
        let imageEnvironment = Dictionary(
            try dockerfile.runtimeStage.environment().map { ($0.name, $0.value) },
            uniquingKeysWith: { $1 }
        )
        let scenariosTarget = try dockerfile.copies(in: dockerfile.runtimeStage)
            .first { $0.sources.contains { $0.hasPrefix("Scenario") } }
            .map { ImagePathMap.normalize($0.destination) }
        let mockMounts = Self.mounts(mock)
        for (folder, target) in [("Scenarios", scenariosTarget), ("Certs", imageEnvironment["APNS_MOCK_CERTS_DIR"])] {
            let source = Self.root.appendingPathComponent(folder).standardized.path
            let mount = mockMounts.first { URL(fileURLWithPath: $0.source).standardized.path == source }
            #expect(mount != nil, "apns-mock does not mount ./\(folder): \(mockMounts)")
            #expect(mount?.target == target, "./\(folder) is mounted at \(mount?.target ?? "-"), the image uses \(target ?? "-")")
            #expect(mount?.readOnly == true, "./\(folder) should be mounted read-only")
        }
        let known = Set(ConfigurationKey.allCases.map(\.environmentVariable))
        if case .object(let variables) = mock["environment"] ?? .object([:]) {
            for name in variables.keys where name.hasPrefix("APNS_MOCK_") {
                #expect(known.contains(name), "docker-compose.yml sets \(name), which apns-mock does not read")
            }
        }

        // The admin API, published on the network, asks for a token; the example provider is given the same one.
        let adminToken = mock["environment"]?["APNS_MOCK_ADMIN_TOKEN"]?.string
        #expect(adminToken == "apns-mock-dev-token", "the documented default: \(String(describing: adminToken))")
        #expect(provider["environment"]?["ADMIN_TOKEN"]?.string == adminToken)

        // The provider starts only once the mock is healthy, trusts the CA from ./Certs, runs the example.
        #expect(provider["depends_on"]?["apns-mock"]?["condition"]?.string == "service_healthy")
        let providerMounts = Self.mounts(provider)
        let certs = Self.root.appendingPathComponent("Certs").standardized.path
        #expect(providerMounts.contains { URL(fileURLWithPath: $0.source).standardized.path == certs && $0.readOnly })
        for mount in providerMounts {
            #expect(FileManager.default.fileExists(atPath: mount.source), "the provider mounts \(mount.source), which is missing")
        }
        let script = Self.root.appendingPathComponent("scripts/compose/provider-example.sh").path
        #expect(providerMounts.contains { URL(fileURLWithPath: $0.source).standardized.path == script })
        let scriptText = try String(contentsOfFile: script, encoding: .utf8)
        #expect(scriptText.contains("https://apns-mock:2197"))
        #expect(scriptText.contains("--cacert"))
        #expect(scriptText.contains("--http2"))
        #expect(scriptText.contains("/admin/notifications"))
    }

    @Test(
        .enabled(
            if: dockerCompose != nil,
            "docker-compose is not installed (Debian: apt-get install docker-compose; scripts/test installs it)"
        ),
        .timeLimit(.minutes(2))
    )
    func clusterProfileRunsThreeReplicasOnePostgresAndABalancerInFrontOfThem() async throws {
        let configuration = try await Self.composeConfiguration(profiles: ["cluster"])
        let services = try #require(configuration["services"])
        let postgres = try #require(services["postgres"], "the cluster profile has no postgres service")
        #expect(postgres["image"]?.string?.hasPrefix("postgres:") == true)
        let database = postgres["environment"]?["POSTGRES_DB"]?.string
        let user = postgres["environment"]?["POSTGRES_USER"]?.string
        var names: Set<String> = []
        for replica in ["replica-1", "replica-2", "replica-3"] {
            let service = try #require(services[replica], "the cluster profile has no \(replica)")
            let environment = service["environment"]
            let store = try #require(environment?["APNS_MOCK_STORE"]?.string)
            // The address names the compose database and user, and parses as the mock parses it.
            #expect(store == "postgres://\(user ?? "-")@postgres:5432/\(database ?? "-")", "\(replica): \(store)")
            #expect(RecordingStoreSetting(store) != nil)
            names.insert(environment?["APNS_MOCK_REPLICA"]?.string ?? "")
            #expect(service["depends_on"]?["postgres"]?["condition"]?.string == "service_healthy", "\(replica)")
            let known = Set(ConfigurationKey.allCases.map(\.environmentVariable))
            if case .object(let variables) = environment ?? .object([:]) {
                for name in variables.keys where name.hasPrefix("APNS_MOCK_") {
                    #expect(known.contains(name), "\(replica) sets \(name), which apns-mock does not read")
                }
            }
        }
        #expect(names == ["replica-1", "replica-2", "replica-3"], "each replica has a name of its own")

        // The balancer: published ports other than the single mock's, its configuration mounted, every replica
        // behind each of its front ends.
        let balancer = try #require(services["balancer"])
        #expect(Self.portPairs(balancer).isSuperset(of: ["3197:2197", "3080:8080"]), "\(Self.portPairs(balancer))")
        let mount = try #require(Self.mounts(balancer).first { $0.target.hasSuffix("haproxy.cfg") })
        let haproxy = try String(contentsOfFile: mount.source, encoding: .utf8)
        for port in ["2197", "8080", "2195"] {
            #expect(haproxy.contains("bind :\(port)"))
            for replica in ["replica-1", "replica-2", "replica-3"] { #expect(haproxy.contains("\(replica):\(port)")) }
        }
        #expect(haproxy.contains("mode tcp"), "TLS and HTTP/2 must end at the replicas")
        let provider = try #require(services["cluster-provider"])
        #expect(provider["environment"]?["APNS_URL"]?.string == "https://apns-mock:2197")
    }
}
