-- Pin edits an operator applied without a second admin's review (break-glass). Each stays on /status, the
-- metrics and `pinset review list` until another admin acknowledges it. Removing the customer does not remove
-- the trace of an unreviewed edit: customer_id becomes NULL, and only operators see the record then (a customer
-- added later under the same name is not the one edited). change_request_id is not unique: SQLite may hand a
-- removed customer's request ids out again.
CREATE TABLE break_glass (
    id                 INTEGER PRIMARY KEY,
    change_request_id  INTEGER NOT NULL,
    customer           TEXT    NOT NULL CHECK (length(customer) BETWEEN 1 AND 64),
    customer_id        INTEGER REFERENCES customer (id) ON DELETE SET NULL,
    applied_by         TEXT    NOT NULL,
    reason             TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    applied_at         TEXT    NOT NULL,
    applied_version    INTEGER NOT NULL,
    acknowledged_by    TEXT,
    acknowledged_at    TEXT,
    acknowledgement    TEXT CHECK (acknowledgement IS NULL OR length(acknowledgement) <= 1000),
    CHECK ((acknowledged_by IS NULL) = (acknowledged_at IS NULL))
) STRICT;

CREATE INDEX break_glass_unacknowledged ON break_glass (acknowledged_at);
