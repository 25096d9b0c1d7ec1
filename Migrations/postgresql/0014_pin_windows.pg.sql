-- See Migrations/sql/0014_pin_windows.sql.
ALTER TABLE pin ADD COLUMN window_not_before BIGINT;
ALTER TABLE pin ADD COLUMN window_not_after BIGINT
    CHECK (window_not_after IS NULL OR window_not_before IS NULL OR window_not_before < window_not_after);
ALTER TABLE pin ADD COLUMN withheld BIGINT NOT NULL DEFAULT 0 CHECK (withheld IN (0, 1));

CREATE INDEX pin_with_window ON pin (host_id) WHERE window_not_before IS NOT NULL OR window_not_after IS NOT NULL;
