-- Pinset schema, version 1.
--
-- Shipped migrations are never edited: a database that already recorded '0001_initial' in grdb_migrations
-- will not run this file again. Change the schema by adding 0002_*.sql.
--
-- Conventions:
--   * Every table is STRICT, so a value of the wrong type is an error instead of being stored as-is.
--   * Timestamps written by the program (created_at, updated_at, audit_log.at) are UTC text in the form
--     'YYYY-MM-DD HH:MM:SS.SSS', which sorts chronologically and works with SQLite's date functions.
--   * pin.not_after is whole seconds since 1970-01-01 UTC: X.509 validity times have no fractional seconds
--     (RFC 5280, 4.1.2.5).

-- One row per customer. Names are unique ignoring case so that two customers can never collide on a
-- case-insensitive filesystem or CDN, and lookups ignore case too.
-- `version` is the content version of the customer's pin set: every change to the customer, its hosts or
-- its pins increases it by one in the same transaction.
CREATE TABLE customer (
    id          INTEGER PRIMARY KEY,
    name        TEXT    NOT NULL COLLATE NOCASE UNIQUE CHECK (length(name) BETWEEN 1 AND 64),
    version     INTEGER NOT NULL CHECK (version >= 1),
    created_at  TEXT    NOT NULL,
    updated_at  TEXT    NOT NULL
) STRICT;

-- The highest content version ever given to each customer name, kept after the customer is removed.
-- A re-added customer starts above it, so clients that still hold a bundle of the old customer do not
-- reject the new one as a rollback, and no bundle signed for the old customer can be replayed as newer.
-- Rows are never deleted.
CREATE TABLE customer_version_high_water (
    name     TEXT    NOT NULL COLLATE NOCASE PRIMARY KEY,
    version  INTEGER NOT NULL CHECK (version >= 1)
) STRICT, WITHOUT ROWID;

-- The hosts of a customer; the bundle carries exactly one entry per host name, hence the UNIQUE pair.
-- Host names are stored normalised (lower case, no trailing dot).
CREATE TABLE host (
    id                  INTEGER PRIMARY KEY,
    customer_id         INTEGER NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    hostname            TEXT    NOT NULL CHECK (length(hostname) BETWEEN 1 AND 253 AND hostname = lower(hostname)),
    port                INTEGER NOT NULL CHECK (port BETWEEN 1 AND 65535),
    include_subdomains  INTEGER NOT NULL CHECK (include_subdomains IN (0, 1)),
    created_at          TEXT    NOT NULL,
    UNIQUE (customer_id, hostname)
) STRICT;

-- The trusted keys of a host. The SHA-256 of the DER SubjectPublicKeyInfo is the pin and is always known;
-- the SPKI itself, the certificate's SHA-256 and its notAfter are known when the pin came from a
-- certificate or key. `source` is PinSource.storedForm ('kind' or 'kind:detail').
CREATE TABLE pin (
    id                  INTEGER PRIMARY KEY,
    host_id             INTEGER NOT NULL REFERENCES host (id) ON DELETE CASCADE,
    spki_sha256         BLOB    NOT NULL CHECK (length(spki_sha256) = 32),
    spki_der            BLOB             CHECK (spki_der IS NULL OR length(spki_der) > 0),
    certificate_sha256  BLOB             CHECK (certificate_sha256 IS NULL OR length(certificate_sha256) = 32),
    label               TEXT    NOT NULL,
    source              TEXT    NOT NULL CHECK (length(source) > 0),
    not_after           INTEGER,
    created_at          TEXT    NOT NULL,
    UNIQUE (host_id, spki_sha256)
) STRICT;

-- Who changed what, written in the same transaction as the change. `customer` is the name as text, not a
-- reference, so the history of a removed customer stays. AUTOINCREMENT keeps ids from ever being reused.
-- `version` is the customer's content version after the change (0 when the change removed the customer).
CREATE TABLE audit_log (
    id        INTEGER PRIMARY KEY AUTOINCREMENT,
    at        TEXT    NOT NULL,
    actor     TEXT    NOT NULL,
    customer  TEXT    NOT NULL COLLATE NOCASE,
    action    TEXT    NOT NULL,
    details   TEXT    NOT NULL,
    version   INTEGER NOT NULL CHECK (version >= 0)
) STRICT;

CREATE INDEX audit_log_by_customer ON audit_log (customer, id);

-- A single row bumped by every change, so that a server can ask "did anything change?" with one cheap read.
CREATE TABLE change_counter (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    value  INTEGER NOT NULL CHECK (value >= 0)
) STRICT;

INSERT INTO change_counter (id, value) VALUES (1, 0);
