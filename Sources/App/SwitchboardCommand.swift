import Accounts
import Foundation
import HTTPServer
import Postgres

/// The `switchboard` command: `serve` (the default) runs the service.
public enum SwitchboardCommand {
    /// Runs the command named by `arguments` and exits the process.
    public static func main(_ arguments: [String]) async -> Never {
        let command = arguments.dropFirst().first ?? "serve"
        switch command {
        case "serve":
            await serve()
        case "tenants":
            await tenants(Array(arguments.dropFirst(2)))
        case "-h", "--help", "help":
            print(usage)
            exit(0)
        default:
            FileHandle.standardError.write(Data("switchboard: unknown command '\(command)'\n".utf8))
            exit(2)
        }
    }

    static let usage = """
        usage: switchboard [serve]              run the service
               switchboard tenants create NAME  create a tenant; prints it as JSON (id, name,
                                                api_key_id, api_key: shown once)
          configuration comes from environment variables; see README.md
        """

    private static func tenants(_ arguments: [String]) async -> Never {
        guard arguments.count == 2, arguments[0] == "create" else {
            fail(usage, status: 2)
        }
        let name = arguments[1].trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1 ... 200).contains(name.count) else { fail("switchboard: NAME must be 1 to 200 characters", status: 2) }
        let url: String
        do {
            url = try Configuration.databaseURL()
        } catch {
            fail("switchboard: invalid configuration: \(error)", status: 2)
        }
        let database = PostgresConfiguration(connectionString: url)
        let pool = PostgresPool(configuration: database, maxConnections: 1)
        do {
            _ = try await Migrator.apply(Migrations.all, pool: pool)
            let tenant = try await AccountStore(pool: pool).createTenant(name: name)
            print(String(decoding: try JSON.encode(tenant), as: UTF8.self))
            await pool.close()
            exit(0)
        } catch {
            await pool.close()
            fail("switchboard: cannot create tenant: \(error)", status: 1)
        }
    }

    private static func fail(_ message: String, status: Int32) -> Never {
        FileHandle.standardError.write(Data((message + "\n").utf8))
        exit(status)
    }

    private static func serve() async -> Never {
        let configuration: Configuration
        do {
            configuration = try Configuration.fromEnvironment()
        } catch {
            FileHandle.standardError.write(Data("switchboard: invalid configuration: \(error)\n".utf8))
            exit(2)
        }
        // Made first and finished last: every line of the run goes through it.
        let writer = LogWriter(capacityBytes: configuration.logBufferBytes, descriptor: 2)
        let logger = Logger(level: configuration.logLevel, sink: writer.write)
        let application = Application(configuration: configuration, logger: logger, logWriter: writer,
                                      shutdownSignals: [SIGTERM, SIGINT])
        do {
            try await application.run()
            writer.finish()
            exit(0)
        } catch {
            logger.error("cannot start", ["error": StartFailure.describe(error, configuration: configuration)])
            writer.finish()
            exit(1)
        }
    }
}
