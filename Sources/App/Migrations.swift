import Accounts
import Console
import Feeds
import Interactions
import Postgres
import Webhooks

/// The schema, as numbered migrations applied in order at start-up (see `Migrator`).
public enum Migrations {
    /// Every migration of the service, oldest first.
    public static let all: [Migration] = AccountsMigrations.all + AuditMigrations.all + FeedsMigrations.all + InteractionsMigrations.all + WebhooksMigrations.all
        + ConsoleMigrations.all
}
