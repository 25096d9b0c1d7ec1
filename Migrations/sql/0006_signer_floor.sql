-- Revocation floors: per signing identity, the earliest notBefore a signer certificate may have. Published in
-- every bundle that identity signs as `signers-not-before`; clients that accepted it refuse bundles signed by
-- an older certificate, which revokes a leaked online signer key. A floor only ever rises.
--
-- Stored here rather than beside the key files so that every instance using this database signs with, and
-- refuses to sign below, the same floor.

-- The floor of a customer's own identity; NULL while none is set. It goes with the identity: removing the
-- customer (which deletes the row) drops it.
ALTER TABLE customer_signing_identity ADD COLUMN signers_not_before INTEGER
    CHECK (signers_not_before IS NULL OR signers_not_before >= 0);

-- The floor of the deployment's default identity: at most one row, absent while none is set.
CREATE TABLE default_signing_identity (
    id                  INTEGER PRIMARY KEY CHECK (id = 1),
    signers_not_before  INTEGER NOT NULL CHECK (signers_not_before >= 0),
    updated_at          TEXT    NOT NULL
) STRICT;
