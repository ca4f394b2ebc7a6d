import APNsMockServer
import ArgumentParser

@main
struct APNsMockCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "apns-mock",
        abstract: "A mock Apple Push Notification service: HTTP/2 + TLS, APNs-exact answers, recorded requests.",
        subcommands: [ServeCommand.self, CertsCommand.self, TokenCommand.self, ScenarioCommand.self],
        defaultSubcommand: ServeCommand.self
    )

    static func main() async {
        // Before any other thread allocates, so every thread shares the main arena (see the function).
        MemoryRelease.configureAllocator()
        await main(nil)
    }
}
