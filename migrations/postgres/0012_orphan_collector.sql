-- adcp-version: 0012
-- adcp-upgrade: additive
-- Orphan collector (spec 04 §4, §8; docs/collector.md): one row per object
-- binding with its resumable listing cursor and the times the scheduler needs
-- (last completed listing, last pass, last fence refusal). A C-owned side
-- table beside the spec 02 tables (tolerated by the schema probe, docs/schema.md).
CREATE TABLE IF NOT EXISTS adcp_orphan_collector_state (
  row_binding_id TEXT COLLATE "C" NOT NULL CONSTRAINT adcp_orphan_collector_state_pkey PRIMARY KEY
    REFERENCES adcp_reporting_row_bindings (row_binding_id),
  namespace_key TEXT COLLATE "C" NOT NULL CHECK (namespace_key ~ '^[0-9a-f]{64}$'),
  cursor TEXT COLLATE "C" NULL CHECK (cursor IS NULL OR length(cursor) BETWEEN 1 AND 2048),
  listing_completed_at TIMESTAMPTZ NULL,
  last_pass_at TIMESTAMPTZ NULL,
  refusal TEXT COLLATE "C" NULL,
  refused_at TIMESTAMPTZ NULL,
  CHECK ((refusal IS NULL) = (refused_at IS NULL))
);
