import Glibc

extension PostgresConfiguration {
    /// Where connections go, for log lines an operator reads: `host=… port=… dbname=…` as libpq reads them from the
    /// connection string, else from `PGHOST`, `PGPORT` and `PGDATABASE`, else libpq's defaults.
    ///
    /// Never the password, nor any other setting; a string libpq cannot parse gives `"(unparsable connection string)"`.
    public var target: String {
        Self.target(of: connectionString) { name in getenv(name).map { String(cString: $0) } }
    }

    /// ``target`` with `environment` in place of the process's variables.
    static func target(of connectionString: String, environment: (String) -> String?) -> String {
        guard let parameters = try? ConnectionParameters(connectionString: connectionString) else {
            return "(unparsable connection string)"
        }
        func given(_ keyword: String, _ variable: String) -> String? {
            let value = parameters.value(of: keyword) ?? environment(variable)
            return value?.isEmpty == false ? value : nil
        }
        let host = given("host", "PGHOST") ?? given("hostaddr", "PGHOSTADDR") ?? "(default socket directory)"
        let port = given("port", "PGPORT") ?? "5432"
        // libpq's own default database is the user's name.
        let database = given("dbname", "PGDATABASE") ?? given("user", "PGUSER") ?? "(user name)"
        return "host=\(host) port=\(port) dbname=\(database)"
    }
}
