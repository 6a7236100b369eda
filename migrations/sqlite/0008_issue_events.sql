-- adcp-version: 0008
-- adcp-upgrade: additive
-- Issue lifecycle and the issue-event outbox (spec 07), SQLite equivalent of
-- PostgreSQL's 0008: same tables, columns, constraint and index names.
-- Instants are TEXT "YYYY-MM-DDTHH:MM:SS.ffffffZ" (UTC, microseconds), so
-- text order is time order; every insert names them (no default calls the
-- connection function adcp_now()). seq is drawn as max(seq)+1 under the
-- database writer lock, which every writer holds.
CREATE TABLE IF NOT EXISTS reporting_issue_lifecycle (
  issue_key TEXT NOT NULL,
  account_id TEXT NOT NULL,
  generation INTEGER NOT NULL,
  issue_id TEXT NOT NULL,
  consumer_id TEXT,
  opened_at TEXT NOT NULL,
  issue_state TEXT NOT NULL DEFAULT 'open',
  external_ref TEXT,
  retired_at TEXT,
  CONSTRAINT reporting_issue_lifecycle_pk PRIMARY KEY (account_id, issue_key, generation),
  CONSTRAINT reporting_issue_lifecycle_generation CHECK (generation >= 1),
  CONSTRAINT reporting_issue_lifecycle_state
    CHECK (issue_state IN ('open', 'acknowledged', 'waived', 'resolved')),
  CONSTRAINT reporting_issue_lifecycle_retired
    CHECK ((retired_at IS NULL) = (issue_state IN ('open', 'acknowledged')))
) STRICT;
CREATE UNIQUE INDEX IF NOT EXISTS reporting_issue_lifecycle_one_live
  ON reporting_issue_lifecycle (account_id, issue_key)
  WHERE issue_state IN ('open', 'acknowledged', 'waived');
CREATE UNIQUE INDEX IF NOT EXISTS reporting_issue_lifecycle_issue_id
  ON reporting_issue_lifecycle (issue_id);
CREATE INDEX IF NOT EXISTS reporting_issue_lifecycle_published
  ON reporting_issue_lifecycle (opened_at)
  WHERE issue_state IN ('open', 'acknowledged');

CREATE TABLE IF NOT EXISTS reporting_issue_events (
  event_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  account_id TEXT NOT NULL,
  issue_id TEXT NOT NULL,
  issue_key TEXT NOT NULL,
  generation INTEGER NOT NULL,
  consumer_id TEXT,
  kind TEXT NOT NULL,
  issue_state TEXT NOT NULL,
  occurred_at TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  available_at TEXT NOT NULL,
  lease_token TEXT,
  lease_expires_at TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  completed_at TEXT,
  dead_lettered_at TEXT,
  CONSTRAINT reporting_issue_events_pk PRIMARY KEY (event_id),
  CONSTRAINT reporting_issue_events_seq UNIQUE (seq),
  CONSTRAINT reporting_issue_events_once UNIQUE (issue_id, kind),
  CONSTRAINT reporting_issue_events_kind
    CHECK (kind IN ('opened', 'acknowledged', 'waived', 'resolved', 'escalated')),
  CONSTRAINT reporting_issue_events_state
    CHECK (issue_state IN ('open', 'acknowledged', 'waived', 'resolved')),
  CONSTRAINT reporting_issue_events_lease
    CHECK ((lease_token IS NULL) = (lease_expires_at IS NULL)),
  CONSTRAINT reporting_issue_events_attempts CHECK (attempts >= 0)
) STRICT;
CREATE INDEX IF NOT EXISTS reporting_issue_events_pending
  ON reporting_issue_events (seq)
  WHERE completed_at IS NULL AND dead_lettered_at IS NULL;
CREATE INDEX IF NOT EXISTS reporting_issue_events_occurrence
  ON reporting_issue_events (issue_id, seq)
  WHERE completed_at IS NULL AND dead_lettered_at IS NULL;
CREATE INDEX IF NOT EXISTS reporting_issue_events_completed
  ON reporting_issue_events (completed_at)
  WHERE completed_at IS NOT NULL;
