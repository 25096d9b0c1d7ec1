-- Hosts the trust server cannot reach (internal names, other networks).
--
-- host.unmonitored_reason: NULL for a host whose pin edits are checked against the chain it serves (the
-- default). Otherwise why it cannot be reached; such a host is skipped by the live-chain check on edits and
-- by 'pinset check', which list it as unmonitored with this reason.
ALTER TABLE host ADD COLUMN unmonitored_reason TEXT
    CHECK (unmonitored_reason IS NULL OR length(trim(unmonitored_reason)) > 0);
