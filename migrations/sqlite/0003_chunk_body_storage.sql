-- adcp-version: 0003
-- adcp-upgrade: additive
-- No-op on SQLite (the series stays aligned with PostgreSQL's): PostgreSQL's
-- 0003 stores chunk bodies out of line and uncompressed for ranged reads;
-- SQLite never compresses BLOBs and reads ranges through incremental blob I/O.
SELECT 1;
