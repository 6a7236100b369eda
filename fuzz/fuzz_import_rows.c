/* fuzz/fuzz_import_rows.c — import room: libFuzzer target for the legacy
 * import's row source (src/import/source.c) over in-memory SQLite legacy
 * databases of both layouts. data[0] picks py-inline or js-inline; the rest,
 * split at NUL bytes, is a revision header (revision, account and obligation
 * IDs, recorded_at) and its rows (py: one payload per field; js: the `data`
 * document). The harness reads the candidates the way the import does: the
 * batch, the safe forms of its identifiers, and every row, canonicalized as
 * the encoder would. Properties: a safe form is the raw text or a non-empty
 * printable ASCII form of at most 255 bytes; every row handed over is
 * non-NULL and within the row cap; paging after the last candidate returns
 * nothing new; nothing reads past a value. Any broken property aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tests/import/legacy_build.h"
#include "adcp/json.h"
#include "import/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_NAME "fuzz_import_rows"
#include "fuzz_check.h"

/* One in-memory legacy database per layout, built on first use (the fuzzer
 * process keeps it; each input replaces its rows). */
static adcp_sql_conn *db[2];

static adcp_sql_conn *source(int js) {
  if (db[js]) return db[js];
  adcp_error err = {0};
  CHECK(adcp_sql_connect(&db[js], "sqlite::memory:", &err) == 0);
  CHECK(lb_schema(db[js], js ? ADCP_IMPORT_JS_INLINE : ADCP_IMPORT_PY_INLINE, &err) == 0);
  return db[js];
}

typedef struct fields {
  const char *p[12];
  size_t n[12];
  size_t count;
} fields;

static void split(fields *f, const uint8_t *d, size_t n) {
  memset(f, 0, sizeof *f);
  size_t a = 0;
  while (f->count < 12) {
    const uint8_t *z = a < n ? memchr(d + a, 0, n - a) : NULL;
    size_t len = z ? (size_t)(z - d) - a : (a < n ? n - a : 0);
    f->p[f->count] = (const char *)d + (a < n ? a : n), f->n[f->count] = len, f->count++;
    if (!z) break;
    a = (size_t)(z - d) + 1;
  }
}

static adcp_sql_param text_or(const fields *f, size_t i, const char *dflt) {
  return i < f->count && f->n[i] ? adcp_sql_textn(f->p[i], f->n[i]) : adcp_sql_text(dflt);
}

static void check_safe(const char *raw) {
  char out[ADCP_LEDGER_ID_MAX];
  int same = adcp_import__safe_text(out, sizeof out, raw);
  size_t n = strlen(out);
  CHECK(n >= 1 && n <= 255);
  if (same) {
    CHECK(strcmp(out, raw) == 0);
  } else {
    for (size_t i = 0; i < n; i++) CHECK(out[i] >= 0x20 && out[i] < 0x7F);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  int js = data[0] & 1;
  fields f;
  split(&f, data + 1, size - 1);
  adcp_sql_conn *c = source(js);
  adcp_error err = {0};
  CHECK(adcp_sql_exec_script(c,
                             js ? "DELETE FROM adcp_reporting_revisions; DELETE FROM adcp_reporting_obligations;"
                                : "DELETE FROM reporting_revision_rows; DELETE FROM reporting_revisions;",
                             &err) == 0);
  adcp_sql_param rev = text_or(&f, 0, "rrev_1"), acct = text_or(&f, 1, "acct_1"), obl = text_or(&f, 2, "obl_1"),
                 at = text_or(&f, 3, "2026-01-03T00:00:00.000001Z");
  int ins;
  if (js) {
    adcp_sql_param p[3] = {obl, acct, rev};
    ins = adcp_sql_exec(c,
                        "INSERT INTO adcp_reporting_obligations (obligation_id, configuration_id, account_id, "
                        "period_ordinal, period_start, period_end, created_at, state) VALUES ($1, 'cfg', $2, 0, "
                        "'2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z', 'pending')",
                        p, 2, &err);
    adcp_sql_param q[4] = {rev, obl, text_or(&f, 4, "{\"rows\":[]}"), at};
    if (!ins)
      ins = adcp_sql_exec(c,
                          "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, revision_number, finality, "
                          "kind, content_sha256, data, recorded_at) VALUES ($1, $2, 1, 'snapshot', 'revision', "
                          "'00', $3, $4)",
                          q, 4, &err);
  } else {
    adcp_sql_param p[4] = {rev, obl, acct, at};
    ins = adcp_sql_exec(c,
                        "INSERT INTO reporting_revisions VALUES ($1, $2, $3, '2026-01-01T00:00:00Z', "
                        "'2026-01-02T00:00:00Z', 1, 'snapshot', NULL, '00', 1, 1, '[]', $4)",
                        p, 4, &err);
    for (size_t i = 4; !ins && i < f.count; i++) {
      adcp_sql_param q[3] = {rev, adcp_sql_int64((int64_t)i), adcp_sql_textn(f.p[i], f.n[i])};
      ins = adcp_sql_exec(c, "INSERT INTO reporting_revision_rows VALUES ($1, $2, $3)", q, 3, &err);
    }
  }
  if (ins) return 0; /* a duplicate key and the like: nothing to read */
  adcp_import_source s = js ? ADCP_IMPORT_JS_INLINE : ADCP_IMPORT_PY_INLINE;
  import_candidate *v = NULL;
  size_t n = 0;
  if (adcp_import__source_batch(&v, &n, c, s, NULL, NULL, NULL, 10, &err)) return 0; /* e.g. malformed JSON */
  CHECK(n <= 1);
  adcp_json_doc scratch;
  adcp_json_doc_init(&scratch);
  adcp_buf canon;
  adcp_buf_init(&canon);
  for (size_t i = 0; i < n; i++) {
    check_safe(v[i].revision_id), check_safe(v[i].account_id), check_safe(v[i].obligation_id);
    check_safe(v[i].recorded_at);
    import_rows it;
    if (adcp_import__rows_open(&it, c, s, v[i].revision_id, &err)) continue;
    const char *row;
    size_t len;
    int more;
    while ((more = adcp_import__rows_next(&it, &row, &len, &err)) == 1) {
      CHECK(row != NULL && len <= ADCP_IMPORT_ROW_MAX);
      int type = 0;
      (void)adcp_jcs_canonicalize(&canon, &type, &scratch, row, len, NULL, &err);
    }
    adcp_import__rows_close(&it);
    /* Paging after the only candidate finds nothing more. */
    import_candidate *w = NULL;
    size_t m = 0;
    if (!adcp_import__source_batch(&w, &m, c, s, NULL, v[i].recorded_at, v[i].revision_id, 10, &err)) CHECK(m == 0);
    adcp_import__candidates_free(w, m);
  }
  adcp_buf_free(&canon);
  adcp_json_doc_free(&scratch);
  adcp_import__candidates_free(v, n);
  return 0;
}
