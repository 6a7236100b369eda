/* tests/support/support_cenv.c — room tests/support (the test library): the
 * CLI environment of support_cenv.h. */
#include "support/support_cenv.h"

#include "adcp/sql.h"

void cenv_open(cenv *e, const fixture *f) {
  memset(e, 0, sizeof *e);
  e->f = f;
  e->dir = tu_mkdtemp();
  snprintf(e->url, sizeof e->url, "%s", f ? f->url : "");
  snprintf(e->cfg, sizeof e->cfg, "%s/cfg.json", e->dir);
  snprintf(e->rows, sizeof e->rows, "%s/rows.jsonl", e->dir);
  snprintf(e->root, sizeof e->root, "%s/bucket", e->dir);
  adcp_buf_init(&e->out);
  adcp_buf_init(&e->err);
  if (f) adcp_storage_close(open_migrated(f));
}

void cenv_close(cenv *e) {
  adcp_buf_free(&e->out);
  adcp_buf_free(&e->err);
  tu_rmtree(e->dir);
  free(e->dir);
}

int cenv_run(cenv *e, int with_cfg, const char *args) {
  return tu_cli_db(e->dir, e->url[0] ? e->url : NULL, with_cfg ? e->cfg : NULL, NULL, &e->out, &e->err, "%s", args);
}

const char *cenv_out(const cenv *e) { return e->out.data ? (const char *)e->out.data : ""; }

const char *cenv_err(const cenv *e) { return e->err.data ? (const char *)e->err.data : ""; }

void tu_one_json(adcp_json_doc *d, const adcp_buf *b) {
  adcp_json_doc own;
  adcp_json_doc *doc = d ? d : &own;
  if (!d) adcp_json_doc_init(&own);
  adcp_error err = {0};
  assert_non_null(b->data);
  /* adcp_json_parse refuses trailing text: a second document fails here */
  if (adcp_json_parse(doc, (const char *)b->data, b->len, NULL, &err))
    fail_msg("not exactly one JSON document (%s): %s", err.message, (const char *)b->data);
  assert_int_equal(adcp_json_at(doc, 0)->type, ADCP_JSON_OBJECT);
  if (!d) adcp_json_doc_free(&own);
}

void cenv_write_rows(cenv *e, uint64_t n, uint64_t salt) { gen_write_file(e->rows, n, 20, salt); }

void cenv_query_text(const cenv *e, char *out, size_t n, const char *sql) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, e->f->url, &err));
  int found = 0;
  OK(adcp_sql_query_text(out, n, &found, c, sql, NULL, 0, &err));
  if (!found) out[0] = '\0';
  adcp_sql_close(c);
}
