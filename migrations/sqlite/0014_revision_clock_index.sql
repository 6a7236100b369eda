-- adcp-version: 0014
-- adcp-upgrade: additive
-- The commit clock (docs/schema.md "Revision clock index"): the newest
-- recorded_at of an obligation, read by every commit, is one index probe
-- instead of a visit of every revision of the obligation.
CREATE INDEX IF NOT EXISTS adcp_reporting_revisions_obligation_clock
  ON adcp_reporting_revisions (obligation_id, recorded_at);
