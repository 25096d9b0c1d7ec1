-- Pinset schema, version 2: content versions that survive backup and restore.
--
-- From this version on, a customer's content version moves to max(previous + 1, highest version the name ever
-- had + 1, the current time in milliseconds since 1970-01-01 UTC) on every change, a new customer's first
-- version included. A database that is re-created, or restored from an older copy, therefore starts above
-- every version an earlier database served, so apps never see a version repeat or go down.

-- Present (one row) only in a copy written by 'pinset backup'; the live database never has a row. A copy
-- holds versions that apps may have passed since it was made, so it must not be served or edited as it is:
-- opening it read-write is refused until 'pinset restore' has raised every customer's version above
-- anything served and deleted the row. Any later way of copying the database (another storage backend)
-- writes this row into its copy too.
CREATE TABLE backup_marker (
    id        INTEGER PRIMARY KEY CHECK (id = 1),
    taken_at  TEXT    NOT NULL,
    source    TEXT    NOT NULL
) STRICT;
