-- Row-storage tables of spec 02 §3, byte-compatible with the JS SDK's
-- REPORTING_ROW_STORAGE_MIGRATION: same names, columns, collations, CHECKs,
-- indexes and immutability trigger. Constraint names are the ones PostgreSQL
-- would choose for the unnamed JS DDL, so catalogs compare equal.
-- Idempotent: every object is created only if absent.

CREATE TABLE IF NOT EXISTS adcp_persistence_installation (
  singleton BOOLEAN NOT NULL DEFAULT TRUE
    CONSTRAINT adcp_persistence_installation_pkey PRIMARY KEY
    CONSTRAINT adcp_persistence_installation_singleton_check CHECK (singleton),
  installation_id UUID NOT NULL DEFAULT gen_random_uuid(),
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
);

INSERT INTO adcp_persistence_installation (singleton) VALUES (TRUE)
  ON CONFLICT (singleton) DO NOTHING;

CREATE TABLE IF NOT EXISTS adcp_reporting_row_bindings (
  row_binding_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_bindings_pkey PRIMARY KEY
    CONSTRAINT adcp_reporting_row_bindings_row_binding_id_check
      CHECK (row_binding_id ~ '^[A-Za-z0-9_.:-]{1,128}$'),
  kind TEXT NOT NULL
    CONSTRAINT adcp_reporting_row_bindings_kind_check CHECK (kind IN ('postgres', 'object')),
  provider TEXT NOT NULL
    CONSTRAINT adcp_reporting_row_bindings_provider_check CHECK (provider ~ '^[a-z][a-z0-9_]{0,63}$'),
  identity_config JSONB NOT NULL
    CONSTRAINT adcp_reporting_row_bindings_identity_config_check
      CHECK (jsonb_typeof(identity_config) = 'object'),
  identity_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_bindings_identity_sha256_check
      CHECK (identity_sha256 ~ '^[0-9a-f]{64}$'),
  operational_config JSONB NOT NULL DEFAULT '{}'
    CONSTRAINT adcp_reporting_row_bindings_operational_config_check
      CHECK (jsonb_typeof(operational_config) = 'object'),
  namespace_key TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_bindings_namespace_key_check
      CHECK (namespace_key ~ '^[0-9a-f]{64}$'),
  state TEXT NOT NULL DEFAULT 'active'
    CONSTRAINT adcp_reporting_row_bindings_state_check
      CHECK (state IN ('active', 'read_only', 'retired')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  retired_at TIMESTAMPTZ NULL,
  CONSTRAINT adcp_reporting_row_bindings_check
    CHECK ((state = 'retired') = (retired_at IS NOT NULL))
);

CREATE TABLE IF NOT EXISTS adcp_reporting_row_sets (
  row_set_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_sets_pkey PRIMARY KEY,
  row_set_kind TEXT NOT NULL
    CONSTRAINT adcp_reporting_row_sets_row_set_kind_check
      CHECK (row_set_kind IN ('revision', 'adjustment')),
  account_id TEXT COLLATE "C" NOT NULL,
  obligation_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_sets_obligation_id_fkey
      REFERENCES adcp_reporting_obligations (obligation_id),
  encoding TEXT NOT NULL
    CONSTRAINT adcp_reporting_row_sets_encoding_check
      CHECK (encoding = 'adcp_canonical_jsonl_v1'),
  digest_profile TEXT NOT NULL
    CONSTRAINT adcp_reporting_row_sets_digest_profile_check
      CHECK (digest_profile IN ('revision_envelope_v1', 'rows_v1')),
  content_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_sets_content_sha256_check
      CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  canonical_byte_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_row_sets_canonical_byte_count_check CHECK (canonical_byte_count > 0),
  row_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_row_sets_row_count_check CHECK (row_count >= 0),
  row_manifest_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_sets_row_manifest_sha256_check
      CHECK (row_manifest_sha256 ~ '^[0-9a-f]{64}$'),
  chunk_count INTEGER NOT NULL
    CONSTRAINT adcp_reporting_row_sets_chunk_count_check CHECK (chunk_count >= 0),
  rows_shared_from_row_set_id TEXT COLLATE "C" NULL
    CONSTRAINT adcp_reporting_row_sets_rows_shared_from_row_set_id_fkey
      REFERENCES adcp_reporting_row_sets (row_set_id),
  row_binding_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_sets_row_binding_id_fkey
      REFERENCES adcp_reporting_row_bindings (row_binding_id),
  row_location_version INTEGER NOT NULL DEFAULT 1
    CONSTRAINT adcp_reporting_row_sets_row_location_version_check CHECK (row_location_version > 0),
  rows_state TEXT NOT NULL DEFAULT 'live'
    CONSTRAINT adcp_reporting_row_sets_rows_state_check
      CHECK (rows_state IN ('live', 'pruning', 'pruned', 'unavailable')),
  rows_state_changed_at TIMESTAMPTZ NULL,
  recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT adcp_reporting_row_sets_check
    CHECK (rows_shared_from_row_set_id IS NULL OR rows_shared_from_row_set_id <> row_set_id),
  CONSTRAINT adcp_reporting_row_sets_check1
    CHECK ((row_count = 0) = (chunk_count = 0))
);

CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_obligation
  ON adcp_reporting_row_sets (obligation_id, recorded_at, row_set_id);
CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_state
  ON adcp_reporting_row_sets (account_id, rows_state, recorded_at)
  WHERE rows_state <> 'pruned';
CREATE INDEX IF NOT EXISTS adcp_reporting_row_sets_shared
  ON adcp_reporting_row_sets (rows_shared_from_row_set_id)
  WHERE rows_shared_from_row_set_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS adcp_reporting_row_chunks (
  row_set_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_row_set_id_fkey
      REFERENCES adcp_reporting_row_sets (row_set_id),
  chunk_index INTEGER NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_chunk_index_check CHECK (chunk_index >= 0),
  account_id TEXT COLLATE "C" NOT NULL,
  obligation_id TEXT COLLATE "C" NOT NULL,
  first_ordinal BIGINT NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_first_ordinal_check CHECK (first_ordinal >= 0),
  row_count INTEGER NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_row_count_check CHECK (row_count > 0),
  byte_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_byte_count_check CHECK (byte_count > 0),
  sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_sha256_check CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  segments JSONB NOT NULL
    CONSTRAINT adcp_reporting_row_chunks_segments_check CHECK (jsonb_typeof(segments) = 'array'),
  object_key TEXT COLLATE "C" NULL,
  native_version TEXT NULL,
  compression TEXT NOT NULL DEFAULT 'none'
    CONSTRAINT adcp_reporting_row_chunks_compression_check CHECK (compression IN ('none', 'gzip')),
  physical_sha256 TEXT COLLATE "C" NULL
    CONSTRAINT adcp_reporting_row_chunks_physical_sha256_check
      CHECK (physical_sha256 IS NULL OR physical_sha256 ~ '^[0-9a-f]{64}$'),
  physical_byte_count BIGINT NULL
    CONSTRAINT adcp_reporting_row_chunks_physical_byte_count_check
      CHECK (physical_byte_count IS NULL OR physical_byte_count > 0),
  CONSTRAINT adcp_reporting_row_chunks_pkey PRIMARY KEY (row_set_id, chunk_index),
  CONSTRAINT adcp_reporting_row_chunks_check
    CHECK ((object_key IS NULL) = (native_version IS NULL)
       AND (object_key IS NULL) = (physical_sha256 IS NULL)
       AND (object_key IS NULL) = (physical_byte_count IS NULL))
);

CREATE INDEX IF NOT EXISTS adcp_reporting_row_chunks_object
  ON adcp_reporting_row_chunks (object_key, native_version)
  WHERE object_key IS NOT NULL;
CREATE INDEX IF NOT EXISTS adcp_reporting_row_chunks_body
  ON adcp_reporting_row_chunks (account_id, obligation_id, sha256)
  WHERE object_key IS NULL;

CREATE TABLE IF NOT EXISTS adcp_reporting_chunk_bodies (
  account_id TEXT COLLATE "C" NOT NULL,
  obligation_id TEXT COLLATE "C" NOT NULL,
  sha256 TEXT COLLATE "C" NOT NULL,
  body BYTEA NOT NULL,
  recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT adcp_reporting_chunk_bodies_pkey PRIMARY KEY (account_id, obligation_id, sha256),
  CONSTRAINT adcp_reporting_chunk_bodies_check CHECK (sha256 = encode(sha256(body), 'hex'))
);

CREATE TABLE IF NOT EXISTS adcp_reporting_row_write_intents (
  row_binding_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_write_intents_row_binding_id_fkey
      REFERENCES adcp_reporting_row_bindings (row_binding_id),
  account_id TEXT COLLATE "C" NOT NULL,
  row_set_id TEXT COLLATE "C" NOT NULL,
  content_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_row_write_intents_content_sha256_check
      CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  state TEXT NOT NULL DEFAULT 'open'
    CONSTRAINT adcp_reporting_row_write_intents_state_check CHECK (state IN ('open', 'sweeping')),
  owner_token TEXT COLLATE "C" NOT NULL,
  created_objects JSONB NOT NULL DEFAULT '[]'
    CONSTRAINT adcp_reporting_row_write_intents_created_objects_check
      CHECK (jsonb_typeof(created_objects) = 'array'),
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  expires_at TIMESTAMPTZ NOT NULL,
  CONSTRAINT adcp_reporting_row_write_intents_pkey PRIMARY KEY (row_binding_id, row_set_id, content_sha256)
);

CREATE INDEX IF NOT EXISTS adcp_reporting_row_write_intents_expiry
  ON adcp_reporting_row_write_intents (expires_at, account_id)
  WHERE state = 'open';

-- One trigger function for the four guarded tables (spec 02 §3.8). A forbidden
-- change raises check_violation (23514); deletes are never blocked.
-- The official JS and Python SDKs create a function of this name in the same
-- schema: create ours only if none exists, so neither side overwrites the
-- other's body (the catalog audit leaves this body out of its fingerprint).
DO $do$
BEGIN
  IF NOT EXISTS (
    SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = current_schema() AND p.proname = 'adcp_reporting_row_storage_immutable'
       AND p.pronargs = 0
  ) THEN
    EXECUTE $create$
    CREATE FUNCTION adcp_reporting_row_storage_immutable() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_TABLE_NAME = 'adcp_reporting_row_bindings' THEN
        IF NEW.row_binding_id IS DISTINCT FROM OLD.row_binding_id
           OR NEW.kind IS DISTINCT FROM OLD.kind
           OR NEW.provider IS DISTINCT FROM OLD.provider
           OR NEW.identity_config IS DISTINCT FROM OLD.identity_config
           OR NEW.identity_sha256 IS DISTINCT FROM OLD.identity_sha256
           OR NEW.namespace_key IS DISTINCT FROM OLD.namespace_key THEN
          RAISE EXCEPTION 'row binding identity is immutable' USING ERRCODE = '23514';
        END IF;
      ELSIF TG_TABLE_NAME = 'adcp_reporting_row_sets' THEN
        IF NEW.row_set_id IS DISTINCT FROM OLD.row_set_id
           OR NEW.row_set_kind IS DISTINCT FROM OLD.row_set_kind
           OR NEW.account_id IS DISTINCT FROM OLD.account_id
           OR NEW.obligation_id IS DISTINCT FROM OLD.obligation_id
           OR NEW.encoding IS DISTINCT FROM OLD.encoding
           OR NEW.digest_profile IS DISTINCT FROM OLD.digest_profile
           OR NEW.content_sha256 IS DISTINCT FROM OLD.content_sha256
           OR NEW.canonical_byte_count IS DISTINCT FROM OLD.canonical_byte_count
           OR NEW.row_count IS DISTINCT FROM OLD.row_count
           OR NEW.row_manifest_sha256 IS DISTINCT FROM OLD.row_manifest_sha256
           OR NEW.chunk_count IS DISTINCT FROM OLD.chunk_count
           OR NEW.rows_shared_from_row_set_id IS DISTINCT FROM OLD.rows_shared_from_row_set_id
           OR NEW.recorded_at IS DISTINCT FROM OLD.recorded_at THEN
          RAISE EXCEPTION 'row set header is immutable' USING ERRCODE = '23514';
        END IF;
        IF NEW.row_binding_id IS DISTINCT FROM OLD.row_binding_id
           AND NEW.row_location_version IS DISTINCT FROM OLD.row_location_version + 1 THEN
          RAISE EXCEPTION 'a binding move must advance row_location_version by one' USING ERRCODE = '23514';
        END IF;
      ELSIF TG_TABLE_NAME = 'adcp_reporting_row_chunks' THEN
        IF NEW.row_set_id IS DISTINCT FROM OLD.row_set_id
           OR NEW.chunk_index IS DISTINCT FROM OLD.chunk_index
           OR NEW.account_id IS DISTINCT FROM OLD.account_id
           OR NEW.obligation_id IS DISTINCT FROM OLD.obligation_id
           OR NEW.first_ordinal IS DISTINCT FROM OLD.first_ordinal
           OR NEW.row_count IS DISTINCT FROM OLD.row_count
           OR NEW.byte_count IS DISTINCT FROM OLD.byte_count
           OR NEW.sha256 IS DISTINCT FROM OLD.sha256
           OR NEW.segments IS DISTINCT FROM OLD.segments THEN
          RAISE EXCEPTION 'row chunk manifest is immutable' USING ERRCODE = '23514';
        END IF;
      ELSIF TG_TABLE_NAME = 'adcp_reporting_chunk_bodies' THEN
        RAISE EXCEPTION 'chunk bodies are immutable' USING ERRCODE = '23514';
      END IF;
      RETURN NEW;
    END;
    $fn$
    $create$;
  END IF;
END;
$do$;

-- PostgreSQL 13 has no CREATE OR REPLACE TRIGGER: create each trigger only if a
-- trigger of that name is not attached to that table in the current schema.
DO $do$
DECLARE
  t TEXT;
BEGIN
  FOREACH t IN ARRAY ARRAY['adcp_reporting_row_bindings', 'adcp_reporting_row_sets',
                           'adcp_reporting_row_chunks', 'adcp_reporting_chunk_bodies'] LOOP
    IF NOT EXISTS (
      SELECT 1 FROM pg_trigger g
        JOIN pg_class c ON c.oid = g.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relname = t AND g.tgname = t || '_immutable'
    ) THEN
      EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE ON %I FOR EACH ROW '
                     'EXECUTE FUNCTION adcp_reporting_row_storage_immutable()',
                     t || '_immutable', t);
    END IF;
  END LOOP;
END;
$do$;
