-- A change request's number is never handed out twice (see the SQLite migration of the same name). On PostgreSQL
-- the BIGSERIAL sequence of 0010_admin_review never gives a number again, so nothing changes here; the step keeps
-- both backends' lists of migrations the same.
SELECT 1;
