-- adcp-version: 0007
-- adcp-upgrade: additive
-- Principal records and subscription-engine state (issue 17), SQLite twin of
-- PostgreSQL's 0007: same tables, columns and constraint names. Instants are
-- TEXT in the ledger's UTC microsecond form. The grant journal is
-- append-only and gapless: a BEFORE INSERT trigger refuses any sequence but
-- head + 1, BEFORE UPDATE / BEFORE DELETE triggers raise ABORT (SQLSTATE
-- 23514 in the sql layer). Snapshots only move forward (BEFORE UPDATE).
CREATE TABLE IF NOT EXISTS adcp_principals (
  principal_id TEXT NOT NULL,
  account_scope TEXT NOT NULL,
  display_name TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'active',
  attributes TEXT NOT NULL DEFAULT '{}',
  version INTEGER NOT NULL,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CONSTRAINT adcp_principals_pk PRIMARY KEY (principal_id),
  CONSTRAINT adcp_principals_id CHECK (length(CAST(principal_id AS BLOB)) BETWEEN 1 AND 255),
  CONSTRAINT adcp_principals_scope CHECK (length(CAST(account_scope AS BLOB)) BETWEEN 1 AND 255),
  CONSTRAINT adcp_principals_name CHECK (length(CAST(display_name AS BLOB)) <= 1024),
  CONSTRAINT adcp_principals_status CHECK (status IN ('active', 'disabled')),
  CONSTRAINT adcp_principals_attributes CHECK (length(CAST(attributes AS BLOB)) BETWEEN 2 AND 65536),
  CONSTRAINT adcp_principals_version CHECK (version >= 1)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS adcp_subscription_grants (
  principal_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  action TEXT NOT NULL,
  subject TEXT NOT NULL,
  scope TEXT NOT NULL,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CONSTRAINT adcp_subscription_grants_pk PRIMARY KEY (principal_id, seq),
  CONSTRAINT adcp_subscription_grants_principal FOREIGN KEY (principal_id)
    REFERENCES adcp_principals (principal_id),
  CONSTRAINT adcp_subscription_grants_seq CHECK (seq >= 1),
  CONSTRAINT adcp_subscription_grants_action CHECK (action IN ('grant', 'revoke')),
  CONSTRAINT adcp_subscription_grants_subject CHECK (length(CAST(subject AS BLOB)) BETWEEN 1 AND 255),
  CONSTRAINT adcp_subscription_grants_scope CHECK (length(CAST(scope AS BLOB)) BETWEEN 1 AND 255)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS adcp_subscription_exceptions (
  principal_id TEXT NOT NULL,
  subject TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  version INTEGER NOT NULL,
  opened_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CONSTRAINT adcp_subscription_exceptions_pk PRIMARY KEY (principal_id, subject),
  CONSTRAINT adcp_subscription_exceptions_principal FOREIGN KEY (principal_id)
    REFERENCES adcp_principals (principal_id),
  CONSTRAINT adcp_subscription_exceptions_subject CHECK (length(CAST(subject AS BLOB)) BETWEEN 1 AND 255),
  CONSTRAINT adcp_subscription_exceptions_state CHECK (state IN ('open', 'cleared')),
  CONSTRAINT adcp_subscription_exceptions_reason CHECK (length(CAST(reason AS BLOB)) <= 1024),
  CONSTRAINT adcp_subscription_exceptions_version CHECK (version >= 1)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS adcp_subscription_snapshots (
  principal_id TEXT NOT NULL,
  version INTEGER NOT NULL,
  journal_seq INTEGER NOT NULL,
  state TEXT NOT NULL,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CONSTRAINT adcp_subscription_snapshots_pk PRIMARY KEY (principal_id),
  CONSTRAINT adcp_subscription_snapshots_principal FOREIGN KEY (principal_id)
    REFERENCES adcp_principals (principal_id),
  CONSTRAINT adcp_subscription_snapshots_version CHECK (version >= 1),
  CONSTRAINT adcp_subscription_snapshots_seq CHECK (journal_seq >= 0),
  CONSTRAINT adcp_subscription_snapshots_state CHECK (length(CAST(state AS BLOB)) BETWEEN 2 AND 1048576)
) STRICT;

CREATE TRIGGER IF NOT EXISTS adcp_subscription_grants_gapless
BEFORE INSERT ON adcp_subscription_grants
WHEN NEW.seq IS NOT (SELECT coalesce(max(g.seq), 0) + 1 FROM adcp_subscription_grants g
                     WHERE g.principal_id = NEW.principal_id)
BEGIN
  SELECT RAISE(ABORT, 'grant journal sequence must be head + 1');
END;

CREATE TRIGGER IF NOT EXISTS adcp_subscription_grants_immutable_update
BEFORE UPDATE ON adcp_subscription_grants
BEGIN
  SELECT RAISE(ABORT, 'the subscription grant journal is immutable');
END;

CREATE TRIGGER IF NOT EXISTS adcp_subscription_grants_immutable_delete
BEFORE DELETE ON adcp_subscription_grants
BEGIN
  SELECT RAISE(ABORT, 'the subscription grant journal is immutable');
END;

CREATE TRIGGER IF NOT EXISTS adcp_subscription_snapshots_monotonic
BEFORE UPDATE ON adcp_subscription_snapshots
WHEN NEW.principal_id IS NOT OLD.principal_id OR NEW.version <= OLD.version
  OR NEW.journal_seq < OLD.journal_seq
BEGIN
  SELECT RAISE(ABORT, 'subscription snapshots only move forward');
END;
