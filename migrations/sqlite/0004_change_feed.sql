-- adcp-version: 0004
-- adcp-upgrade: additive
-- Change feed on SQLite: the closest faithful equivalent of PostgreSQL's 0004
-- (spec 03 §1). SQLite has one writer at a time and draws seq inside the
-- write transaction, so seq order is commit order and there is no xid: the
-- column is kept (always 0) so both engines share one cursor layout and one
-- (xid, seq) order, which is seq order: the deployment feed reads the rowid
-- (seq) itself, so PostgreSQL's (xid, seq) index has no SQLite twin (one
-- index less to write per change). AUTOINCREMENT: a seq is never reused
-- after pruning.
-- Instants are UTC text 'YYYY-MM-DDTHH:MM:SS.ffffffZ'. See docs/feed.md.
CREATE TABLE IF NOT EXISTS adcp_reporting_changes (
  seq INTEGER PRIMARY KEY, -- drawn by the append: above every row and the horizon
  xid INTEGER NOT NULL DEFAULT 0 CHECK (xid = 0),
  account_id TEXT NOT NULL,
  record_kind TEXT NOT NULL
    CHECK (record_kind IN ('obligation', 'revision', 'adjustment', 'retirement')),
  record_id TEXT NOT NULL,
  obligation_id TEXT NOT NULL,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')
) STRICT;
CREATE INDEX IF NOT EXISTS adcp_reporting_changes_account
  ON adcp_reporting_changes (account_id, seq);
CREATE INDEX IF NOT EXISTS adcp_reporting_changes_recorded
  ON adcp_reporting_changes (recorded_at, seq);

CREATE TABLE IF NOT EXISTS adcp_reporting_change_horizon (
  singleton INTEGER NOT NULL PRIMARY KEY DEFAULT 1 CHECK (singleton = 1),
  pruned_through_xid INTEGER NOT NULL DEFAULT 0 CHECK (pruned_through_xid >= 0),
  pruned_through_seq INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO adcp_reporting_change_horizon (singleton) VALUES (1) ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS adcp_reporting_change_account_horizon (
  account_id TEXT NOT NULL PRIMARY KEY,
  pruned_through_seq INTEGER NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS adcp_reporting_feed_consumers (
  consumer_name TEXT NOT NULL PRIMARY KEY
    CHECK (length(consumer_name) BETWEEN 1 AND 128 AND consumer_name NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  account_id TEXT NULL,
  cursor_xid INTEGER NULL,
  cursor_seq INTEGER NOT NULL,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CHECK ((account_id IS NULL) = (cursor_xid IS NOT NULL))
) STRICT;
