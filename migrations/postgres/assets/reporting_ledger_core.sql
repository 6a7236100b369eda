-- Ledger Core tables: obligations, revision headers and adjustments.
-- This project's own layout, following the canonical header of the shared
-- persistence proposal (spec 02 §2.2): gapless revision_number, one official
-- per obligation, one successor per revision, explicit content-binding
-- columns, typed control totals, COLLATE "C" identifiers. docs/schema.md
-- explains every difference from the JS layout.

CREATE TABLE IF NOT EXISTS adcp_reporting_obligations (
  obligation_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_obligations_pkey PRIMARY KEY
    CONSTRAINT adcp_reporting_obligations_obligation_id_check
      CHECK (obligation_id ~ '^[A-Za-z0-9_.:-]{1,255}$'),
  configuration_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_obligations_configuration_id_check
      CHECK (char_length(configuration_id) BETWEEN 1 AND 255),
  account_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_obligations_account_id_check
      CHECK (char_length(account_id) BETWEEN 1 AND 255),
  period_ordinal BIGINT NOT NULL
    CONSTRAINT adcp_reporting_obligations_period_ordinal_check CHECK (period_ordinal >= 0),
  period_start TIMESTAMPTZ NOT NULL,
  period_end TIMESTAMPTZ NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending'
    CONSTRAINT adcp_reporting_obligations_state_check CHECK (state IN ('pending', 'terminal')),
  lease_owner TEXT COLLATE "C" NULL,
  lease_generation BIGINT NOT NULL DEFAULT 0
    CONSTRAINT adcp_reporting_obligations_lease_generation_check CHECK (lease_generation >= 0),
  lease_expires_at TIMESTAMPTZ NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT adcp_reporting_obligations_check CHECK (period_end > period_start),
  CONSTRAINT adcp_reporting_obligations_configuration_id_period_ordinal_key
    UNIQUE (configuration_id, period_ordinal)
);

CREATE INDEX IF NOT EXISTS adcp_reporting_obligations_account
  ON adcp_reporting_obligations (account_id, period_start, obligation_id);

CREATE TABLE IF NOT EXISTS adcp_reporting_revisions (
  revision_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_revisions_pkey PRIMARY KEY
    CONSTRAINT adcp_reporting_revisions_revision_id_check
      CHECK (revision_id ~ '^[A-Za-z0-9_.:-]{1,255}$'),
  obligation_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_revisions_obligation_id_fkey
      REFERENCES adcp_reporting_obligations (obligation_id),
  account_id TEXT COLLATE "C" NOT NULL,
  revision_number INTEGER NOT NULL
    CONSTRAINT adcp_reporting_revisions_revision_number_check CHECK (revision_number >= 1),
  finality TEXT NOT NULL
    CONSTRAINT adcp_reporting_revisions_finality_check CHECK (finality IN ('snapshot', 'official')),
  supersedes_revision_id TEXT COLLATE "C" NULL
    CONSTRAINT adcp_reporting_revisions_supersedes_revision_id_fkey
      REFERENCES adcp_reporting_revisions (revision_id),
  binding_algorithm TEXT NOT NULL
    CONSTRAINT adcp_reporting_revisions_binding_algorithm_check
      CHECK (binding_algorithm IN ('rfc8785_jcs_v1', 'legacy_py_core_pairs_v0')),
  revision_content_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_revisions_revision_content_sha256_check
      CHECK (revision_content_sha256 ~ '^[0-9a-f]{64}$'),
  canonical_byte_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_revisions_canonical_byte_count_check CHECK (canonical_byte_count > 0),
  row_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_revisions_row_count_check CHECK (row_count >= 0),
  control_totals TEXT NOT NULL
    CONSTRAINT adcp_reporting_revisions_control_totals_check
      CHECK (jsonb_typeof(control_totals::jsonb) = 'array'),
  row_manifest_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_revisions_row_manifest_sha256_check
      CHECK (row_manifest_sha256 ~ '^[0-9a-f]{64}$'),
  rows_shared_from_revision_id TEXT COLLATE "C" NULL
    CONSTRAINT adcp_reporting_revisions_rows_shared_from_revision_id_fkey
      REFERENCES adcp_reporting_revisions (revision_id),
  row_set_id TEXT COLLATE "C" NULL,
  observed_at TIMESTAMPTZ NULL,
  recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT adcp_reporting_revisions_obligation_id_revision_number_key
    UNIQUE (obligation_id, revision_number),
  -- Revision 1 starts the chain; every later revision names its predecessor.
  CONSTRAINT adcp_reporting_revisions_check
    CHECK ((revision_number = 1) = (supersedes_revision_id IS NULL)),
  CONSTRAINT adcp_reporting_revisions_check1
    CHECK (rows_shared_from_revision_id IS NULL OR rows_shared_from_revision_id <> revision_id)
);

-- At most one official revision per obligation.
CREATE UNIQUE INDEX IF NOT EXISTS adcp_reporting_revisions_one_official
  ON adcp_reporting_revisions (obligation_id) WHERE finality = 'official';
-- At most one successor per revision (the chain never forks).
CREATE UNIQUE INDEX IF NOT EXISTS adcp_reporting_revisions_one_successor
  ON adcp_reporting_revisions (supersedes_revision_id) WHERE supersedes_revision_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS adcp_reporting_revisions_account
  ON adcp_reporting_revisions (account_id, recorded_at, revision_id);
CREATE INDEX IF NOT EXISTS adcp_reporting_revisions_shared
  ON adcp_reporting_revisions (rows_shared_from_revision_id)
  WHERE rows_shared_from_revision_id IS NOT NULL;

CREATE TABLE IF NOT EXISTS adcp_reporting_adjustments (
  adjustment_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_adjustments_pkey PRIMARY KEY
    CONSTRAINT adcp_reporting_adjustments_adjustment_id_check
      CHECK (adjustment_id ~ '^[A-Za-z0-9_.:-]{1,255}$'),
  obligation_id TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_adjustments_obligation_id_fkey
      REFERENCES adcp_reporting_obligations (obligation_id),
  account_id TEXT COLLATE "C" NOT NULL,
  adjustment_number INTEGER NOT NULL
    CONSTRAINT adcp_reporting_adjustments_adjustment_number_check CHECK (adjustment_number >= 1),
  content_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_adjustments_content_sha256_check
      CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  canonical_byte_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_adjustments_canonical_byte_count_check CHECK (canonical_byte_count > 0),
  row_count BIGINT NOT NULL
    CONSTRAINT adcp_reporting_adjustments_row_count_check CHECK (row_count >= 0),
  row_manifest_sha256 TEXT COLLATE "C" NOT NULL
    CONSTRAINT adcp_reporting_adjustments_row_manifest_sha256_check
      CHECK (row_manifest_sha256 ~ '^[0-9a-f]{64}$'),
  row_set_id TEXT COLLATE "C" NULL,
  reason TEXT NULL,
  recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT adcp_reporting_adjustments_obligation_id_adjustment_number_key
    UNIQUE (obligation_id, adjustment_number)
);

-- Committed revision and adjustment headers never change; deletes stay allowed
-- (period retirement removes them).
CREATE OR REPLACE FUNCTION adcp_reporting_core_immutable() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
  RAISE EXCEPTION '% rows are immutable', TG_TABLE_NAME USING ERRCODE = '23514';
END;
$fn$;

DO $do$
DECLARE
  t TEXT;
BEGIN
  FOREACH t IN ARRAY ARRAY['adcp_reporting_revisions', 'adcp_reporting_adjustments'] LOOP
    IF NOT EXISTS (
      SELECT 1 FROM pg_trigger g
        JOIN pg_class c ON c.oid = g.tgrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = current_schema() AND c.relname = t AND g.tgname = t || '_immutable'
    ) THEN
      EXECUTE format('CREATE TRIGGER %I BEFORE UPDATE ON %I FOR EACH ROW '
                     'EXECUTE FUNCTION adcp_reporting_core_immutable()',
                     t || '_immutable', t);
    END IF;
  END LOOP;
END;
$do$;
