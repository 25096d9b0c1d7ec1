-- Pinset schema: customers that sign with their own key, and pins known only by their certificate hash.
--
-- Shipped migrations are never edited.

-- A row means: this customer's bundles are signed with its own key and certificate, kept as files in the
-- customer key directory (never in the database). No row: the deployment's default key signs them.
-- The server refuses to sign for a customer with a row whose key file is missing or unreadable, instead of
-- falling back to the default key, which that customer's apps do not trust.
CREATE TABLE customer_signing_identity (
    customer_id  INTEGER PRIMARY KEY REFERENCES customer (id) ON DELETE CASCADE,
    key_type     TEXT    NOT NULL CHECK (length(key_type) > 0),
    created_at   TEXT    NOT NULL
) STRICT;

-- The pin table again, with spki_sha256 optional: a pin may be known only by the SHA-256 of a certificate
-- (the legacy `fp` form, as signer.py deployments store it). Every pin has at least one of the two hashes.
-- SQLite cannot drop a NOT NULL, so the table is rebuilt: create, copy, drop, rename.
CREATE TABLE pin_new (
    id                  INTEGER PRIMARY KEY,
    host_id             INTEGER NOT NULL REFERENCES host (id) ON DELETE CASCADE,
    spki_sha256         BLOB             CHECK (spki_sha256 IS NULL OR length(spki_sha256) = 32),
    spki_der            BLOB             CHECK (spki_der IS NULL OR (length(spki_der) > 0 AND spki_sha256 IS NOT NULL)),
    certificate_sha256  BLOB             CHECK (certificate_sha256 IS NULL OR length(certificate_sha256) = 32),
    label               TEXT    NOT NULL,
    source              TEXT    NOT NULL CHECK (length(source) > 0),
    not_after           INTEGER,
    created_at          TEXT    NOT NULL,
    CHECK (spki_sha256 IS NOT NULL OR certificate_sha256 IS NOT NULL),
    UNIQUE (host_id, spki_sha256),
    UNIQUE (host_id, certificate_sha256)
) STRICT;

INSERT INTO pin_new (id, host_id, spki_sha256, spki_der, certificate_sha256, label, source, not_after, created_at)
    SELECT id, host_id, spki_sha256, spki_der, certificate_sha256, label, source, not_after, created_at FROM pin;

DROP TABLE pin;

ALTER TABLE pin_new RENAME TO pin;
