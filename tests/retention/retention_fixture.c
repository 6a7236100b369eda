/* tests/retention/retention_fixture.c — room tests/retention: the definitions behind retention_fixture.h,
 * compiled once into the test library. */
#include "retention_fixture.h"

static int fail_hook(void *ctx, int step, const char *key) {
  (void)key;
  renv *e = ctx;
  return step == ADCP_FS_STEP_FSYNC_DIR && atomic_load(&e->fail_a);
}

void renv_bindings(renv *e, adcp_ledger *l, int with_a) {
  adcp_error err = {0};
  static adcp_object_kv loca[1] = {{"root", "a"}}, locb[1] = {{"root", "b"}};
  adcp_ledger_binding_config a = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fsa",
      .provider = "filesystem",
      .location = loca,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_NONE,
      .client = e->pa,
  };
  adcp_ledger_binding_config b = {
      .version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
      .id = "fsb",
      .provider = "filesystem",
      .location = locb,
      .n_location = 1,
      .prefix = "rows",
      .compression = ADCP_OBJECT_COMPRESSION_GZIP,
      .client = e->pb,
  };
  if (with_a) OK(adcp_ledger_configure_binding(l, &a, &err));
  OK(adcp_ledger_configure_binding(l, &b, &err));
}

adcp_ledger *renv_ledger(renv *e, adcp_sql_conn *c, int with_a) {
  adcp_error err = {0};
  adcp_ledger *l;
  adcp_ledger_options o = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 2000};
  OK(adcp_ledger_open(&l, c, &o, &err));
  renv_bindings(e, l, with_a);
  return l;
}

void renv_open(renv *e, const fixture *f) {
  adcp_error err = {0};
  memset(e, 0, sizeof *e);
  e->s = open_migrated(f);
  e->c = adcp_storage_sql(e->s);
  e->pg = f->dialect == ADCP_SQL_POSTGRES;
  e->dir = tu_mkdtemp();
  snprintf(e->root_a, sizeof e->root_a, "%s/a", e->dir);
  snprintf(e->root_b, sizeof e->root_b, "%s/b", e->dir);
  adcp_fs_provider_options pa = {"a", "rows", 1, 0, fail_hook, e};
  adcp_fs_provider_options pb = {"b", "rows", 1, 0, NULL, NULL};
  OK(adcp_fs_provider_new(&e->pa, e->root_a, &pa, &err));
  OK(adcp_fs_provider_new(&e->pb, e->root_b, &pb, &err));
  e->l = renv_ledger(e, e->c, 1);
  if (!e->pg) {
    /* Backdating rewrites immutable columns: SQLite cannot switch triggers off. */
    OK(adcp_sql_exec_script(e->c,
                            "DROP TRIGGER IF EXISTS adcp_reporting_revisions_immutable; "
                            "DROP TRIGGER IF EXISTS adcp_reporting_row_sets_immutable;",
                            &err));
  }
}

void renv_close(renv *e) {
  adcp_ledger_close(e->l);
  adcp_storage_close(e->s);
  adcp_object_provider_free(e->pa);
  adcp_object_provider_free(e->pb);
  tu_rmtree(e->dir);
  free(e->dir);
}

int64_t q64(adcp_sql_conn *c, const char *sql, const char *a) {
  adcp_error err = {0};
  adcp_sql_param p = adcp_sql_text(a);
  char v[32] = "";
  int f = 0;
  OK(adcp_sql_query_text(v, sizeof v, &f, c, sql, &p, a ? 1 : 0, &err));
  return f ? strtoll(v, NULL, 10) : -1;
}

int rcommit(adcp_ledger *l, const char *acct, const char *obl, int64_t ord, const char *rev, gen *g,
            const char *binding, adcp_error *err) {
  if (g) g->next = 0;
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = acct,
                            .obligation_id = obl,
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2020-01-01T00:00:00Z",
                            .period_end = "2020-01-02T00:00:00Z",
                            .configuration_id = "cfg",
                            .period_ordinal = ord,
                            .next_row = g ? gen_next : NULL,
                            .row_ctx = g,
                            .binding_id = binding};
  adcp_commit_result res;
  int rc = adcp_ledger_commit_revision(&res, l, &req, err);
  if (!rc) adcp_commit_result_free(&res);
  return rc;
}

void rexec(renv *e, const char *sql_pg, const char *sql_lite, const char *a, const char *b) {
  adcp_error err = {0};
  adcp_sql_param p[2] = {adcp_sql_text(a), adcp_sql_text(b)};
  if (e->pg) OK(adcp_sql_exec_script(e->c, "SET session_replication_role = replica", &err));
  OK(adcp_sql_exec(e->c, e->pg ? sql_pg : sql_lite, p, b ? 2 : 1, &err));
  if (e->pg) OK(adcp_sql_exec_script(e->c, "SET session_replication_role = origin", &err));
}

void backdate(renv *e, const char *obl, const char *ts) {
  rexec(e,
        "UPDATE adcp_reporting_obligations SET period_start = $2::timestamptz - interval '1 day', period_end = "
        "$2::timestamptz, created_at = $2::timestamptz WHERE obligation_id = $1",
        "UPDATE adcp_reporting_obligations SET period_start = '2000-01-01T00:00:00.000000Z', period_end = $2, "
        "created_at = $2 WHERE obligation_id = $1",
        obl, ts);
  rexec(e, "UPDATE adcp_reporting_revisions SET recorded_at = $2::timestamptz WHERE obligation_id = $1",
        "UPDATE adcp_reporting_revisions SET recorded_at = $2 WHERE obligation_id = $1", obl, ts);
  rexec(e, "UPDATE adcp_reporting_row_sets SET recorded_at = $2::timestamptz WHERE obligation_id = $1",
        "UPDATE adcp_reporting_row_sets SET recorded_at = $2 WHERE obligation_id = $1", obl, ts);
}

void backdate_rev(renv *e, const char *rev, const char *ts) {
  rexec(e, "UPDATE adcp_reporting_revisions SET recorded_at = $2::timestamptz WHERE revision_id = $1",
        "UPDATE adcp_reporting_revisions SET recorded_at = $2 WHERE revision_id = $1", rev, ts);
}

const adcp_retention_policy POLICY = {.version = ADCP_RETENTION_POLICY_VERSION, .status_retention_days = 1}; /* W = 1 day */

adcp_retention_options ropts(size_t limit) {
  adcp_retention_options o = {.version = ADCP_RETENTION_OPTIONS_VERSION, .policy = &POLICY, .limit = limit};
  return o;
}

int64_t retirement_changes(renv *e, const char *obl) {
  return q64(e->c, "SELECT count(*) FROM adcp_reporting_changes WHERE record_kind = 'retirement' AND record_id = $1", obl);
}

const char *tomb_state(renv *e, const char *obl, char out[16]) {
  adcp_error err = {0};
  adcp_sql_param p = adcp_sql_text(obl);
  int f = 0;
  OK(adcp_sql_query_text(out, 16, &f, e->c,
                         "SELECT state FROM adcp_reporting_obligation_tombstones WHERE obligation_id = $1", &p, 1, &err));
  if (!f) out[0] = 0;
  return out;
}

int rcli(const fixture *f, const char *cfg, const char *args, adcp_buf *out) {
  char cmd[3000];
  snprintf(cmd, sizeof cmd, "'%s' --db '%s' --config '%s' %s 2>/dev/null", ADCP_CLI_PATH, f->url, cfg, args);
  if (out) adcp_buf_reset(out);
  return tu_run(cmd, NULL, 0, out);
}
