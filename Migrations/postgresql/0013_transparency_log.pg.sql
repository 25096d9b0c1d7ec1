-- The pin-set transparency log (RFC 6962 Merkle tree, served as c2sp.org/tlog-tiles): one entry per content
-- version a customer was given, appended in the transaction that gives it, and never changed or removed.
--
-- transparency_log_entry holds the leaves: log_index counts from 0 without gaps (writers append one after another,
-- under the write lock), leaf_data is the PinSetLogEntry encoding and leaf_hash its RFC 6962 leaf hash. customer and
-- version repeat what leaf_data says, so that an entry can be found by them.
--
-- transparency_log_hash holds the hash of every complete (perfect) subtree: level 0 the leaf hashes, level L node N
-- the Merkle Tree Hash of leaves [N * 2^L, (N + 1) * 2^L). Each is written once, when its last leaf is appended, so
-- roots, proofs and tiles of every past tree size are read from it without recomputing (as Go's sumdb/tlog
-- StoredHashes). The existing customers' current versions are appended by the program in this migration's
-- transaction, in name order.
CREATE TABLE transparency_log_entry (
    log_index    BIGINT  NOT NULL PRIMARY KEY CHECK (log_index >= 0),
    customer     TEXT    COLLATE pinset_nocase NOT NULL CHECK (length(customer) BETWEEN 1 AND 64),
    version      BIGINT  NOT NULL CHECK (version >= 0),
    leaf_data    BYTEA   NOT NULL CHECK (length(leaf_data) BETWEEN 1 AND 65535),
    leaf_hash    BYTEA   NOT NULL CHECK (length(leaf_hash) = 32),
    appended_at  TEXT    NOT NULL
);

CREATE UNIQUE INDEX transparency_log_entry_customer_version ON transparency_log_entry (customer, version);

CREATE TABLE transparency_log_hash (
    level       BIGINT  NOT NULL CHECK (level BETWEEN 0 AND 63),
    node_index  BIGINT  NOT NULL CHECK (node_index >= 0),
    hash        BYTEA   NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (level, node_index)
);

-- Append-only: an entry or a hash, once written, may have been served in a proof or a tile, and a checkpoint signed
-- over it. Changing, deleting or truncating would fork the log, so the database refuses it, whoever asks.
CREATE FUNCTION pinset_transparency_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'the transparency log is append-only: % on % refused', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'restrict_violation';
END;
$$;

CREATE TRIGGER transparency_log_entry_append_only BEFORE UPDATE OR DELETE ON transparency_log_entry
    FOR EACH ROW EXECUTE FUNCTION pinset_transparency_log_append_only();

CREATE TRIGGER transparency_log_entry_no_truncate BEFORE TRUNCATE ON transparency_log_entry
    FOR EACH STATEMENT EXECUTE FUNCTION pinset_transparency_log_append_only();

CREATE TRIGGER transparency_log_hash_append_only BEFORE UPDATE OR DELETE ON transparency_log_hash
    FOR EACH ROW EXECUTE FUNCTION pinset_transparency_log_append_only();

CREATE TRIGGER transparency_log_hash_no_truncate BEFORE TRUNCATE ON transparency_log_hash
    FOR EACH STATEMENT EXECUTE FUNCTION pinset_transparency_log_append_only();
