import Postgres

/// The feeds schema: feeds per tenant by key, and their items, newest first.
public enum FeedsMigrations {
    /// Migrations owned by this module (versions 200–299).
    public static let all: [Migration] = [
        Migration(version: 200, name: "feeds", sql: """
            CREATE TABLE feeds (
                id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                key text NOT NULL CHECK (key ~ '^[A-Za-z0-9._-]{1,100}$'),
                version bigint NOT NULL DEFAULT 1,
                created_at timestamptz NOT NULL DEFAULT now(),
                UNIQUE (tenant_id, key)
            );
            CREATE TABLE feed_items (
                id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
                feed_id bigint NOT NULL REFERENCES feeds (id) ON DELETE CASCADE,
                title text NOT NULL,
                body text NOT NULL DEFAULT '',
                url text,
                image_url text,
                published_at timestamptz NOT NULL DEFAULT now(),
                updated_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX feed_items_page ON feed_items (feed_id, published_at DESC, id DESC);
            """),
    ]
}
