import Postgres

/// The attachments schema: each file's metadata, its bytes in pieces, and each tenant's stored total.
enum AttachmentsMigrations {
    static let all: [Migration] = [
        // Pieces of up to 256 KiB in rows of their own rather than large objects: a piece is written in a short
        // transaction of its own as the upload arrives (libpq's large-object calls are synchronous and would hold a
        // connection across the upload), a range read fetches only the pieces it needs, and deleting an attachment
        // (or its interaction, or its tenant) removes its bytes by cascade, with no orphan large object to unlink.
        Migration(version: 311, name: "attachments", sql: """
            CREATE TABLE attachments (
                id uuid PRIMARY KEY,
                tenant_id uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
                interaction_id uuid NOT NULL REFERENCES interactions (id) ON DELETE CASCADE,
                uploader text NOT NULL,
                uploader_user_id text,
                content_type text NOT NULL,
                filename text,
                size bigint NOT NULL DEFAULT 0,
                sha256 bytea,
                width integer,
                height integer,
                state text NOT NULL DEFAULT 'staged' CHECK (state IN ('staged', 'ready')),
                scan_state text NOT NULL DEFAULT 'not_scanned' CHECK (scan_state IN ('not_scanned', 'clean', 'infected')),
                message_seq bigint,
                created_at timestamptz NOT NULL DEFAULT now(),
                touched_at timestamptz NOT NULL DEFAULT now()
            );
            CREATE INDEX attachments_by_interaction ON attachments (interaction_id);
            CREATE INDEX attachments_by_uploader ON attachments (tenant_id, uploader_user_id);
            CREATE INDEX attachments_unused ON attachments (touched_at) WHERE message_seq IS NULL;
            CREATE TABLE attachment_pieces (
                attachment_id uuid NOT NULL REFERENCES attachments (id) ON DELETE CASCADE,
                byte_offset bigint NOT NULL,
                data bytea NOT NULL,
                PRIMARY KEY (attachment_id, byte_offset)
            );
            -- Photos and PDFs are compressed already: store them as they are, without trying pglz on each piece.
            ALTER TABLE attachment_pieces ALTER COLUMN data SET STORAGE EXTERNAL;
            CREATE TABLE attachment_usage (
                tenant_id uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
                bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0)
            );
            -- A ready attachment that goes (orphan pruning, erasure, its interaction deleted) gives its bytes back.
            CREATE FUNCTION attachments_release_usage() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF OLD.state = 'ready' THEN
                    UPDATE attachment_usage SET bytes = greatest(bytes - OLD.size, 0) WHERE tenant_id = OLD.tenant_id;
                END IF;
                RETURN NULL;
            END $$;
            CREATE TRIGGER attachments_release_usage AFTER DELETE ON attachments
                FOR EACH ROW EXECUTE FUNCTION attachments_release_usage();
            """),
    ]
}
