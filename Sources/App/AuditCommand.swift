import Accounts
import Foundation
import Postgres

/// `switchboard audit verify --tenant ID`: checks a tenant's audit chain with `AUDIT_SEAL_KEY` and prints where it
/// breaks (a changed entry, one inserted or sealed without the key, a missing one, an entry with no seal).
enum AuditCommand {
    static func main(_ arguments: [String]) async -> Never {
        guard arguments.count == 3, arguments[0] == "verify", arguments[1] == "--tenant",
              let tenant = UUID(uuidString: arguments[2]) else {
            SwitchboardCommand.fail("usage: switchboard audit verify --tenant ID", status: 2)
        }
        let configuration: Configuration
        do {
            configuration = try Configuration.fromEnvironment()
        } catch {
            SwitchboardCommand.fail("switchboard: invalid configuration: \(error)", status: 2)
        }
        guard let key = configuration.auditSealKey else {
            SwitchboardCommand.fail("switchboard: AUDIT_SEAL_KEY must be set to the key the service seals with", status: 2)
        }
        let pool = PostgresPool(configuration: PostgresConfiguration(connectionString: configuration.databaseURL),
                                maxConnections: 1)
        do {
            let report = try await AuditVerification(pool: pool).verify(tenant: tenant, key: key)
            await pool.close()
            for finding in report.findings { print("broken: \(finding)") }
            for entry in report.unsealedStrays { print("broken: entry \(entry) has no seal and is not waiting for one") }
            let waiting = report.pending == 0 ? "" : "; \(report.pending) newer entries are not sealed yet"
            if report.intact {
                print("intact: \(report.checked) entries checked\(waiting)")
                exit(0)
            }
            print("\(report.findings.count + report.unsealedStrays.count) breaks in \(report.checked) entries\(waiting)")
            exit(1)
        } catch {
            await pool.close()
            SwitchboardCommand.fail("switchboard: cannot verify the audit trail: \(error)", status: 1)
        }
    }
}
