-- adcp-version: 0008
-- adcp-upgrade: additive
-- Issue lifecycle (spec 07 §1-§3: occurrences of a condition, one live
-- occurrence per (account, issue_key)) and the issue-event outbox (spec 07
-- §4: one row per lifecycle transition, written in the transition's
-- transaction). Additive: created only if absent, nothing here depends on a
-- stopped-worker step, and older writers never touch these tables.
-- docs/issues.md records the [P] decisions (dead letters, the pending index).
CREATE TABLE IF NOT EXISTS reporting_issue_lifecycle (
    issue_key TEXT COLLATE "C" NOT NULL,
    account_id TEXT COLLATE "C" NOT NULL,
    generation INTEGER NOT NULL,
    issue_id TEXT COLLATE "C" NOT NULL,
    consumer_id TEXT COLLATE "C",
    opened_at TIMESTAMPTZ NOT NULL,
    issue_state TEXT NOT NULL DEFAULT 'open',
    external_ref TEXT,
    retired_at TIMESTAMPTZ,
    CONSTRAINT reporting_issue_lifecycle_pk PRIMARY KEY (account_id, issue_key, generation),
    CONSTRAINT reporting_issue_lifecycle_generation CHECK (generation >= 1),
    CONSTRAINT reporting_issue_lifecycle_state
        CHECK (issue_state IN ('open', 'acknowledged', 'waived', 'resolved')),
    CONSTRAINT reporting_issue_lifecycle_retired
        CHECK ((retired_at IS NULL) = (issue_state IN ('open', 'acknowledged')))
);
CREATE UNIQUE INDEX IF NOT EXISTS reporting_issue_lifecycle_one_live
    ON reporting_issue_lifecycle (account_id, issue_key)
    WHERE issue_state IN ('open', 'acknowledged', 'waived');
CREATE UNIQUE INDEX IF NOT EXISTS reporting_issue_lifecycle_issue_id
    ON reporting_issue_lifecycle (issue_id);
-- Escalation candidates: published occurrences by opening instant.
CREATE INDEX IF NOT EXISTS reporting_issue_lifecycle_published
    ON reporting_issue_lifecycle (opened_at)
    WHERE issue_state IN ('open', 'acknowledged');

CREATE TABLE IF NOT EXISTS reporting_issue_events (
    event_id TEXT COLLATE "C" NOT NULL,
    seq BIGSERIAL NOT NULL,
    account_id TEXT COLLATE "C" NOT NULL,
    issue_id TEXT COLLATE "C" NOT NULL,
    issue_key TEXT COLLATE "C" NOT NULL,
    generation INTEGER NOT NULL,
    consumer_id TEXT COLLATE "C",
    kind TEXT NOT NULL,
    issue_state TEXT NOT NULL,
    occurred_at TIMESTAMPTZ NOT NULL,
    recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    available_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    lease_token TEXT COLLATE "C",
    lease_expires_at TIMESTAMPTZ,
    attempts INTEGER NOT NULL DEFAULT 0,
    completed_at TIMESTAMPTZ,
    dead_lettered_at TIMESTAMPTZ,
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
) WITH (fillfactor = 80); -- room on each page so lease updates stay HOT
-- Claims walk the pending events in recording order and stop at the limit
-- (O(limit), not O(pending)); the occurrence index answers "is an earlier
-- event of this occurrence still pending?"; prune walks completed ones.
CREATE INDEX IF NOT EXISTS reporting_issue_events_pending
    ON reporting_issue_events (seq)
    WHERE completed_at IS NULL AND dead_lettered_at IS NULL;
CREATE INDEX IF NOT EXISTS reporting_issue_events_occurrence
    ON reporting_issue_events (issue_id, seq)
    WHERE completed_at IS NULL AND dead_lettered_at IS NULL;
CREATE INDEX IF NOT EXISTS reporting_issue_events_completed
    ON reporting_issue_events (completed_at)
    WHERE completed_at IS NOT NULL;
