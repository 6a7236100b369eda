-- Ledger Core tables on SQLite: the closest faithful equivalent of
-- migrations/postgres/assets/reporting_ledger_core.sql. STRICT tables keep
-- types honest; TEXT compares bytewise (BINARY), like COLLATE "C"; instants are
-- UTC text 'YYYY-MM-DDTHH:MM:SS.ffffffZ' (sortable, microseconds).
-- Patterns: SQLite has no regex, so ID and hex checks use length + GLOB.

CREATE TABLE IF NOT EXISTS adcp_reporting_obligations (
  obligation_id TEXT NOT NULL PRIMARY KEY
    CHECK (length(obligation_id) BETWEEN 1 AND 255 AND obligation_id NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  configuration_id TEXT NOT NULL CHECK (length(configuration_id) BETWEEN 1 AND 255),
  account_id TEXT NOT NULL CHECK (length(account_id) BETWEEN 1 AND 255),
  period_ordinal INTEGER NOT NULL CHECK (period_ordinal >= 0),
  period_start TEXT NOT NULL,
  period_end TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'terminal')),
  lease_owner TEXT NULL,
  lease_generation INTEGER NOT NULL DEFAULT 0 CHECK (lease_generation >= 0),
  lease_expires_at TEXT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CHECK (period_end > period_start),
  UNIQUE (configuration_id, period_ordinal)
) STRICT;

CREATE INDEX IF NOT EXISTS adcp_reporting_obligations_account
  ON adcp_reporting_obligations (account_id, period_start, obligation_id);

CREATE TABLE IF NOT EXISTS adcp_reporting_revisions (
  revision_id TEXT NOT NULL PRIMARY KEY
    CHECK (length(revision_id) BETWEEN 1 AND 255 AND revision_id NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  obligation_id TEXT NOT NULL REFERENCES adcp_reporting_obligations (obligation_id),
  account_id TEXT NOT NULL,
  revision_number INTEGER NOT NULL CHECK (revision_number >= 1),
  finality TEXT NOT NULL CHECK (finality IN ('snapshot', 'official')),
  supersedes_revision_id TEXT NULL REFERENCES adcp_reporting_revisions (revision_id),
  binding_algorithm TEXT NOT NULL
    CHECK (binding_algorithm IN ('rfc8785_jcs_v1', 'legacy_py_core_pairs_v0')),
  revision_content_sha256 TEXT NOT NULL
    CHECK (length(revision_content_sha256) = 64 AND revision_content_sha256 NOT GLOB '*[^0-9a-f]*'),
  canonical_byte_count INTEGER NOT NULL CHECK (canonical_byte_count > 0),
  row_count INTEGER NOT NULL CHECK (row_count >= 0),
  control_totals TEXT NOT NULL
    CHECK (CASE WHEN json_valid(control_totals) THEN json_type(control_totals) = 'array' ELSE 0 END),
  row_manifest_sha256 TEXT NOT NULL
    CHECK (length(row_manifest_sha256) = 64 AND row_manifest_sha256 NOT GLOB '*[^0-9a-f]*'),
  rows_shared_from_revision_id TEXT NULL REFERENCES adcp_reporting_revisions (revision_id),
  row_set_id TEXT NULL,
  observed_at TEXT NULL,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  UNIQUE (obligation_id, revision_number),
  CHECK ((revision_number = 1) = (supersedes_revision_id IS NULL)),
  CHECK (rows_shared_from_revision_id IS NULL OR rows_shared_from_revision_id <> revision_id)
) STRICT;

CREATE UNIQUE INDEX IF NOT EXISTS adcp_reporting_revisions_one_official
  ON adcp_reporting_revisions (obligation_id) WHERE finality = 'official';
CREATE UNIQUE INDEX IF NOT EXISTS adcp_reporting_revisions_one_successor
  ON adcp_reporting_revisions (supersedes_revision_id) WHERE supersedes_revision_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS adcp_reporting_revisions_account
  ON adcp_reporting_revisions (account_id, recorded_at, revision_id);
CREATE INDEX IF NOT EXISTS adcp_reporting_revisions_shared
  ON adcp_reporting_revisions (rows_shared_from_revision_id)
  WHERE rows_shared_from_revision_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS adcp_reporting_adjustments (
  adjustment_id TEXT NOT NULL PRIMARY KEY
    CHECK (length(adjustment_id) BETWEEN 1 AND 255 AND adjustment_id NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  obligation_id TEXT NOT NULL REFERENCES adcp_reporting_obligations (obligation_id),
  account_id TEXT NOT NULL,
  adjustment_number INTEGER NOT NULL CHECK (adjustment_number >= 1),
  content_sha256 TEXT NOT NULL
    CHECK (length(content_sha256) = 64 AND content_sha256 NOT GLOB '*[^0-9a-f]*'),
  canonical_byte_count INTEGER NOT NULL CHECK (canonical_byte_count > 0),
  row_count INTEGER NOT NULL CHECK (row_count >= 0),
  row_manifest_sha256 TEXT NOT NULL
    CHECK (length(row_manifest_sha256) = 64 AND row_manifest_sha256 NOT GLOB '*[^0-9a-f]*'),
  row_set_id TEXT NULL,
  reason TEXT NULL,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  UNIQUE (obligation_id, adjustment_number)
) STRICT;

CREATE TRIGGER IF NOT EXISTS adcp_reporting_revisions_immutable
  BEFORE UPDATE ON adcp_reporting_revisions
BEGIN
  SELECT RAISE(ABORT, 'adcp_reporting_revisions rows are immutable');
END;

CREATE TRIGGER IF NOT EXISTS adcp_reporting_adjustments_immutable
  BEFORE UPDATE ON adcp_reporting_adjustments
BEGIN
  SELECT RAISE(ABORT, 'adcp_reporting_adjustments rows are immutable');
END;
