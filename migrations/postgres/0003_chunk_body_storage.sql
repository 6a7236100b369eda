-- adcp-version: 0003
-- adcp-upgrade: additive
-- Chunk bodies out of line and uncompressed (STORAGE EXTERNAL), so a ranged
-- substring(body FROM x FOR y) reads only the TOAST slices it needs instead of
-- decompressing a whole multi-megabyte body. Physical attribute only: columns,
-- types and constraints are unchanged; bodies written before this step keep
-- their old (possibly compressed) form. See docs/schema.md.
ALTER TABLE adcp_reporting_chunk_bodies ALTER COLUMN body SET STORAGE EXTERNAL;
