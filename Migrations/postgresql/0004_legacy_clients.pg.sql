-- See Migrations/sql/0004_legacy_clients.sql.
ALTER TABLE customer ADD COLUMN legacy_clients BIGINT NOT NULL DEFAULT 0 CHECK (legacy_clients IN (0, 1));

ALTER TABLE host ADD COLUMN published_hostname TEXT
    CHECK (published_hostname IS NULL OR lower(published_hostname) = hostname);
