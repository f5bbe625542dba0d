import Accounts
import Console
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
        case "console-link":
            await consoleLink(Array(arguments.dropFirst(2)))
        case "audit":
            await AuditCommand.main(Array(arguments.dropFirst(2)))
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
               switchboard console-link --tenant ID --agent AGENT_ID [--ttl SECONDS]
                                                a one-time sign-in link to the agent console (JSON: url,
                                                expires_at; the link lives 300 s unless --ttl, at most 600)
               switchboard audit verify --tenant ID
                                                checks the tenant's audit chain with AUDIT_SEAL_KEY; says
                                                where it breaks (exit 1) or that it is whole (exit 0)
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
            let tenant = try await AccountStore(pool: pool).createTenant(name: name, by: .command("tenants create"))
            print(String(decoding: try JSON.encode(tenant), as: UTF8.self))
            await pool.close()
            exit(0)
        } catch {
            await pool.close()
            fail("switchboard: cannot create tenant: \(error)", status: 1)
        }
    }

    private static func consoleLink(_ arguments: [String]) async -> Never {
        var options: [String: String] = [:]
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard ["--tenant", "--agent", "--ttl"].contains(flag), let value = rest.popFirst() else { fail(usage, status: 2) }
            options[flag] = value
        }
        guard let tenant = options["--tenant"].flatMap(UUID.init(uuidString:)) else {
            fail("switchboard: --tenant must be a tenant's id", status: 2)
        }
        guard let agent = options["--agent"], (1 ... 200).contains(agent.count) else {
            fail("switchboard: --agent must be 1 to 200 characters", status: 2)
        }
        guard let ttl = Int(options["--ttl"] ?? "300"), (1 ... ConsoleLinks.maximumTTL).contains(ttl) else {
            fail("switchboard: --ttl must be from 1 to \(ConsoleLinks.maximumTTL) seconds", status: 2)
        }
        let url: String
        let publicURL: String?
        do {
            url = try Configuration.databaseURL()
            publicURL = try EnvironmentReader(ProcessInfo.processInfo.environment).publicURL("PUBLIC_URL")
        } catch {
            fail("switchboard: invalid configuration: \(error)", status: 2)
        }
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: url), maxConnections: 1)
        do {
            _ = try await Migrator.apply(Migrations.all, pool: pool)
            let minted = try await ConsoleLinks(pool: pool).mint(tenant: tenant, agent: agent, ttlSeconds: ttl,
                                                                 sessionTTLSeconds: 8 * 3600, keyID: nil,
                                                                 by: .command("console-link"))
            let answer = ["url": ConsoleRoutes.url(of: minted.code, publicURL: publicURL),
                          "expires_at": RFC3339.string(from: minted.expiresAt)]
            print(String(decoding: try JSON.encode(answer), as: UTF8.self))
            await pool.close()
            exit(0)
        } catch {
            await pool.close()
            fail("switchboard: cannot make a console link: \(error)", status: 1)
        }
    }

    static func fail(_ message: String, status: Int32) -> Never {
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
