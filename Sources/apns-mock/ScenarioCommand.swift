import APNsMock
import ArgumentParser

/// `apns-mock scenario check FILE…`: validates scenario files and prints every problem with line, column and field.
struct ScenarioCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "scenario",
        abstract: "Work with scenario files.",
        subcommands: [Check.self]
    )

    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate scenario files (YAML or JSON); print each problem as FILE:LINE:COLUMN: field: message."
        )

        @Argument(help: "Scenario files to check.") var files: [String]

        func run() throws {
            var failed = false
            for file in files {
                do {
                    let scenario = try ScenarioLoader.load(file: file)
                    print("\(file): ok (\(scenario.name): \(Self.count(scenario.rules.count, "rule")), \(Self.count(scenario.devices.count, "device")))")
                } catch {
                    failed = true
                    print(error.description)
                }
            }
            if failed { throw ExitCode(1) }
        }

        /// `1 rule`, `3 rules`, `0 devices`.
        static func count(_ number: Int, _ noun: String) -> String {
            "\(number) \(noun)\(number == 1 ? "" : "s")"
        }
    }
}
