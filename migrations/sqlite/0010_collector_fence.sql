-- adcp-version: 0010
-- adcp-upgrade: additive
-- The ownership fence of spec 04 §6 (docs/fence.md), SQLite equivalent of
-- PostgreSQL's 0010: one row per (namespace, object binding) naming the epoch
-- this database holds in the bucket's `_collector-fence/` chain, the advance
-- in flight (pending_*, committed before its fence object is written) and the
-- fingerprint of the database file that made the claim (a copied file has
-- another). The epoch only ever increases (trigger).
CREATE TABLE IF NOT EXISTS adcp_reporting_orphan_collector_fences (
  namespace_key TEXT NOT NULL CHECK (length(namespace_key) = 64 AND namespace_key NOT GLOB '*[^0-9a-f]*'),
  row_binding_id TEXT NOT NULL REFERENCES adcp_reporting_row_bindings (row_binding_id),
  scope_sha256 TEXT NOT NULL CHECK (length(scope_sha256) = 64 AND scope_sha256 NOT GLOB '*[^0-9a-f]*'),
  epoch INTEGER NOT NULL CHECK (epoch > 0),
  owner_id TEXT NOT NULL CHECK (length(owner_id) BETWEEN 1 AND 128 AND owner_id NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  owner_token TEXT NOT NULL CHECK (length(owner_token) = 32 AND owner_token NOT GLOB '*[^0-9a-f]*'),
  claimed_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  pending_epoch INTEGER NULL CHECK (pending_epoch IS NULL OR pending_epoch > 0),
  pending_token TEXT NULL CHECK (pending_token IS NULL OR (length(pending_token) = 32 AND
                                                            pending_token NOT GLOB '*[^0-9a-f]*')),
  pending_at TEXT NULL,
  database_fingerprint TEXT NOT NULL CHECK (length(database_fingerprint) BETWEEN 1 AND 512),
  CHECK ((pending_epoch IS NULL) = (pending_token IS NULL)),
  CONSTRAINT adcp_reporting_orphan_collector_fences_pk PRIMARY KEY (namespace_key, row_binding_id)
) STRICT;

CREATE TRIGGER IF NOT EXISTS adcp_collector_fences_epoch_only_up
BEFORE UPDATE OF epoch ON adcp_reporting_orphan_collector_fences
WHEN NEW.epoch < OLD.epoch
BEGIN
  SELECT RAISE(ABORT, 'adcp collector fence epoch never decreases');
END;
