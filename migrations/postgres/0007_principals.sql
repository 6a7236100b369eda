-- adcp-version: 0007
-- adcp-upgrade: additive
-- Principal records and subscription-engine state (issue 17, docs/principals.md):
-- adcp_principals (CAS on version), the per-principal grant journal
-- (append-only and gapless: a BEFORE INSERT row trigger refuses any sequence
-- but head + 1, statement triggers refuse UPDATE, DELETE and TRUNCATE with
-- SQLSTATE 23514), exceptions (CAS on version) and the latest materialized
-- snapshot per principal (a BEFORE UPDATE trigger refuses a version that does
-- not grow or a journal position that goes back). Created only if absent.
DO $migration$
BEGIN
    CREATE TABLE IF NOT EXISTS adcp_principals (
        principal_id TEXT COLLATE "C" NOT NULL,
        account_scope TEXT COLLATE "C" NOT NULL,
        display_name TEXT NOT NULL DEFAULT '',
        status TEXT COLLATE "C" NOT NULL DEFAULT 'active',
        attributes TEXT NOT NULL DEFAULT '{}',
        version BIGINT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT adcp_principals_pk PRIMARY KEY (principal_id),
        CONSTRAINT adcp_principals_id CHECK (octet_length(principal_id) BETWEEN 1 AND 255),
        CONSTRAINT adcp_principals_scope CHECK (octet_length(account_scope) BETWEEN 1 AND 255),
        CONSTRAINT adcp_principals_name CHECK (octet_length(display_name) <= 1024),
        CONSTRAINT adcp_principals_status CHECK (status IN ('active', 'disabled')),
        CONSTRAINT adcp_principals_attributes CHECK (octet_length(attributes) BETWEEN 2 AND 65536),
        CONSTRAINT adcp_principals_version CHECK (version >= 1)
    );

    CREATE TABLE IF NOT EXISTS adcp_subscription_grants (
        principal_id TEXT COLLATE "C" NOT NULL,
        seq BIGINT NOT NULL,
        action TEXT COLLATE "C" NOT NULL,
        subject TEXT COLLATE "C" NOT NULL,
        scope TEXT COLLATE "C" NOT NULL,
        recorded_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT adcp_subscription_grants_pk PRIMARY KEY (principal_id, seq),
        CONSTRAINT adcp_subscription_grants_principal FOREIGN KEY (principal_id)
            REFERENCES adcp_principals (principal_id),
        CONSTRAINT adcp_subscription_grants_seq CHECK (seq >= 1),
        CONSTRAINT adcp_subscription_grants_action CHECK (action IN ('grant', 'revoke')),
        CONSTRAINT adcp_subscription_grants_subject CHECK (octet_length(subject) BETWEEN 1 AND 255),
        CONSTRAINT adcp_subscription_grants_scope CHECK (octet_length(scope) BETWEEN 1 AND 255)
    );

    CREATE TABLE IF NOT EXISTS adcp_subscription_exceptions (
        principal_id TEXT COLLATE "C" NOT NULL,
        subject TEXT COLLATE "C" NOT NULL,
        state TEXT COLLATE "C" NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        version BIGINT NOT NULL,
        opened_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT adcp_subscription_exceptions_pk PRIMARY KEY (principal_id, subject),
        CONSTRAINT adcp_subscription_exceptions_principal FOREIGN KEY (principal_id)
            REFERENCES adcp_principals (principal_id),
        CONSTRAINT adcp_subscription_exceptions_subject CHECK (octet_length(subject) BETWEEN 1 AND 255),
        CONSTRAINT adcp_subscription_exceptions_state CHECK (state IN ('open', 'cleared')),
        CONSTRAINT adcp_subscription_exceptions_reason CHECK (octet_length(reason) <= 1024),
        CONSTRAINT adcp_subscription_exceptions_version CHECK (version >= 1)
    );

    CREATE TABLE IF NOT EXISTS adcp_subscription_snapshots (
        principal_id TEXT COLLATE "C" NOT NULL,
        version BIGINT NOT NULL,
        journal_seq BIGINT NOT NULL,
        state TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
        CONSTRAINT adcp_subscription_snapshots_pk PRIMARY KEY (principal_id),
        CONSTRAINT adcp_subscription_snapshots_principal FOREIGN KEY (principal_id)
            REFERENCES adcp_principals (principal_id),
        CONSTRAINT adcp_subscription_snapshots_version CHECK (version >= 1),
        CONSTRAINT adcp_subscription_snapshots_seq CHECK (journal_seq >= 0),
        CONSTRAINT adcp_subscription_snapshots_state CHECK (octet_length(state) BETWEEN 2 AND 1048576)
    );

    IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = current_schema() AND p.proname = 'adcp_subscription_grants_immutable'
                     AND p.pronargs = 0) THEN
        CREATE FUNCTION adcp_subscription_grants_immutable() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = 'the subscription grant journal is immutable';
        END
        $fn$;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = current_schema() AND p.proname = 'adcp_subscription_grants_gapless'
                     AND p.pronargs = 0) THEN
        CREATE FUNCTION adcp_subscription_grants_gapless() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            IF NEW.seq <> coalesce((SELECT max(g.seq) FROM adcp_subscription_grants g
                                    WHERE g.principal_id = NEW.principal_id), 0) + 1 THEN
                RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = 'grant journal sequence must be head + 1';
            END IF;
            RETURN NEW;
        END
        $fn$;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
                   WHERE n.nspname = current_schema() AND p.proname = 'adcp_subscription_snapshots_monotonic'
                     AND p.pronargs = 0) THEN
        CREATE FUNCTION adcp_subscription_snapshots_monotonic() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            IF NEW.principal_id <> OLD.principal_id OR NEW.version <= OLD.version
               OR NEW.journal_seq < OLD.journal_seq THEN
                RAISE EXCEPTION USING ERRCODE = '23514', MESSAGE = 'subscription snapshots only move forward';
            END IF;
            RETURN NEW;
        END
        $fn$;
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_subscription_grants'
                     AND t.tgname = 'adcp_subscription_grants_immutable') THEN
        CREATE TRIGGER adcp_subscription_grants_immutable
            BEFORE UPDATE OR DELETE OR TRUNCATE ON adcp_subscription_grants
            FOR EACH STATEMENT EXECUTE FUNCTION adcp_subscription_grants_immutable();
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_subscription_grants'
                     AND t.tgname = 'adcp_subscription_grants_gapless') THEN
        CREATE TRIGGER adcp_subscription_grants_gapless
            BEFORE INSERT ON adcp_subscription_grants
            FOR EACH ROW EXECUTE FUNCTION adcp_subscription_grants_gapless();
    END IF;

    IF NOT EXISTS (SELECT 1 FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
                   JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = current_schema() AND c.relname = 'adcp_subscription_snapshots'
                     AND t.tgname = 'adcp_subscription_snapshots_monotonic') THEN
        CREATE TRIGGER adcp_subscription_snapshots_monotonic
            BEFORE UPDATE ON adcp_subscription_snapshots
            FOR EACH ROW EXECUTE FUNCTION adcp_subscription_snapshots_monotonic();
    END IF;
END
$migration$;
