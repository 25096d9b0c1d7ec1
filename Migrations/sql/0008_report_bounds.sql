-- Bounds on the pin-failure report counts, so that a flood of distinct reports can neither slow the admin write
-- path down nor grow a customer's hour without limit.
--
-- A unique index cannot be created over duplicate keys. Pinset never writes them (every write transaction holds
-- the database's write lock), but a database edited by hand could hold some: fold such rows into the one with the
-- lowest id, summing their counts, so that the upgrade neither fails nor loses a count.
UPDATE pin_failure_report_hour SET reports = (
    SELECT sum(other.reports) FROM pin_failure_report_hour AS other
    WHERE other.customer_id = pin_failure_report_hour.customer_id AND other.hour = pin_failure_report_hour.hour
      AND other.hostname = pin_failure_report_hour.hostname AND other.validation_result = pin_failure_report_hour.validation_result
      AND coalesce(other.leaf_spki_sha256, '') = coalesce(pin_failure_report_hour.leaf_spki_sha256, '')
      AND coalesce(other.pinset_version, 0) = coalesce(pin_failure_report_hour.pinset_version, 0)
      AND other.app_version = pin_failure_report_hour.app_version
)
WHERE id IN (
    SELECT min(id) FROM pin_failure_report_hour
    GROUP BY customer_id, hour, hostname, validation_result, coalesce(leaf_spki_sha256, ''), coalesce(pinset_version, 0), app_version
    HAVING count(*) > 1
);
DELETE FROM pin_failure_report_hour WHERE id NOT IN (
    SELECT min(id) FROM pin_failure_report_hour
    GROUP BY customer_id, hour, hostname, validation_result, coalesce(leaf_spki_sha256, ''), coalesce(pinset_version, 0), app_version
);

-- pin_failure_report_hour_key: one row per aggregation key, and the index every count is looked up by. The
-- optional columns are folded to values they can never hold (a leaf hash is 44 characters, a pin-set version is
-- at least 1), because a unique index treats NULLs as distinct and PostgreSQL's IS NOT DISTINCT FROM cannot use
-- an index at all. Lookups must spell the same expressions.
CREATE UNIQUE INDEX pin_failure_report_hour_key ON pin_failure_report_hour
    (customer_id, hour, hostname, validation_result, coalesce(leaf_spki_sha256, ''), coalesce(pinset_version, 0), app_version);

-- One row per customer and hour that received reports:
-- stored_rows:               rows of pin_failure_report_hour for this customer and hour (the cap is checked
--                            against it without counting them).
-- other_reports:             reports of new kinds after the hour reached the server's row cap ('reports.
--                            maxRowsPerCustomerHour'), counted here instead of a row each.
-- unpublished_host_reports:  reports naming a host the customer does not pin, counted here instead of a row each.
CREATE TABLE pin_failure_report_bucket (
    customer_id               INTEGER NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    hour                      INTEGER NOT NULL CHECK (hour >= 0 AND hour % 3600 = 0),
    stored_rows               INTEGER NOT NULL CHECK (stored_rows >= 0),
    other_reports             INTEGER NOT NULL CHECK (other_reports >= 0),
    unpublished_host_reports  INTEGER NOT NULL CHECK (unpublished_host_reports >= 0),
    PRIMARY KEY (customer_id, hour)
) STRICT;

INSERT INTO pin_failure_report_bucket (customer_id, hour, stored_rows, other_reports, unpublished_host_reports)
    SELECT customer_id, hour, count(*), 0, 0 FROM pin_failure_report_hour GROUP BY customer_id, hour;
