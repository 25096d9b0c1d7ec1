-- Key pre-rotation: pins of the key a host's next certificate will use, and the uptake every server instance
-- measures, shared so that any admin command can tell whether apps already hold such a key.

-- pin.next_key: 1 for a pin of a key that no certificate of the host uses yet, pinned ahead of the renewal
-- that will switch to it. Not part of the bundle: apps trust next pins like any other. Cleared once the host
-- serves that key ('pinset rotation complete').
ALTER TABLE pin ADD COLUMN next_key INTEGER NOT NULL DEFAULT 0 CHECK (next_key IN (0, 1));

-- pin.published_version: the customer's content version of the change that added the pin, so the lowest
-- bundle version that carries it. Every change sets it for the pins it inserted, in its own transaction.
-- Pins older than this migration get their customer's version now: later than the truth, so an uptake share
-- computed from it can only be too low, never too high.
ALTER TABLE pin ADD COLUMN published_version INTEGER CHECK (published_version IS NULL OR published_version >= 1);
UPDATE pin SET published_version = (
    SELECT customer.version FROM host JOIN customer ON host.customer_id = customer.id WHERE host.id = pin.host_id
);

-- One row per running server instance that shares its uptake figures: its random id, the window its figures
-- cover, the settings that bound how long an app can go on accepting a bundle signed before a change (resign
-- interval, how long it re-signs old content while the database is unreachable, freshness window, the longest
-- Cache-Control max-age it sends), when it wrote them and until when they count.
-- An instance rewrites its row and figures every 'uptakeSnapshotIntervalSeconds' and removes them when it
-- stops; rows past valid_until belong to an instance that stopped without removing them, and are ignored.
CREATE TABLE uptake_instance (
    instance                 TEXT    NOT NULL PRIMARY KEY CHECK (length(instance) BETWEEN 1 AND 64),
    window_seconds           INTEGER NOT NULL CHECK (window_seconds > 0),
    resign_interval_seconds  INTEGER NOT NULL CHECK (resign_interval_seconds >= 0),
    freshness_window_seconds INTEGER NOT NULL CHECK (freshness_window_seconds >= 0),
    max_age_seconds          INTEGER NOT NULL CHECK (max_age_seconds >= 0),
    content_staleness_seconds INTEGER NOT NULL CHECK (content_staleness_seconds >= 0),
    taken_at                 TEXT    NOT NULL,
    valid_until              TEXT    NOT NULL
) STRICT, WITHOUT ROWID;

-- An instance's bundle fetches in its window, per customer and the content version the client said it held:
-- held_version 0 for fetches that said none (legacy clients, first launches), -1 for versions beyond the
-- per-minute bound that were counted but not itemized.
CREATE TABLE uptake_count (
    instance      TEXT    NOT NULL REFERENCES uptake_instance (instance) ON DELETE CASCADE,
    customer_id   INTEGER NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    held_version  INTEGER NOT NULL CHECK (held_version >= -1),
    fetches       INTEGER NOT NULL CHECK (fetches > 0),
    PRIMARY KEY (instance, customer_id, held_version)
) STRICT, WITHOUT ROWID;

CREATE INDEX uptake_count_by_customer ON uptake_count (customer_id);
