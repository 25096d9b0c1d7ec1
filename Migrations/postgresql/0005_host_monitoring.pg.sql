-- See Migrations/sql/0005_host_monitoring.sql.
ALTER TABLE host ADD COLUMN unmonitored_reason TEXT
    CHECK (unmonitored_reason IS NULL OR length(trim(unmonitored_reason)) > 0);
