-- A change request's number is never handed out twice. Reviewers approve by number (the API, the dashboard, the
-- CLI), and SQLite gives a new row the largest id plus one: once the newest request was removed with its customer,
-- the next request for another customer took its number, and an approval meant for the first could apply the
-- second. AUTOINCREMENT keeps every number ever used out of reach, as for the audit log; the numbers already given
-- (those the break-glass records keep included) are counted as used.
CREATE TABLE change_request_numbered (
    id                  INTEGER PRIMARY KEY AUTOINCREMENT,
    customer_id         INTEGER NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    author              TEXT    NOT NULL,
    reason              TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    operations          TEXT    NOT NULL,
    base_version        INTEGER NOT NULL,
    created_at          TEXT    NOT NULL,
    expires_at          TEXT    NOT NULL,
    state               TEXT    NOT NULL CHECK (state IN ('open', 'applied', 'rejected')),
    decided_by          TEXT,
    decided_at          TEXT,
    decision_note       TEXT,
    applied_version     INTEGER,
    author_token_sha256 BLOB CHECK (author_token_sha256 IS NULL OR length(author_token_sha256) = 32),
    author_token_label  TEXT,
    void_reason         TEXT CHECK (void_reason IS NULL OR length(void_reason) BETWEEN 1 AND 1000)
) STRICT;

INSERT INTO change_request_numbered (
    id, customer_id, author, reason, operations, base_version, created_at, expires_at, state, decided_by, decided_at,
    decision_note, applied_version, author_token_sha256, author_token_label, void_reason
)
SELECT
    id, customer_id, author, reason, operations, base_version, created_at, expires_at, state, decided_by, decided_at,
    decision_note, applied_version, author_token_sha256, author_token_label, void_reason
FROM change_request;

DROP TABLE change_request;
ALTER TABLE change_request_numbered RENAME TO change_request;
CREATE INDEX change_request_by_customer ON change_request (customer_id, state);
CREATE INDEX change_request_open_by_token ON change_request (author_token_sha256) WHERE state = 'open';

-- The highest number known to have been used: by a request still stored, or by one a break-glass record names.
DELETE FROM sqlite_sequence WHERE name = 'change_request';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'change_request', max(coalesce((SELECT max(id) FROM change_request), 0), coalesce((SELECT max(change_request_id) FROM break_glass), 0));
