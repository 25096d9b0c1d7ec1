-- See Migrations/sql/0008_report_bounds.sql: a unique, indexed key for the hourly report counts, and per customer
-- and hour the number of rows stored and the reports counted in the "other" and unpublished-host buckets.
CREATE UNIQUE INDEX pin_failure_report_hour_key ON pin_failure_report_hour
    (customer_id, hour, hostname, validation_result, coalesce(leaf_spki_sha256, ''), coalesce(pinset_version, 0), app_version);

CREATE TABLE pin_failure_report_bucket (
    customer_id               BIGINT NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    hour                      BIGINT NOT NULL CHECK (hour >= 0 AND hour % 3600 = 0),
    stored_rows               BIGINT NOT NULL CHECK (stored_rows >= 0),
    other_reports             BIGINT NOT NULL CHECK (other_reports >= 0),
    unpublished_host_reports  BIGINT NOT NULL CHECK (unpublished_host_reports >= 0),
    PRIMARY KEY (customer_id, hour)
);

INSERT INTO pin_failure_report_bucket (customer_id, hour, stored_rows, other_reports, unpublished_host_reports)
    SELECT customer_id, hour, count(*), 0, 0 FROM pin_failure_report_hour GROUP BY customer_id, hour;
