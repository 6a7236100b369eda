-- adcp-version: 0009
-- adcp-upgrade: additive
-- Tamper-evident history (docs/trust.md): the per-account append-only Merkle
-- log (one leaf per committed revision or retirement record, in commit
-- order), the complete subtree hashes above the leaves (so a checkpoint or a
-- proof never recomputes the tree), and the signed checkpoints seen by this
-- database. No foreign key to the revisions: retirement deletes revisions and
-- keeps their leaves. Statement-level triggers refuse UPDATE, DELETE and
-- TRUNCATE with SQLSTATE 23514. Created only if absent, under a schema lock.
DO $migration$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('adcp.audit.history.schema'));

    CREATE TABLE IF NOT EXISTS adcp_audit_log_leaves (
        account_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_leaves_account CHECK (char_length(account_id) BETWEEN 1 AND 255),
        leaf_index BIGINT NOT NULL CONSTRAINT adcp_audit_log_leaves_index CHECK (leaf_index >= 0),
        entry_kind TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_leaves_kind CHECK (entry_kind IN ('revision', 'retirement')),
        entry_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_leaves_entry_id CHECK (char_length(entry_id) BETWEEN 1 AND 255),
        obligation_id TEXT COLLATE "C" NULL
            CONSTRAINT adcp_audit_log_leaves_obligation CHECK (char_length(obligation_id) BETWEEN 1 AND 255),
        entry_profile TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_leaves_profile
                CHECK (entry_profile IN ('adcp-header-v1', 'adcp-retirement-v1')),
        entry_sha256 TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_leaves_entry_sha256 CHECK (entry_sha256 ~ '^[0-9a-f]{64}$'),
        leaf_hash TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_leaves_leaf_hash CHECK (leaf_hash ~ '^[0-9a-f]{64}$'),
        entry_document TEXT NULL
            CONSTRAINT adcp_audit_log_leaves_document CHECK (octet_length(entry_document) <= 16777216),
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT adcp_audit_log_leaves_pk PRIMARY KEY (account_id, leaf_index)
    );
    -- Not unique: a revision ID committed again after its revision was deleted
    -- (replaced, or retired and reused) gets a new leaf; the old one stays.
    CREATE INDEX IF NOT EXISTS adcp_audit_log_leaves_entry ON adcp_audit_log_leaves (entry_kind, entry_id);

    CREATE TABLE IF NOT EXISTS adcp_audit_log_nodes (
        account_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_log_nodes_account CHECK (char_length(account_id) BETWEEN 1 AND 255),
        level INTEGER NOT NULL CONSTRAINT adcp_audit_log_nodes_level CHECK (level BETWEEN 1 AND 62),
        node_index BIGINT NOT NULL CONSTRAINT adcp_audit_log_nodes_index CHECK (node_index >= 0),
        hash TEXT COLLATE "C" NOT NULL CONSTRAINT adcp_audit_log_nodes_hash CHECK (hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT adcp_audit_log_nodes_pk PRIMARY KEY (account_id, level, node_index)
    );

    CREATE TABLE IF NOT EXISTS adcp_audit_checkpoints (
        account_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_checkpoints_account CHECK (char_length(account_id) BETWEEN 1 AND 255),
        tree_size BIGINT NOT NULL CONSTRAINT adcp_audit_checkpoints_size CHECK (tree_size >= 0),
        root_hash TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_checkpoints_root CHECK (root_hash ~ '^[0-9a-f]{64}$'),
        signed_at TEXT COLLATE "C" NOT NULL,
        key_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_audit_checkpoints_key_id CHECK (char_length(key_id) BETWEEN 1 AND 64),
        document TEXT NOT NULL
            CONSTRAINT adcp_audit_checkpoints_document CHECK (octet_length(document) BETWEEN 2 AND 65536),
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT adcp_audit_checkpoints_pk PRIMARY KEY (account_id, tree_size, signed_at, key_id)
    );

    IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = current_schema() AND p.proname = 'adcp_audit_immutable'
                     AND p.pronargs = 0) THEN
        CREATE FUNCTION adcp_audit_immutable() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = 'adcp audit log is append-only';
        END
        $fn$;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_audit_log_leaves'
                     AND t.tgname = 'adcp_audit_log_leaves_immutable') THEN
        CREATE TRIGGER adcp_audit_log_leaves_immutable
            BEFORE UPDATE OR DELETE OR TRUNCATE ON adcp_audit_log_leaves
            FOR EACH STATEMENT EXECUTE FUNCTION adcp_audit_immutable();
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_audit_log_nodes'
                     AND t.tgname = 'adcp_audit_log_nodes_immutable') THEN
        CREATE TRIGGER adcp_audit_log_nodes_immutable
            BEFORE UPDATE OR DELETE OR TRUNCATE ON adcp_audit_log_nodes
            FOR EACH STATEMENT EXECUTE FUNCTION adcp_audit_immutable();
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_audit_checkpoints'
                     AND t.tgname = 'adcp_audit_checkpoints_immutable') THEN
        CREATE TRIGGER adcp_audit_checkpoints_immutable
            BEFORE UPDATE OR DELETE OR TRUNCATE ON adcp_audit_checkpoints
            FOR EACH STATEMENT EXECUTE FUNCTION adcp_audit_immutable();
    END IF;
END
$migration$;
