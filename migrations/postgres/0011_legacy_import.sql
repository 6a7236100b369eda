-- adcp-version: 0011
-- adcp-upgrade: additive
-- Legacy inline import (docs/adopting.md, spec 02 §13): the durable resume
-- cursor of each import (one row per source and account scope; the key never
-- holds a URL or a credential) and the quarantine, one row per legacy
-- revision whose rows did not reproduce the committed binding. Reads of a
-- quarantined revision fail closed with ROWS_INTEGRITY_FAILED; the legacy
-- source is never rewritten. Created only if absent, under a schema lock.
DO $migration$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('adcp.legacy.import.schema'));

    CREATE TABLE IF NOT EXISTS adcp_legacy_import_cursors (
        import_key TEXT COLLATE "C" NOT NULL PRIMARY KEY
            CONSTRAINT adcp_legacy_import_cursors_key CHECK (char_length(import_key) BETWEEN 1 AND 600),
        source TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_legacy_import_cursors_source CHECK (source IN ('py-inline', 'js-inline')),
        account_id TEXT COLLATE "C" NULL
            CONSTRAINT adcp_legacy_import_cursors_account CHECK (char_length(account_id) BETWEEN 1 AND 255),
        cursor_at TEXT COLLATE "C" NULL,
        cursor_id TEXT COLLATE "C" NULL
            CONSTRAINT adcp_legacy_import_cursors_id CHECK (char_length(cursor_id) BETWEEN 1 AND 255),
        finished_at TIMESTAMPTZ NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
    );
    CREATE TABLE IF NOT EXISTS adcp_legacy_import_quarantine (
        revision_id TEXT COLLATE "C" NOT NULL PRIMARY KEY
            CONSTRAINT adcp_legacy_import_quarantine_id CHECK (char_length(revision_id) BETWEEN 1 AND 255),
        source TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_legacy_import_quarantine_source CHECK (source IN ('py-inline', 'js-inline')),
        account_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_legacy_import_quarantine_account CHECK (char_length(account_id) BETWEEN 1 AND 255),
        failed_check TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_legacy_import_quarantine_check
                CHECK (failed_check IN ('digest', 'byte_count', 'row_count', 'unparsable_row', 'header')),
        message TEXT NOT NULL CONSTRAINT adcp_legacy_import_quarantine_message CHECK (char_length(message) <= 512),
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
    );
    CREATE INDEX IF NOT EXISTS adcp_legacy_import_quarantine_account
        ON adcp_legacy_import_quarantine (account_id, revision_id);
END
$migration$;
