-- adcp-version: 0004
-- adcp-upgrade: additive
-- No-op on SQLite (the series stays aligned with PostgreSQL's): PostgreSQL's
-- 0004 compresses chunk bodies with LZ4 inside TOAST; SQLite stores BLOBs as
-- written.
SELECT 1;
