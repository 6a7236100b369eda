-- adcp-version: 0010
-- adcp-upgrade: additive
-- The ownership fence of spec 04 §6 (docs/fence.md): one row per (namespace,
-- object binding) naming the epoch this database holds in the bucket's
-- `_collector-fence/` chain. pending_* records an advance in flight (the
-- epoch + 1 intent, committed before its fence object is written, so a crash
-- between the object write and the row update resumes the same claim);
-- database_fingerprint names the database that made the claim, so a copy of
-- it (dump/restore, CREATE DATABASE ... TEMPLATE) sees a row that is not its
-- own. The epoch only ever increases (trigger, SQLSTATE 23514).
DO $migration$
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('adcp.collector.fence.schema'));

    CREATE TABLE IF NOT EXISTS adcp_reporting_orphan_collector_fences (
        namespace_key TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_collector_fences_namespace CHECK (namespace_key ~ '^[0-9a-f]{64}$'),
        row_binding_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_collector_fences_binding REFERENCES adcp_reporting_row_bindings (row_binding_id),
        scope_sha256 TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_collector_fences_scope CHECK (scope_sha256 ~ '^[0-9a-f]{64}$'),
        epoch BIGINT NOT NULL CONSTRAINT adcp_collector_fences_epoch CHECK (epoch > 0),
        owner_id TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_collector_fences_owner CHECK (owner_id ~ '^[A-Za-z0-9_.:-]{1,128}$'),
        owner_token TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_collector_fences_token CHECK (owner_token ~ '^[0-9a-f]{32}$'),
        claimed_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        pending_epoch BIGINT NULL CONSTRAINT adcp_collector_fences_pending_epoch CHECK (pending_epoch > 0),
        pending_token TEXT COLLATE "C" NULL
            CONSTRAINT adcp_collector_fences_pending_token CHECK (pending_token ~ '^[0-9a-f]{32}$'),
        pending_at TIMESTAMPTZ NULL,
        database_fingerprint TEXT COLLATE "C" NOT NULL
            CONSTRAINT adcp_collector_fences_fingerprint CHECK (char_length(database_fingerprint) BETWEEN 1 AND 512),
        CONSTRAINT adcp_collector_fences_pending CHECK ((pending_epoch IS NULL) = (pending_token IS NULL)),
        CONSTRAINT adcp_reporting_orphan_collector_fences_pk PRIMARY KEY (namespace_key, row_binding_id)
    );

    IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = current_schema() AND p.proname = 'adcp_collector_fence_epoch_only_up'
                     AND p.pronargs = 0) THEN
        CREATE FUNCTION adcp_collector_fence_epoch_only_up() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            IF NEW.epoch < OLD.epoch THEN
                RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = 'adcp collector fence epoch never decreases';
            END IF;
            RETURN NEW;
        END
        $fn$;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_reporting_orphan_collector_fences'
                     AND t.tgname = 'adcp_collector_fences_epoch_only_up') THEN
        CREATE TRIGGER adcp_collector_fences_epoch_only_up
            BEFORE UPDATE ON adcp_reporting_orphan_collector_fences
            FOR EACH ROW EXECUTE FUNCTION adcp_collector_fence_epoch_only_up();
    END IF;
END
$migration$;
