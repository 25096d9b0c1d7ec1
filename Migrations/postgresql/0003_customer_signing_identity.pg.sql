-- See Migrations/sql/0003_customer_signing_identity.sql: customers with their own signing identity, and pins
-- known only by their certificate hash.
CREATE TABLE customer_signing_identity (
    customer_id  BIGINT  PRIMARY KEY REFERENCES customer (id) ON DELETE CASCADE,
    key_type     TEXT    NOT NULL CHECK (length(key_type) > 0),
    created_at   TEXT    NOT NULL
);

ALTER TABLE pin ALTER COLUMN spki_sha256 DROP NOT NULL;
ALTER TABLE pin DROP CONSTRAINT pin_spki_sha256_check;
ALTER TABLE pin ADD CONSTRAINT pin_spki_sha256_check CHECK (spki_sha256 IS NULL OR length(spki_sha256) = 32);
ALTER TABLE pin DROP CONSTRAINT pin_spki_der_check;
ALTER TABLE pin ADD CONSTRAINT pin_spki_der_check CHECK (spki_der IS NULL OR (length(spki_der) > 0 AND spki_sha256 IS NOT NULL));
ALTER TABLE pin ADD CONSTRAINT pin_has_a_hash CHECK (spki_sha256 IS NOT NULL OR certificate_sha256 IS NOT NULL);
ALTER TABLE pin ADD CONSTRAINT pin_host_id_certificate_sha256_key UNIQUE (host_id, certificate_sha256);
