-- adcp-version: 0014
-- adcp-upgrade: additive
-- The commit clock (docs/schema.md "Revision clock index"): every commit reads
-- the newest recorded_at of its obligation, under the account lock, so its
-- own instant is never earlier (recorded_at is monotonic per obligation).
-- Without this index the engine visited every revision of the obligation to
-- take that maximum: 0.8 ms a commit once an obligation had 96 revisions (a
-- tenth of the spec's day), growing with each one. C-only, tolerated by the
-- JS and Python SDKs (they probe table names). CREATE INDEX holds writes to
-- the revisions table while it builds.
CREATE INDEX IF NOT EXISTS adcp_reporting_revisions_obligation_clock
  ON adcp_reporting_revisions (obligation_id, recorded_at);
