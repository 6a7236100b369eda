-- adcp-version: 0009
-- adcp-upgrade: additive
-- Tamper-evident history (docs/trust.md), SQLite equivalent of PostgreSQL's
-- 0009: the per-account append-only Merkle log (one leaf per committed
-- revision or retirement record, in commit order), the complete subtree
-- hashes above the leaves (so a checkpoint or a proof never recomputes the
-- tree), and the signed checkpoints seen by this database. No foreign key to
-- the revisions: retirement deletes revisions and keeps their leaves. Rows are
-- insert-only: one BEFORE UPDATE and one BEFORE DELETE trigger per table.
CREATE TABLE IF NOT EXISTS adcp_audit_log_leaves (
  account_id TEXT NOT NULL CHECK (length(account_id) BETWEEN 1 AND 255),
  leaf_index INTEGER NOT NULL CHECK (leaf_index >= 0),
  entry_kind TEXT NOT NULL CHECK (entry_kind IN ('revision', 'retirement')),
  entry_id TEXT NOT NULL CHECK (length(entry_id) BETWEEN 1 AND 255),
  obligation_id TEXT NULL CHECK (obligation_id IS NULL OR length(obligation_id) BETWEEN 1 AND 255),
  entry_profile TEXT NOT NULL CHECK (entry_profile IN ('adcp-header-v1', 'adcp-retirement-v1')),
  entry_sha256 TEXT NOT NULL CHECK (length(entry_sha256) = 64 AND entry_sha256 NOT GLOB '*[^0-9a-f]*'),
  leaf_hash TEXT NOT NULL CHECK (length(leaf_hash) = 64 AND leaf_hash NOT GLOB '*[^0-9a-f]*'),
  entry_document TEXT NULL CHECK (entry_document IS NULL OR length(entry_document) <= 16777216),
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CONSTRAINT adcp_audit_log_leaves_pk PRIMARY KEY (account_id, leaf_index)
) STRICT;

-- Not unique: a revision ID committed again after its revision was deleted
-- (replaced, or retired and reused) gets a new leaf; the old one stays.
CREATE INDEX IF NOT EXISTS adcp_audit_log_leaves_entry ON adcp_audit_log_leaves (entry_kind, entry_id);

CREATE TABLE IF NOT EXISTS adcp_audit_log_nodes (
  account_id TEXT NOT NULL CHECK (length(account_id) BETWEEN 1 AND 255),
  level INTEGER NOT NULL CHECK (level BETWEEN 1 AND 62),
  node_index INTEGER NOT NULL CHECK (node_index >= 0),
  hash TEXT NOT NULL CHECK (length(hash) = 64 AND hash NOT GLOB '*[^0-9a-f]*'),
  CONSTRAINT adcp_audit_log_nodes_pk PRIMARY KEY (account_id, level, node_index)
) STRICT;

CREATE TABLE IF NOT EXISTS adcp_audit_checkpoints (
  account_id TEXT NOT NULL CHECK (length(account_id) BETWEEN 1 AND 255),
  tree_size INTEGER NOT NULL CHECK (tree_size >= 0),
  root_hash TEXT NOT NULL CHECK (length(root_hash) = 64 AND root_hash NOT GLOB '*[^0-9a-f]*'),
  signed_at TEXT NOT NULL,
  key_id TEXT NOT NULL CHECK (length(key_id) BETWEEN 1 AND 64),
  document TEXT NOT NULL CHECK (length(document) BETWEEN 2 AND 65536),
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CONSTRAINT adcp_audit_checkpoints_pk PRIMARY KEY (account_id, tree_size, signed_at, key_id)
) STRICT;

CREATE TRIGGER IF NOT EXISTS adcp_audit_log_leaves_immutable_update
BEFORE UPDATE ON adcp_audit_log_leaves
BEGIN
  SELECT RAISE(ABORT, 'adcp audit log is append-only');
END;

CREATE TRIGGER IF NOT EXISTS adcp_audit_log_leaves_immutable_delete
BEFORE DELETE ON adcp_audit_log_leaves
BEGIN
  SELECT RAISE(ABORT, 'adcp audit log is append-only');
END;

CREATE TRIGGER IF NOT EXISTS adcp_audit_log_nodes_immutable_update
BEFORE UPDATE ON adcp_audit_log_nodes
BEGIN
  SELECT RAISE(ABORT, 'adcp audit log is append-only');
END;

CREATE TRIGGER IF NOT EXISTS adcp_audit_log_nodes_immutable_delete
BEFORE DELETE ON adcp_audit_log_nodes
BEGIN
  SELECT RAISE(ABORT, 'adcp audit log is append-only');
END;

CREATE TRIGGER IF NOT EXISTS adcp_audit_checkpoints_immutable_update
BEFORE UPDATE ON adcp_audit_checkpoints
BEGIN
  SELECT RAISE(ABORT, 'adcp audit log is append-only');
END;

CREATE TRIGGER IF NOT EXISTS adcp_audit_checkpoints_immutable_delete
BEFORE DELETE ON adcp_audit_checkpoints
BEGIN
  SELECT RAISE(ABORT, 'adcp audit log is append-only');
END;
