-- Row-storage tables of spec 02 §3 on SQLite: same tables, columns, CHECK
-- intent, indexes and immutability rules as the PostgreSQL layout.
-- Differences (docs/schema.md): UUID/BOOLEAN/JSONB/BYTEA/TIMESTAMPTZ become
-- TEXT/INTEGER/TEXT(JSON)/BLOB/TEXT; regex CHECKs become length + GLOB;
-- sha256() is the connection function adcp_sha256_hex() the library registers;
-- one trigger per table raises ABORT (SQLITE_CONSTRAINT_TRIGGER) where
-- PostgreSQL raises check_violation.

CREATE TABLE IF NOT EXISTS adcp_persistence_installation (
  singleton INTEGER NOT NULL DEFAULT 1 PRIMARY KEY CHECK (singleton = 1),
  installation_id TEXT NOT NULL DEFAULT (
    lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4' ||
    substr(lower(hex(randomblob(2))), 2) || '-' ||
    substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2) || '-' ||
    lower(hex(randomblob(6))))
    CHECK (length(installation_id) = 36 AND installation_id GLOB
      '[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f]-[0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f][0-9a-f]'),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')
) STRICT;

INSERT INTO adcp_persistence_installation (singleton) VALUES (1)
  ON CONFLICT (singleton) DO NOTHING;

CREATE TABLE IF NOT EXISTS adcp_reporting_row_bindings (
  row_binding_id TEXT NOT NULL PRIMARY KEY
    CHECK (length(row_binding_id) BETWEEN 1 AND 128 AND row_binding_id NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  kind TEXT NOT NULL CHECK (kind IN ('postgres', 'object')),
  provider TEXT NOT NULL
    CHECK (length(provider) BETWEEN 1 AND 64 AND provider GLOB '[a-z]*' AND provider NOT GLOB '*[^a-z0-9_]*'),
  identity_config TEXT NOT NULL
    CHECK (CASE WHEN json_valid(identity_config) THEN json_type(identity_config) = 'object' ELSE 0 END),
  identity_sha256 TEXT NOT NULL
    CHECK (length(identity_sha256) = 64 AND identity_sha256 NOT GLOB '*[^0-9a-f]*'),
  operational_config TEXT NOT NULL DEFAULT '{}'
    CHECK (CASE WHEN json_valid(operational_config) THEN json_type(operational_config) = 'object' ELSE 0 END),
  namespace_key TEXT NOT NULL
    CHECK (length(namespace_key) = 64 AND namespace_key NOT GLOB '*[^0-9a-f]*'),
  state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'read_only', 'retired')),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  retired_at TEXT NULL,
  CHECK ((state = 'retired') = (retired_at IS NOT NULL))
) STRICT;

CREATE TABLE IF NOT EXISTS adcp_reporting_row_sets (
  row_set_id TEXT NOT NULL PRIMARY KEY,
  row_set_kind TEXT NOT NULL CHECK (row_set_kind IN ('revision', 'adjustment')),
  account_id TEXT NOT NULL,
  obligation_id TEXT NOT NULL REFERENCES adcp_reporting_obligations (obligation_id),
  encoding TEXT NOT NULL CHECK (encoding = 'adcp_canonical_jsonl_v1'),
  digest_profile TEXT NOT NULL CHECK (digest_profile IN ('revision_envelope_v1', 'rows_v1')),
  content_sha256 TEXT NOT NULL
    CHECK (length(content_sha256) = 64 AND content_sha256 NOT GLOB '*[^0-9a-f]*'),
  canonical_byte_count INTEGER NOT NULL CHECK (canonical_byte_count > 0),
  row_count INTEGER NOT NULL CHECK (row_count >= 0),
  row_manifest_sha256 TEXT NOT NULL
    CHECK (length(row_manifest_sha256) = 64 AND row_manifest_sha256 NOT GLOB '*[^0-9a-f]*'),
  chunk_count INTEGER NOT NULL CHECK (chunk_count >= 0),
  rows_shared_from_row_set_id TEXT NULL REFERENCES adcp_reporting_row_sets (row_set_id),
  row_binding_id TEXT NOT NULL REFERENCES adcp_reporting_row_bindings (row_binding_id),
  row_location_version INTEGER NOT NULL DEFAULT 1 CHECK (row_location_version > 0),
  rows_state TEXT NOT NULL DEFAULT 'live'
    CHECK (rows_state IN ('live', 'pruning', 'pruned', 'unavailable')),
  rows_state_changed_at TEXT NULL,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  CHECK (rows_shared_from_row_set_id IS NULL OR rows_shared_from_row_set_id <> row_set_id),
  CHECK ((row_count = 0) = (chunk_count = 0))
) STRICT;

CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_obligation
  ON adcp_reporting_row_sets (obligation_id, recorded_at, row_set_id);
CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_state
  ON adcp_reporting_row_sets (account_id, rows_state, recorded_at)
  WHERE rows_state <> 'pruned';
CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_shared
  ON adcp_reporting_row_sets (rows_shared_from_row_set_id)
  WHERE rows_shared_from_row_set_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS adcp_reporting_row_chunks (
  row_set_id TEXT NOT NULL REFERENCES adcp_reporting_row_sets (row_set_id),
  chunk_index INTEGER NOT NULL CHECK (chunk_index >= 0),
  account_id TEXT NOT NULL,
  obligation_id TEXT NOT NULL,
  first_ordinal INTEGER NOT NULL CHECK (first_ordinal >= 0),
  row_count INTEGER NOT NULL CHECK (row_count > 0),
  byte_count INTEGER NOT NULL CHECK (byte_count > 0),
  sha256 TEXT NOT NULL CHECK (length(sha256) = 64 AND sha256 NOT GLOB '*[^0-9a-f]*'),
  segments TEXT NOT NULL
    CHECK (CASE WHEN json_valid(segments) THEN json_type(segments) = 'array' ELSE 0 END),
  object_key TEXT NULL,
  native_version TEXT NULL,
  compression TEXT NOT NULL DEFAULT 'none' CHECK (compression IN ('none', 'gzip')),
  physical_sha256 TEXT NULL
    CHECK (physical_sha256 IS NULL OR (length(physical_sha256) = 64 AND physical_sha256 NOT GLOB '*[^0-9a-f]*')),
  physical_byte_count INTEGER NULL CHECK (physical_byte_count IS NULL OR physical_byte_count > 0),
  PRIMARY KEY (row_set_id, chunk_index),
  CHECK ((object_key IS NULL) = (native_version IS NULL)
     AND (object_key IS NULL) = (physical_sha256 IS NULL)
     AND (object_key IS NULL) = (physical_byte_count IS NULL))
) STRICT;

CREATE INDEX IF NOT EXISTS adcp_reporting_row_chunks_object
  ON adcp_reporting_row_chunks (object_key, native_version)
  WHERE object_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS adcp_reporting_row_chunks_body
  ON adcp_reporting_row_chunks (account_id, obligation_id, sha256)
  WHERE object_key IS NULL;

CREATE TABLE IF NOT EXISTS adcp_reporting_chunk_bodies (
  account_id TEXT NOT NULL,
  obligation_id TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  body BLOB NOT NULL,
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  PRIMARY KEY (account_id, obligation_id, sha256),
  CHECK (sha256 = adcp_sha256_hex(body))
) STRICT;

CREATE TABLE IF NOT EXISTS adcp_reporting_row_write_intents (
  row_binding_id TEXT NOT NULL REFERENCES adcp_reporting_row_bindings (row_binding_id),
  account_id TEXT NOT NULL,
  row_set_id TEXT NOT NULL,
  content_sha256 TEXT NOT NULL
    CHECK (length(content_sha256) = 64 AND content_sha256 NOT GLOB '*[^0-9a-f]*'),
  state TEXT NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'sweeping')),
  owner_token TEXT NOT NULL,
  created_objects TEXT NOT NULL DEFAULT '[]'
    CHECK (CASE WHEN json_valid(created_objects) THEN json_type(created_objects) = 'array' ELSE 0 END),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z'),
  expires_at TEXT NOT NULL,
  PRIMARY KEY (row_binding_id, row_set_id, content_sha256)
) STRICT;

CREATE INDEX IF NOT EXISTS adcp_reporting_row_write_intents_expiry
  ON adcp_reporting_row_write_intents (expires_at, account_id)
  WHERE state = 'open';

-- Immutability (spec 02 §3.8): the same column sets as the PostgreSQL trigger.
CREATE TRIGGER IF NOT EXISTS adcp_reporting_row_bindings_immutable
  BEFORE UPDATE ON adcp_reporting_row_bindings
  WHEN NEW.row_binding_id IS NOT OLD.row_binding_id
    OR NEW.kind IS NOT OLD.kind
    OR NEW.provider IS NOT OLD.provider
    OR NEW.identity_config IS NOT OLD.identity_config
    OR NEW.identity_sha256 IS NOT OLD.identity_sha256
    OR NEW.namespace_key IS NOT OLD.namespace_key
BEGIN
  SELECT RAISE(ABORT, 'row binding identity is immutable');
END;

CREATE TRIGGER IF NOT EXISTS adcp_reporting_row_sets_immutable
  BEFORE UPDATE ON adcp_reporting_row_sets
  WHEN NEW.row_set_id IS NOT OLD.row_set_id
    OR NEW.row_set_kind IS NOT OLD.row_set_kind
    OR NEW.account_id IS NOT OLD.account_id
    OR NEW.obligation_id IS NOT OLD.obligation_id
    OR NEW.encoding IS NOT OLD.encoding
    OR NEW.digest_profile IS NOT OLD.digest_profile
    OR NEW.content_sha256 IS NOT OLD.content_sha256
    OR NEW.canonical_byte_count IS NOT OLD.canonical_byte_count
    OR NEW.row_count IS NOT OLD.row_count
    OR NEW.row_manifest_sha256 IS NOT OLD.row_manifest_sha256
    OR NEW.chunk_count IS NOT OLD.chunk_count
    OR NEW.rows_shared_from_row_set_id IS NOT OLD.rows_shared_from_row_set_id
    OR NEW.recorded_at IS NOT OLD.recorded_at
    OR (NEW.row_binding_id IS NOT OLD.row_binding_id
        AND NEW.row_location_version IS NOT OLD.row_location_version + 1)
BEGIN
  SELECT RAISE(ABORT, 'row set header is immutable');
END;

CREATE TRIGGER IF NOT EXISTS adcp_reporting_row_chunks_immutable
  BEFORE UPDATE ON adcp_reporting_row_chunks
  WHEN NEW.row_set_id IS NOT OLD.row_set_id
    OR NEW.chunk_index IS NOT OLD.chunk_index
    OR NEW.account_id IS NOT OLD.account_id
    OR NEW.obligation_id IS NOT OLD.obligation_id
    OR NEW.first_ordinal IS NOT OLD.first_ordinal
    OR NEW.row_count IS NOT OLD.row_count
    OR NEW.byte_count IS NOT OLD.byte_count
    OR NEW.sha256 IS NOT OLD.sha256
    OR NEW.segments IS NOT OLD.segments
BEGIN
  SELECT RAISE(ABORT, 'row chunk manifest is immutable');
END;

CREATE TRIGGER IF NOT EXISTS adcp_reporting_chunk_bodies_immutable
  BEFORE UPDATE ON adcp_reporting_chunk_bodies
BEGIN
  SELECT RAISE(ABORT, 'chunk bodies are immutable');
END;
