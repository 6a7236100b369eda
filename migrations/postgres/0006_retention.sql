-- adcp-version: 0006
-- adcp-upgrade: additive
-- Retention (spec 03 §6, docs/retention.md): obligation tombstones exactly as
-- spec 03 §6.4 lists them, plus two C-owned side tables (extra objects the JS
-- schema probe and the catalog rule tolerate, docs/schema.md): explicit
-- retention holds and the per-period attempt backoff of spec 03 §6.6 (durable,
-- so the candidate query can exclude stalled periods before LIMIT and the
-- stalled list survives restarts), and an index for the age scan.
CREATE TABLE IF NOT EXISTS adcp_reporting_obligation_tombstones (
  obligation_id TEXT NOT NULL CONSTRAINT adcp_reporting_obligation_tombstones_pkey PRIMARY KEY,
  account_id TEXT NOT NULL,
  configuration_id TEXT NOT NULL,
  period_ordinal BIGINT NOT NULL,
  period_start TIMESTAMPTZ NOT NULL,
  period_end TIMESTAMPTZ NOT NULL,
  state TEXT NOT NULL
    CONSTRAINT adcp_reporting_obligation_tombstones_state_check CHECK (state IN ('retiring', 'retired')),
  final_revision_id TEXT NULL,
  final_content_sha256 TEXT NULL,
  revision_count INTEGER NOT NULL
    CONSTRAINT adcp_reporting_obligation_tombstones_revision_count_check CHECK (revision_count >= 0),
  adjustment_count INTEGER NOT NULL
    CONSTRAINT adcp_reporting_obligation_tombstones_adjustment_count_check CHECK (adjustment_count >= 0),
  retiring_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  retired_at TIMESTAMPTZ NULL,
  CONSTRAINT adcp_reporting_obligation_tombstones_configuration_id_period_ordinal_key
    UNIQUE (configuration_id, period_ordinal),
  CONSTRAINT adcp_reporting_obligation_tombstones_check CHECK ((state = 'retired') = (retired_at IS NOT NULL))
);
CREATE INDEX IF NOT EXISTS adcp_reporting_obligation_tombstones_account
  ON adcp_reporting_obligation_tombstones (account_id, configuration_id, period_ordinal);

CREATE TABLE IF NOT EXISTS adcp_reporting_retention_holds (
  hold_id TEXT COLLATE "C" NOT NULL CONSTRAINT adcp_reporting_retention_holds_pkey PRIMARY KEY
    CONSTRAINT adcp_reporting_retention_holds_hold_id_check CHECK (hold_id ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  account_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_retention_holds_account_id_check CHECK (char_length(account_id) BETWEEN 1 AND 255),
  obligation_id TEXT COLLATE "C" NULL,
  reason TEXT NOT NULL DEFAULT ''
    CONSTRAINT adcp_reporting_retention_holds_reason_check CHECK (char_length(reason) <= 512),
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  expires_at TIMESTAMPTZ NULL
);
CREATE INDEX IF NOT EXISTS adcp_reporting_retention_holds_account
  ON adcp_reporting_retention_holds (account_id, obligation_id);

CREATE TABLE IF NOT EXISTS adcp_reporting_retention_attempts (
  obligation_id TEXT COLLATE "C" NOT NULL,
  operation TEXT NOT NULL
    CONSTRAINT adcp_reporting_retention_attempts_operation_check CHECK (operation IN ('retirement', 'row_pruning')),
  account_id TEXT COLLATE "C" NOT NULL,
  failures INTEGER NOT NULL CONSTRAINT adcp_reporting_retention_attempts_failures_check CHECK (failures >= 1),
  first_failed_at TIMESTAMPTZ NOT NULL,
  last_failed_at TIMESTAMPTZ NOT NULL,
  next_attempt_at TIMESTAMPTZ NOT NULL,
  last_cause TEXT NOT NULL DEFAULT '',
  CONSTRAINT adcp_reporting_retention_attempts_pkey PRIMARY KEY (obligation_id, operation)
);

CREATE INDEX IF NOT EXISTS adcp_reporting_obligations_period_end
  ON adcp_reporting_obligations (period_end, obligation_id);
