-- adcp-version: 0006
-- adcp-upgrade: additive
-- Retention on SQLite: the closest faithful equivalent of PostgreSQL's 0006
-- (tombstones of spec 03 §6.4, the C-owned holds and attempt-backoff tables,
-- the age-scan index). Instants are UTC text 'YYYY-MM-DDTHH:MM:SS.ffffffZ'.
CREATE TABLE IF NOT EXISTS adcp_reporting_obligation_tombstones (
  obligation_id TEXT NOT NULL PRIMARY KEY,
  account_id TEXT NOT NULL,
  configuration_id TEXT NOT NULL,
  period_ordinal INTEGER NOT NULL,
  period_start TEXT NOT NULL,
  period_end TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('retiring', 'retired')),
  final_revision_id TEXT NULL,
  final_content_sha256 TEXT NULL,
  revision_count INTEGER NOT NULL CHECK (revision_count >= 0),
  adjustment_count INTEGER NOT NULL CHECK (adjustment_count >= 0),
  retiring_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  retired_at TEXT NULL,
  UNIQUE (configuration_id, period_ordinal),
  CHECK ((state = 'retired') = (retired_at IS NOT NULL))
) STRICT;
CREATE INDEX IF NOT EXISTS adcp_reporting_obligation_tombstones_account
  ON adcp_reporting_obligation_tombstones (account_id, configuration_id, period_ordinal);

CREATE TABLE IF NOT EXISTS adcp_reporting_retention_holds (
  hold_id TEXT NOT NULL PRIMARY KEY
    CHECK (length(hold_id) BETWEEN 1 AND 128 AND hold_id NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  account_id TEXT NOT NULL CHECK (length(account_id) BETWEEN 1 AND 255),
  obligation_id TEXT NULL,
  reason TEXT NOT NULL DEFAULT '' CHECK (length(reason) <= 512),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  expires_at TEXT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS adcp_reporting_retention_holds_account
  ON adcp_reporting_retention_holds (account_id, obligation_id);

CREATE TABLE IF NOT EXISTS adcp_reporting_retention_attempts (
  obligation_id TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('retirement', 'row_pruning')),
  account_id TEXT NOT NULL,
  failures INTEGER NOT NULL CHECK (failures >= 1),
  first_failed_at TEXT NOT NULL,
  last_failed_at TEXT NOT NULL,
  next_attempt_at TEXT NOT NULL,
  last_cause TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (obligation_id, operation)
) STRICT;

CREATE INDEX IF NOT EXISTS adcp_reporting_obligations_period_end
  ON adcp_reporting_obligations (period_end, obligation_id);
