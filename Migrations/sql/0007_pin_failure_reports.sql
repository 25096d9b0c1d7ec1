-- Pin-failure reports from apps, aggregated: how often each (host, result, served key, pin-set version, app
-- version) failed in each hour. Individual reports, client addresses and installation identifiers are never
-- stored; rows older than the server's retention ('reports.retentionDays') are deleted.
--
-- hour:               start of the UTC hour, whole seconds since 1970-01-01.
-- hostname:           the host the app connected to, as reported (lower case, no trailing dot).
-- validation_result:  the reporter's result code (TrustKit's TSKTrustEvaluationResult; 1 = no pin matched).
-- leaf_spki_sha256:   base64 SHA-256 of the SubjectPublicKeyInfo of the first certificate the server sent;
--                     NULL when the report carried no readable certificate.
-- pinset_version:     the pin-set content version the app held (Pinset clients); NULL for TrustKit.
-- app_version:        the app's own version string.
-- reports:            reports counted, one per installation and hour.
CREATE TABLE pin_failure_report_hour (
    id                 INTEGER PRIMARY KEY,
    customer_id        INTEGER NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    hour               INTEGER NOT NULL CHECK (hour >= 0 AND hour % 3600 = 0),
    hostname           TEXT    NOT NULL CHECK (length(hostname) BETWEEN 1 AND 253),
    validation_result  INTEGER NOT NULL CHECK (validation_result BETWEEN 0 AND 255),
    leaf_spki_sha256   TEXT    CHECK (leaf_spki_sha256 IS NULL OR length(leaf_spki_sha256) = 44),
    pinset_version     INTEGER CHECK (pinset_version IS NULL OR pinset_version >= 1),
    app_version        TEXT    NOT NULL CHECK (length(app_version) <= 64),
    reports            INTEGER NOT NULL CHECK (reports >= 1)
) STRICT;

CREATE INDEX pin_failure_report_hour_by_customer ON pin_failure_report_hour (customer_id, hour);
