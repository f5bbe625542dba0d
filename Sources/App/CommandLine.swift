import Foundation

/// The `switchboard` command: `serve` (the default) runs the service.
public enum SwitchboardCommand {
    /// Runs the command named by `arguments` and exits the process.
    public static func main(_ arguments: [String]) async -> Never {
        let command = arguments.dropFirst().first ?? "serve"
        switch command {
        case "serve":
            await serve()
        case "-h", "--help", "help":
            print("usage: switchboard [serve]\n  configuration comes from environment variables; see README.md")
            exit(0)
        default:
            FileHandle.standardError.write(Data("switchboard: unknown command '\(command)'\n".utf8))
            exit(2)
        }
    }

    private static func serve() async -> Never {
        let configuration: Configuration
        do {
            configuration = try Configuration.fromEnvironment()
        } catch {
            FileHandle.standardError.write(Data("switchboard: invalid configuration: \(error)\n".utf8))
            exit(2)
        }
        let logger = Logger(level: configuration.logLevel)
        let application = Application(configuration: configuration, logger: logger)
        do {
            try await application.runUntilSignalled()
            exit(0)
        } catch {
            logger.error("cannot start", ["error": String(describing: error)])
            exit(1)
        }
    }
}
