-- adcp-version: 0012
-- adcp-upgrade: additive
-- Orphan collector (spec 04 §4, §8; docs/collector.md): one row per object
-- binding with its resumable listing cursor and the times the scheduler needs
-- (last completed listing, last pass, last fence refusal). A C-owned side
-- table; instants are UTC text 'YYYY-MM-DDTHH:MM:SS.ffffffZ'.
CREATE TABLE IF NOT EXISTS adcp_orphan_collector_state (
  row_binding_id TEXT NOT NULL PRIMARY KEY REFERENCES adcp_reporting_row_bindings (row_binding_id),
  namespace_key TEXT NOT NULL CHECK (length(namespace_key) = 64 AND namespace_key NOT GLOB '*[^0-9a-f]*'),
  cursor TEXT NULL CHECK (cursor IS NULL OR length(cursor) BETWEEN 1 AND 2048),
  listing_completed_at TEXT NULL,
  last_pass_at TEXT NULL,
  refusal TEXT NULL,
  refused_at TEXT NULL,
  CHECK ((refusal IS NULL) = (refused_at IS NULL))
) STRICT;
