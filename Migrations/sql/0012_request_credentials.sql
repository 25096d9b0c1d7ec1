-- Which token made each change request (its SHA-256 and label; NULL for a request made without one), so that
-- revoking a stolen token voids the open requests it made; void_reason says why a request was voided (it is then
-- stored as rejected). break_glass.request_author keeps who wrote the request an operator applied without
-- review: neither that author nor the operator may acknowledge it.
ALTER TABLE change_request ADD COLUMN author_token_sha256 BLOB CHECK (author_token_sha256 IS NULL OR length(author_token_sha256) = 32);
ALTER TABLE change_request ADD COLUMN author_token_label TEXT;
ALTER TABLE change_request ADD COLUMN void_reason TEXT CHECK (void_reason IS NULL OR length(void_reason) BETWEEN 1 AND 1000);
ALTER TABLE break_glass ADD COLUMN request_author TEXT;

UPDATE break_glass SET request_author = (
    SELECT change_request.author FROM change_request
    WHERE change_request.id = break_glass.change_request_id AND change_request.customer_id = break_glass.customer_id
);

-- The bundle lifetime each running server signs with, shared beside its other serving times: commands that make or
-- install a signing identity on another host require it to outlive the longest one (NULL: not reported).
ALTER TABLE uptake_instance ADD COLUMN bundle_lifetime_seconds INTEGER CHECK (bundle_lifetime_seconds IS NULL OR bundle_lifetime_seconds > 0);

CREATE INDEX change_request_open_by_token ON change_request (author_token_sha256) WHERE state = 'open';
