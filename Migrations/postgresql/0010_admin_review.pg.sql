-- See Migrations/sql/0010_admin_review.sql: named admins, their credentials and roles, and change requests.
CREATE TABLE admin_account (
    name        TEXT NOT NULL PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
    created_at  TEXT NOT NULL,
    created_by  TEXT NOT NULL,
    disabled_at TEXT
);

CREATE TABLE admin_grant (
    admin_name TEXT NOT NULL REFERENCES admin_account (name) ON DELETE CASCADE,
    customer   TEXT NOT NULL CHECK (length(customer) BETWEEN 1 AND 64),
    role       TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'reviewer', 'operator')),
    CHECK (role <> 'operator' OR customer = '*'),
    PRIMARY KEY (admin_name, customer, role)
);

CREATE TABLE admin_token (
    token_sha256 BYTEA NOT NULL PRIMARY KEY CHECK (length(token_sha256) = 32),
    admin_name   TEXT NOT NULL REFERENCES admin_account (name) ON DELETE CASCADE,
    label        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    expires_at   TEXT,
    revoked_at   TEXT
);

CREATE INDEX admin_token_by_admin ON admin_token (admin_name);

CREATE TABLE review_required (
    customer_id BIGINT NOT NULL PRIMARY KEY REFERENCES customer (id) ON DELETE CASCADE,
    since       TEXT   NOT NULL,
    set_by      TEXT   NOT NULL
);

CREATE TABLE change_request (
    id              BIGSERIAL PRIMARY KEY,
    customer_id     BIGINT  NOT NULL REFERENCES customer (id) ON DELETE CASCADE,
    author          TEXT    NOT NULL,
    reason          TEXT    NOT NULL CHECK (length(reason) BETWEEN 1 AND 1000),
    operations      TEXT    NOT NULL,
    base_version    BIGINT  NOT NULL,
    created_at      TEXT    NOT NULL,
    expires_at      TEXT    NOT NULL,
    state           TEXT    NOT NULL CHECK (state IN ('open', 'applied', 'rejected')),
    decided_by      TEXT,
    decided_at      TEXT,
    decision_note   TEXT,
    applied_version BIGINT
);

CREATE INDEX change_request_by_customer ON change_request (customer_id, state);
