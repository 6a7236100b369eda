-- adcp-version: 0011
-- adcp-upgrade: additive
-- Legacy inline import (docs/adopting.md, spec 02 §13), SQLite equivalent of
-- PostgreSQL's 0011: the durable resume cursor of each import (one row per
-- source and account scope; the key never holds a URL or a credential) and
-- the quarantine, one row per legacy revision whose rows did not reproduce
-- the committed binding. Reads of a quarantined revision fail closed with
-- ROWS_INTEGRITY_FAILED; the legacy source is never rewritten.
CREATE TABLE IF NOT EXISTS adcp_legacy_import_cursors (
  import_key TEXT NOT NULL PRIMARY KEY CHECK (length(import_key) BETWEEN 1 AND 600),
  source TEXT NOT NULL CHECK (source IN ('py-inline', 'js-inline')),
  account_id TEXT NULL CHECK (account_id IS NULL OR length(account_id) BETWEEN 1 AND 255),
  cursor_at TEXT NULL,
  cursor_id TEXT NULL CHECK (cursor_id IS NULL OR length(cursor_id) BETWEEN 1 AND 255),
  finished_at TEXT NULL,
  updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')
);
CREATE TABLE IF NOT EXISTS adcp_legacy_import_quarantine (
  revision_id TEXT NOT NULL PRIMARY KEY CHECK (length(revision_id) BETWEEN 1 AND 255),
  source TEXT NOT NULL CHECK (source IN ('py-inline', 'js-inline')),
  account_id TEXT NOT NULL CHECK (length(account_id) BETWEEN 1 AND 255),
  failed_check TEXT NOT NULL
    CHECK (failed_check IN ('digest', 'byte_count', 'row_count', 'unparsable_row', 'header')),
  message TEXT NOT NULL CHECK (length(message) <= 512),
  recorded_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')
);
CREATE INDEX IF NOT EXISTS adcp_legacy_import_quarantine_account
  ON adcp_legacy_import_quarantine (account_id, revision_id);
