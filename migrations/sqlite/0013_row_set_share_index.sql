-- adcp-version: 0013
-- adcp-upgrade: additive
-- Header-only sharing (spec 02 §12; docs/schema.md "Row-set sharing index"):
-- the newest live row set of an obligation with a given row manifest is one
-- index probe instead of a visit of every row set of the obligation.
CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_manifest
  ON adcp_reporting_row_sets (obligation_id, row_manifest_sha256, recorded_at, row_set_id);
