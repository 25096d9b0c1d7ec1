-- Named admins, their credentials and roles, and two-person review of pin edits.

-- One row per admin. A disabled admin keeps its row (audit entries name it) but no credential of it
-- authenticates.
CREATE TABLE admin_account (
    name        TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    disabled_at TEXT
) STRICT, WITHOUT ROWID;

-- What an admin may do: a role for one customer (its name as stored, matched ignoring case), or for every
-- customer ('*'). 'operator' is deployment-wide and only granted with '*'.
CREATE TABLE admin_grant (
    admin_name TEXT NOT NULL REFERENCES admin_account (name) ON DELETE CASCADE,
    customer   TEXT NOT NULL CHECK (length(customer) BETWEEN 1 AND 64),
    role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'reviewer', 'operator')),
    CHECK (role <> 'operator' OR customer = '*'),
    PRIMARY KEY (admin_name, customer, role)
) STRICT, WITHOUT ROWID;

-- Bearer tokens, stored only as the SHA-256 of the token: the token itself is shown once, when made.
CREATE TABLE admin_token (
    token_sha256 BLOB NOT NULL PRIMARY KEY CHECK (length(token_sha256) = 32),
    admin_name   TEXT NOT NULL REFERENCES admin_account (name) ON DELETE CASCADE,
    label        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT
) STRICT, WITHOUT ROWID;

CREATE INDEX admin_token_by_admin ON admin_token (admin_name);

-- Customers whose pin edits by named admins become change requests that another admin must approve.
CREATE TABLE review_required (
    customer_id INTEGER NOT NULL PRIMARY KEY REFERENCES customer (id) ON DELETE CASCADE,
    since       TEXT    NOT NULL,
    set_by      TEXT    NOT NULL
) STRICT, WITHOUT ROWID;

-- A proposed pin edit: its operations (JSON, see ChangeRequest.swift), the customer's version when it was made,
-- and what became of it. An open request past expires_at is expired: it can no longer be approved.
CREATE TABLE change_request (
    id              INTEGER PRIMARY KEY,
    customer_id     INTEGER NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    author          TEXT    NOT NULL,
    reason          TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    operations      TEXT    NOT NULL,
    base_version    INTEGER NOT NULL,
    created_at      TEXT    NOT NULL,
    expires_at      TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('open', 'applied', 'rejected')),
    decided_by      TEXT,
    decided_at      TEXT,
    decision_note   TEXT,
    applied_version INTEGER
) STRICT;

CREATE INDEX change_request_by_customer ON change_request (customer_id, state);
