-- adcp-version: 0013
-- adcp-upgrade: additive
-- Header-only sharing (spec 02 §12; docs/schema.md "Row-set sharing index"):
-- every commit asks for the newest live row set of its obligation with its
-- row manifest, and for a commit of new rows the answer is "none". Without
-- this index the engine visited every row set of the obligation (or every
-- live row set of the account) to say so. C-only, tolerated by the JS and
-- Python SDKs (they probe table names). CREATE INDEX holds writes to the row
-- sets table while it builds: 1.3 s (152 MB) for a synthetic million rows of
-- these four columns.
CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_manifest
  ON adcp_reporting_row_sets (obligation_id, row_manifest_sha256, recorded_at, row_set_id);
