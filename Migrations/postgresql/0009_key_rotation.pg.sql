-- See Migrations/sql/0009_key_rotation.sql: next keys and the uptake shared by server instances.
ALTER TABLE pin ADD COLUMN next_key BIGINT NOT NULL DEFAULT 0 CHECK (next_key IN (0, 1));

ALTER TABLE pin ADD COLUMN published_version BIGINT CHECK (published_version IS NULL OR published_version >= 1);
UPDATE pin SET published_version = (
    SELECT customer.version FROM host JOIN customer ON host.customer_id = customer.id WHERE host.id = pin.host_id
);

CREATE TABLE uptake_instance (
    instance                 TEXT    NOT NULL PRIMARY KEY CHECK (length(instance) BETWEEN 1 AND 64),
    window_seconds           BIGINT  NOT NULL CHECK (window_seconds > 0),
    resign_interval_seconds  BIGINT  NOT NULL CHECK (resign_interval_seconds >= 0),
    freshness_window_seconds BIGINT  NOT NULL CHECK (freshness_window_seconds >= 0),
    max_age_seconds          BIGINT  NOT NULL CHECK (max_age_seconds >= 0),
    content_staleness_seconds BIGINT  NOT NULL CHECK (content_staleness_seconds >= 0),
    taken_at                 TEXT    NOT NULL,
    valid_until              TEXT    NOT NULL
);

CREATE TABLE uptake_count (
    instance      TEXT    NOT NULL REFERENCES uptake_instance (instance) ON DELETE CASCADE,
    customer_id   BIGINT  NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    held_version  BIGINT  NOT NULL CHECK (held_version >= -1),
    fetches       BIGINT  NOT NULL CHECK (fetches > 0),
    PRIMARY KEY (instance, customer_id, held_version)
);

CREATE INDEX uptake_count_by_customer ON uptake_count (customer_id);
