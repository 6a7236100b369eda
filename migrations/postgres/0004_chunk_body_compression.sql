-- adcp-version: 0004
-- adcp-upgrade: additive
-- Chunk bodies compressed with LZ4 inside TOAST (EXTENDED storage) where the
-- server supports it; servers built without LZ4 keep 0003's EXTERNAL storage.
-- Measured on a 2-core machine with 10,000-row (3.7 MB) bodies: about a third
-- of the TOAST and WAL bytes, commits markedly faster, a 500-row page read
-- about 0.5 ms slower (the value is fetched and decompressed up to the page
-- instead of sliced). Physical attributes only: columns, types, constraints
-- and triggers are unchanged; existing bodies keep their form. See
-- docs/schema.md.
DO $adcp$
BEGIN
  ALTER TABLE adcp_reporting_chunk_bodies ALTER COLUMN body SET COMPRESSION lz4;
  ALTER TABLE adcp_reporting_chunk_bodies ALTER COLUMN body SET STORAGE EXTENDED;
EXCEPTION WHEN feature_not_supported OR invalid_parameter_value THEN
  NULL; -- no LZ4 in this server: EXTERNAL (uncompressed) stays
END
$adcp$;
