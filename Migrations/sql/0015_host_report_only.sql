-- A host's report-only window (docs/report-only.md): until report_only_until (Unix seconds), Pinset clients report
-- a pin mismatch for the host and let the connection proceed after normal TLS validation. Set by an operator, or
-- by an editor's change request a reviewer approved, always with a reason; the four columns are set and cleared
-- together. The window is content: setting or ending it makes a new version of the customer's pin set. A window
-- is ended, as a change of its own, once its end has passed (the server's refresher and `pinset sign` do it).
ALTER TABLE host ADD COLUMN report_only_until INTEGER CHECK (report_only_until IS NULL OR report_only_until > 0);
ALTER TABLE host ADD COLUMN report_only_reason TEXT
    CHECK (report_only_reason IS NULL OR length(trim(report_only_reason)) BETWEEN 1 AND 1000);
ALTER TABLE host ADD COLUMN report_only_by TEXT;
ALTER TABLE host ADD COLUMN report_only_since TEXT;

-- The refresher asks twice a second whether a window has ended: an index over the few hosts that have one.
CREATE INDEX host_report_only_until ON host (report_only_until) WHERE report_only_until IS NOT NULL;
