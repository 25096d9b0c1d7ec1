-- See Migrations/sql/0006_signer_floor.sql: revocation floors per signing identity.
ALTER TABLE customer_signing_identity ADD COLUMN signers_not_before BIGINT
    CHECK (signers_not_before IS NULL OR signers_not_before >= 0);

CREATE TABLE default_signing_identity (
    id                  BIGINT  PRIMARY KEY CHECK (id = 1),
    signers_not_before  BIGINT  NOT NULL CHECK (signers_not_before >= 0),
    updated_at          TEXT    NOT NULL
);
