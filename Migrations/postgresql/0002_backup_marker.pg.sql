-- See Migrations/sql/0002_backup_marker.sql. A PostgreSQL database is never a backup copy itself (backups are
-- SQLite files), but 'pinset store copy' carries the row over when a marked copy is moved here, so a copy that
-- was never restored is refused on PostgreSQL too.
CREATE TABLE backup_marker (
    id        BIGINT  PRIMARY KEY CHECK (id = 1),
    taken_at  TEXT    NOT NULL,
    source    TEXT    NOT NULL
);
