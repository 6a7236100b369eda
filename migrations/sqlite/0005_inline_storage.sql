-- adcp-version: 0005
-- adcp-upgrade: additive
-- Inline staging objects and committed replay seals (spec 06 §1), SQLite
-- equivalent of PostgreSQL's 0005: same tables, columns and constraint
-- names; patterns are written with GLOB (SQLite has no regex), sha256() is
-- the connection function adcp_sha256_hex() and the identity binding uses
-- json_extract(). SQLite has no statement triggers or TRUNCATE: one BEFORE
-- UPDATE and one BEFORE DELETE trigger per table raise ABORT (SQLSTATE 23514
-- in the sql layer). src/inline/catalog.c audits this exact text.
CREATE TABLE IF NOT EXISTS reporting_inline_objects (
  account_id TEXT NOT NULL,
  payload_sha256 TEXT NOT NULL,
  payload BLOB NOT NULL,
  CONSTRAINT reporting_inline_objects_pk PRIMARY KEY (account_id, payload_sha256),
  CONSTRAINT reporting_inline_objects_account CHECK (length(account_id) BETWEEN 1 AND 255),
  CONSTRAINT reporting_inline_objects_digest
    CHECK (length(payload_sha256) = 64 AND payload_sha256 NOT GLOB '*[^a-f0-9]*'),
  CONSTRAINT reporting_inline_objects_size CHECK (length(payload) <= 16777216),
  CONSTRAINT reporting_inline_objects_bytes CHECK (payload_sha256 = adcp_sha256_hex(payload))
) STRICT;

CREATE TABLE IF NOT EXISTS reporting_inline_seals (
  account_id TEXT NOT NULL,
  source_execution_key TEXT NOT NULL,
  staged_commit_ref TEXT NOT NULL,
  manifest_sha256 TEXT NOT NULL,
  byte_count INTEGER NOT NULL,
  manifest BLOB NOT NULL,
  CONSTRAINT reporting_inline_seals_pk PRIMARY KEY (account_id, source_execution_key),
  CONSTRAINT reporting_inline_seals_account CHECK (length(account_id) BETWEEN 1 AND 255),
  CONSTRAINT reporting_inline_seals_key
    CHECK (length(source_execution_key) BETWEEN 8 AND 255
           AND source_execution_key NOT GLOB '*[^A-Za-z0-9_.:-]*'),
  CONSTRAINT reporting_inline_seals_ref
    CHECK (length(staged_commit_ref) BETWEEN 1 AND 255 AND staged_commit_ref GLOB '[A-Za-z0-9]*'
           AND staged_commit_ref NOT GLOB '*[^A-Za-z0-9_.-]*'),
  CONSTRAINT reporting_inline_seals_digest
    CHECK (length(manifest_sha256) = 64 AND manifest_sha256 NOT GLOB '*[^a-f0-9]*'),
  CONSTRAINT reporting_inline_seals_size CHECK (byte_count BETWEEN 1 AND 1048576),
  CONSTRAINT reporting_inline_seals_count CHECK (byte_count = length(manifest)),
  CONSTRAINT reporting_inline_seals_bytes CHECK (manifest_sha256 = adcp_sha256_hex(manifest)),
  CONSTRAINT reporting_inline_seals_account_binding
    CHECK (json_valid(CAST(manifest AS TEXT))
           AND json_extract(CAST(manifest AS TEXT), '$.identity.account_id') IS account_id),
  CONSTRAINT reporting_inline_seals_key_binding
    CHECK (json_valid(CAST(manifest AS TEXT))
           AND json_extract(CAST(manifest AS TEXT), '$.identity.source_execution_key') IS source_execution_key)
) STRICT;

CREATE TRIGGER IF NOT EXISTS reporting_inline_objects_immutable_update
BEFORE UPDATE ON reporting_inline_objects
BEGIN
  SELECT RAISE(ABORT, 'reporting inline storage is immutable');
END;

CREATE TRIGGER IF NOT EXISTS reporting_inline_objects_immutable_delete
BEFORE DELETE ON reporting_inline_objects
BEGIN
  SELECT RAISE(ABORT, 'reporting inline storage is immutable');
END;

CREATE TRIGGER IF NOT EXISTS reporting_inline_seals_immutable_update
BEFORE UPDATE ON reporting_inline_seals
BEGIN
  SELECT RAISE(ABORT, 'reporting inline storage is immutable');
END;

CREATE TRIGGER IF NOT EXISTS reporting_inline_seals_immutable_delete
BEFORE DELETE ON reporting_inline_seals
BEGIN
  SELECT RAISE(ABORT, 'reporting inline storage is immutable');
END;
