/* ledger/ledger.c — the ledger handle and what every ledger file shares:
 * header loading (revision joined to its obligation, row set and binding),
 * the verified-manifest cache, instant normalisation, binding registration
 * and the mapping of encoding-layer codes to operator and buyer codes. */
#define _GNU_SOURCE /* timegm */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "adcp/auditlog.h"
#include "ledger/internal.h"

const char *adcp_finality_name(adcp_finality f) {
  return f == ADCP_FINALITY_OFFICIAL ? "official" : f == ADCP_FINALITY_SNAPSHOT ? "snapshot" : "unknown";
}

int adcp_finality_parse(adcp_finality *out, const char *name, adcp_error *err) {
  if (name && !strcmp(name, "snapshot")) return *out = ADCP_FINALITY_SNAPSHOT, 0;
  if (name && !strcmp(name, "official")) return *out = ADCP_FINALITY_OFFICIAL, 0;
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "finality must be snapshot or official");
}

int adcp_ledger__copy(char *dst, size_t n, const char *s, const char *what, adcp_error *err) {
  size_t len = s ? strlen(s) : 0;
  if (len >= n) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s is too long", what);
  memcpy(dst, s ? s : "", len + 1);
  return 0;
}

int adcp_ledger__check_id(const char *s, int pattern, const char *what, adcp_error *err) {
  return pattern ? adcp_ledger__check_ident_pattern(s, what, err) : adcp_ledger__check_ident(s, what, err);
}

/* ---- instants ------------------------------------------------------------------ */

static int digits(const char *s, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if (!isdigit((unsigned char)s[i])) return -1;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return 0;
}

int adcp_ledger_normalize_instant(char out[32], const char *t, adcp_error *err) {
  int Y, M, D, h = 0, m = 0, s = 0, us = 0, off = 0;
  size_t n = t ? strlen(t) : 0;
  if (n < 10 || digits(t, 4, &Y) || t[4] != '-' || digits(t + 5, 2, &M) || t[7] != '-' || digits(t + 8, 2, &D))
    goto bad;
  const char *p = t + 10;
  if (*p) {
    if (*p != 'T' && *p != 't' && *p != ' ') goto bad;
    p++;
    if (strlen(p) < 8 || digits(p, 2, &h) || p[2] != ':' || digits(p + 3, 2, &m) || p[5] != ':' || digits(p + 6, 2, &s))
      goto bad;
    p += 8;
    if (*p == '.') {
      int nd = 0;
      for (p++; isdigit((unsigned char)*p); p++, nd++)
        if (nd < 6) us = us * 10 + (*p - '0');
      if (nd == 0 || nd > 9) goto bad;
      for (; nd < 6; nd++) us *= 10;
    }
    if (*p == 'Z' || *p == 'z') {
      p++;
    } else if (*p == '+' || *p == '-') {
      int oh, om;
      if (strlen(p) != 6 || digits(p + 1, 2, &oh) || p[3] != ':' || digits(p + 4, 2, &om) || oh > 23 || om > 59) goto bad;
      off = (oh * 60 + om) * 60 * (*p == '-' ? -1 : 1);
      p += 6;
    } else {
      goto bad;
    }
    if (*p) goto bad;
  }
  if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || m > 59 || s > 60 || Y < 1) goto bad;
  struct tm tm = {0};
  tm.tm_year = Y - 1900, tm.tm_mon = M - 1, tm.tm_mday = D, tm.tm_hour = h, tm.tm_min = m, tm.tm_sec = s;
  time_t secs = timegm(&tm) - off;
  struct tm u;
  if (!gmtime_r(&secs, &u) || (tm.tm_mday != D && off == 0)) goto bad; /* 2026-02-31 normalises: refuse */
  if (u.tm_year + 1900 > 9999 || u.tm_year + 1900 < 1) goto bad;
  snprintf(out, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%06uZ", (unsigned)(u.tm_year + 1900) % 10000u,
           (unsigned)(u.tm_mon + 1) % 100u, (unsigned)u.tm_mday % 100u, (unsigned)u.tm_hour % 100u,
           (unsigned)u.tm_min % 100u, (unsigned)u.tm_sec % 100u, (unsigned)us % 1000000u);
  return 0;
bad:
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "instant '%.40s' is not RFC 3339 (e.g. 2026-10-01T00:00:00Z)",
                        t ? t : "");
}

/* ---- handle ---------------------------------------------------------------------- */

#define PG_TS(x) ADCP_SQL_PG_INSTANT(x)

/* Column order read by adcp_ledger__header_from_row. */
#define HEADER_COLS(TS_OBS, TS_REC, TS_PS, TS_PE)                                                                 \
  "SELECT r.revision_id, r.obligation_id, r.account_id, r.revision_number, r.finality, "                         \
  "coalesce(r.supersedes_revision_id, ''), r.binding_algorithm, r.revision_content_sha256, "                     \
  "r.canonical_byte_count, r.row_count, r.control_totals, r.row_manifest_sha256, "                               \
  "coalesce(r.rows_shared_from_revision_id, ''), coalesce(" TS_OBS ", ''), " TS_REC ", " TS_PS ", " TS_PE ", "  \
  "s.row_set_id IS NOT NULL, coalesce(s.rows_state, ''), coalesce(b.kind, ''), coalesce(s.digest_profile, ''), " \
  "coalesce(s.content_sha256, ''), coalesce(s.row_manifest_sha256, ''), coalesce(s.account_id, ''), "            \
  "coalesce(s.obligation_id, ''), coalesce(s.row_count, 0), coalesce(s.canonical_byte_count, 0), "               \
  "coalesce(s.chunk_count, 0), coalesce(s.row_binding_id, ''), coalesce(b.identity_sha256, ''), "              \
  "coalesce(s.row_location_version, 0) "                                                                         \
  "FROM adcp_reporting_revisions r "                                                                             \
  "JOIN adcp_reporting_obligations o ON o.obligation_id = r.obligation_id "                                      \
  "LEFT JOIN adcp_reporting_row_sets s ON s.row_set_id = coalesce(r.row_set_id, r.revision_id) "                 \
  "LEFT JOIN adcp_reporting_row_bindings b ON b.row_binding_id = s.row_binding_id "

static const char HEADER_PG[] =
    HEADER_COLS(PG_TS("r.observed_at"), PG_TS("r.recorded_at"), PG_TS("o.period_start"), PG_TS("o.period_end"));
static const char HEADER_SQLITE[] = HEADER_COLS("r.observed_at", "r.recorded_at", "o.period_start", "o.period_end");

const char *adcp_ledger__header_select(adcp_sql_dialect d) { return d == ADCP_SQL_POSTGRES ? HEADER_PG : HEADER_SQLITE; }

static char *concat(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *s = malloc(na + nb + 1);
  if (s) memcpy(s, a, na), memcpy(s + na, b, nb + 1);
  return s;
}

int adcp_ledger_open(adcp_ledger **out, adcp_sql_conn *conn, const adcp_ledger_options *opts, adcp_error *err) {
  *out = NULL;
  if (!conn) return adcp_error_set(err, ADCP_EINVALID_INPUT, "ledger open: connection is NULL");
  if (opts && opts->version != ADCP_LEDGER_OPTIONS_VERSION) return adcp_error_set(err, ADCP_EINVALID_INPUT, "ledger open: unknown options version");
  adcp_ledger *l = calloc(1, sizeof *l);
  if (!l) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  l->conn = conn;
  l->dialect = adcp_sql_dialect_of(conn);
  const char *ns = opts && opts->deployment_namespace ? opts->deployment_namespace : ADCP_LEDGER_DEFAULT_NAMESPACE;
  if (!*ns || strlen(ns) > 256) {
    free(l);
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "deployment namespace must be 1-256 characters");
  }
  strcpy(l->ns, ns);
  l->write_deadline_ms = opts && opts->write_deadline_ms > 0 ? opts->write_deadline_ms : 120000;
  l->upload_concurrency = opts && opts->upload_concurrency > 0 ? opts->upload_concurrency : 0;
  /* Fence (docs/fence.md): owner_id checked here so every later refusal is about the claim. */
  {
    const char *own = opts && opts->fence_owner_id ? opts->fence_owner_id : "adcp-ledger";
    size_t on = strlen(own);
    if (!adcp_ledger_fence_owner_is_valid(own)) {
      free(l);
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "fence owner_id must match ^[A-Za-z0-9_.:-]{1,128}$");
    }
    memcpy(l->fence_owner, own, on + 1);
    int64_t ttl = opts ? opts->fence_cache_ttl_ms : 0, adv = opts ? opts->fence_advance_interval_ms : 0;
    l->fence_cache_ttl_ms = ttl < 0 ? -1 : ttl == 0 ? 2000 : ttl;
    l->fence_advance_ms = adv < 0 ? -1 : adv == 0 ? 30000 : adv;
    l->fence_hook = opts ? opts->fence_step_hook : NULL;
    l->fence_hook_ctx = opts ? opts->fence_step_ctx : NULL;
  }
  l->max_page_bytes = opts && opts->max_page_bytes ? opts->max_page_bytes : ADCP_LEDGER_MAX_PAGE_BYTES;
  int entries = opts ? opts->manifest_cache_entries : 0;
  l->cache_cap = entries < 0 ? 0 : entries == 0 ? 64 : (size_t)entries;
  if (l->cache_cap) l->cache = calloc(l->cache_cap, sizeof *l->cache);
  const char *sel = adcp_ledger__header_select(l->dialect);
  l->sql_header_by_id = concat(sel, "WHERE r.revision_id = $1 AND r.account_id = $2");
  l->sql_header_by_id_any = concat(sel, "WHERE r.revision_id = $1");
  l->sql_header_current = concat(sel, "WHERE r.obligation_id = $1 AND r.account_id = $2 "
                                      "ORDER BY r.revision_number DESC LIMIT 1");
  adcp_json_doc_init(&l->doc);
  adcp_buf_init(&l->scratch);
  if ((l->cache_cap && !l->cache) || !l->sql_header_by_id || !l->sql_header_by_id_any || !l->sql_header_current) {
    adcp_ledger_close(l);
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  *out = l;
  return 0;
}

void adcp_ledger_close(adcp_ledger *l) {
  if (!l) return;
  for (size_t i = 0; i < l->cache_cap; i++) free(l->cache[i].ms);
  free(l->cache);
  free(l->sql_header_by_id);
  free(l->sql_header_by_id_any);
  free(l->sql_header_current);
  adcp_json_doc_free(&l->doc);
  adcp_buf_free(&l->scratch);
  for (size_t i = 0; i < l->n_bindings; i++) {
    ledger_binding *b = &l->bindings[i];
    free(b->identity_config), free(b->operational_config), free(b->prefix), free(b->key_template);
    free(b->location_key);
  }
  free(l->bindings);
  free(l);
}

adcp_sql_conn *adcp_ledger_conn(adcp_ledger *l) { return l->conn; }

/* ---- binding registration (spec 02 §4, §5.2-§5.3) ---------------------------------- */

static int jcs_strings_sha(char out[65], const char *const *s, size_t n, const char *tail, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_buf_append_byte(&b, '[');
  for (size_t i = 0; !rc && i < n; i++) {
    if (i) rc = adcp_buf_append_byte(&b, ',');
    if (!rc) rc = adcp_jcs_write_string(&b, s[i], strlen(s[i]));
  }
  if (!rc && tail) rc = adcp_buf_append_str(&b, tail);
  if (!rc) rc = adcp_buf_append_byte(&b, ']');
  if (rc) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  else rc = adcp_sha256_hex(out, b.data, b.len, err);
  adcp_buf_free(&b);
  return rc;
}

int adcp_ledger__namespace_key(adcp_ledger *l, adcp_error *err) {
  if (l->ns_key[0]) return 0;
  char inst[64];
  int found = 0;
  int rc = adcp_sql_query_text(inst, sizeof inst, &found, l->conn,
                               l->dialect == ADCP_SQL_POSTGRES
                                   ? "SELECT installation_id::text FROM adcp_persistence_installation"
                                   : "SELECT installation_id FROM adcp_persistence_installation",
                               NULL, 0, err);
  if (rc) return rc;
  if (!found) return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "installation identity is missing (run migrate)");
  snprintf(l->inst_id, sizeof l->inst_id, "%s", inst);
  const char *nsk[3] = {"adcp.rows.v1", l->ns, inst};
  return jcs_strings_sha(l->ns_key, nsk, 3, NULL, err);
}

int adcp_ledger__register_binding(adcp_ledger *l, adcp_error *err) {
  if (l->binding_registered) return 0;
  int rc = adcp_ledger__namespace_key(l, err);
  if (rc) return rc;
  char identity[65];
  const char *ns_key = l->ns_key;
  const char *idk[2] = {"postgres", "postgres"};
  if ((rc = jcs_strings_sha(identity, idk, 2, ",{}", err))) return rc;
  adcp_sql_param p[2] = {adcp_sql_text(identity), adcp_sql_text(ns_key)};
  rc = adcp_sql_exec(l->conn,
                     "INSERT INTO adcp_reporting_row_bindings (row_binding_id, kind, provider, identity_config, "
                     "identity_sha256, operational_config, namespace_key) VALUES ('postgres', 'postgres', 'postgres', "
                     "'{}', $1, '{}', $2) ON CONFLICT (row_binding_id) DO NOTHING",
                     p, 2, err);
  if (rc) return rc;
  adcp_sql_rows *r;
  if ((rc = adcp_sql_query(&r, l->conn,
                           "SELECT kind, identity_sha256 FROM adcp_reporting_row_bindings "
                           "WHERE row_binding_id = 'postgres'",
                           NULL, 0, err)))
    return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    rc = 0;
    /* The namespace_key column is not compared: the postgres kind stores no
     * objects and renders no keys, so the deployment namespace protects
     * nothing there, and a database used under two namespaces must keep
     * working (docs/objects.md, "Changing the deployment namespace"). The
     * column keeps the key of the process that inserted the row, as JS does. */
    if (strcmp(adcp_sql_get_text(r, 0, NULL), "postgres") || strcmp(adcp_sql_get_text(r, 1, NULL), identity))
      rc = adcp_error_set(err, ADCP_EUNSAFE_BINDING, "binding postgres: identity differs from its definition");
  } else if (rc == 0) {
    rc = adcp_error_set(err, ADCP_ESTORAGE, "binding postgres could not be registered");
  }
  adcp_sql_rows_free(r);
  if (!rc) l->binding_registered = 1;
  return rc;
}

/* ---- headers ------------------------------------------------------------------------- */

void adcp_revision_header_free(adcp_revision_header *h) {
  if (!h) return;
  free(h->control_totals_json);
  h->control_totals_json = NULL;
}

int adcp_ledger__header_from_row(adcp_revision_header *h, ledger_rowset *rs, adcp_sql_rows *r, adcp_error *err) {
  memset(h, 0, sizeof *h);
  ledger_copy_text(h->revision_id, sizeof h->revision_id, adcp_sql_get_text(r, 0, NULL));
  ledger_copy_text(h->obligation_id, sizeof h->obligation_id, adcp_sql_get_text(r, 1, NULL));
  ledger_copy_text(h->account_id, sizeof h->account_id, adcp_sql_get_text(r, 2, NULL));
  h->revision_number = adcp_sql_get_int64(r, 3);
  h->finality = strcmp(adcp_sql_get_text(r, 4, NULL), "official") ? ADCP_FINALITY_SNAPSHOT : ADCP_FINALITY_OFFICIAL;
  ledger_copy_text(h->supersedes_revision_id, sizeof h->supersedes_revision_id, adcp_sql_get_text(r, 5, NULL));
  if (adcp_binding_algorithm_parse(&h->binding_algorithm, adcp_sql_get_text(r, 6, NULL), NULL))
    h->binding_algorithm = 0;
  ledger_copy_text(h->content_sha256, sizeof h->content_sha256, adcp_sql_get_text(r, 7, NULL));
  h->canonical_byte_count = (uint64_t)adcp_sql_get_int64(r, 8);
  h->row_count = (uint64_t)adcp_sql_get_int64(r, 9);
  h->control_totals_json = strdup(adcp_sql_get_text(r, 10, NULL));
  ledger_copy_text(h->row_manifest_sha256, sizeof h->row_manifest_sha256, adcp_sql_get_text(r, 11, NULL));
  ledger_copy_text(h->rows_shared_from, sizeof h->rows_shared_from, adcp_sql_get_text(r, 12, NULL));
  ledger_copy_text(h->observed_at, sizeof h->observed_at, adcp_sql_get_text(r, 13, NULL));
  ledger_copy_text(h->recorded_at, sizeof h->recorded_at, adcp_sql_get_text(r, 14, NULL));
  ledger_copy_text(h->period_start, sizeof h->period_start, adcp_sql_get_text(r, 15, NULL));
  ledger_copy_text(h->period_end, sizeof h->period_end, adcp_sql_get_text(r, 16, NULL));
  ledger_copy_text(h->rows_state, sizeof h->rows_state, adcp_sql_get_text(r, 18, NULL));
  h->chunk_count = (uint64_t)adcp_sql_get_int64(r, 27);
  ledger_copy_text(h->row_binding_id, sizeof h->row_binding_id, adcp_sql_get_text(r, 28, NULL));
  if (rs) {
    memset(rs, 0, sizeof *rs);
    rs->present = (int)adcp_sql_get_int64(r, 17);
    ledger_copy_text(rs->row_binding_kind, sizeof rs->row_binding_kind, adcp_sql_get_text(r, 19, NULL));
    ledger_copy_text(rs->digest_profile, sizeof rs->digest_profile, adcp_sql_get_text(r, 20, NULL));
    ledger_copy_text(rs->content_sha256, sizeof rs->content_sha256, adcp_sql_get_text(r, 21, NULL));
    ledger_copy_text(rs->row_manifest_sha256, sizeof rs->row_manifest_sha256, adcp_sql_get_text(r, 22, NULL));
    ledger_copy_text(rs->account_id, sizeof rs->account_id, adcp_sql_get_text(r, 23, NULL));
    ledger_copy_text(rs->obligation_id, sizeof rs->obligation_id, adcp_sql_get_text(r, 24, NULL));
    rs->row_count = (uint64_t)adcp_sql_get_int64(r, 25);
    rs->canonical_byte_count = (uint64_t)adcp_sql_get_int64(r, 26);
    rs->chunk_count = (uint64_t)adcp_sql_get_int64(r, 27);
    ledger_copy_text(rs->row_binding_id, sizeof rs->row_binding_id, adcp_sql_get_text(r, 28, NULL));
    ledger_copy_text(rs->binding_identity, sizeof rs->binding_identity, adcp_sql_get_text(r, 29, NULL));
    rs->row_location_version = adcp_sql_get_int64(r, 30);
  }
  if (!h->control_totals_json) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_ledger__load_header(adcp_revision_header *h, ledger_rowset *rs, int *found, adcp_ledger *l, int mode,
                       const char *a, const char *b, adcp_error *err) {
  *found = 0;
  memset(h, 0, sizeof *h);
  const char *sql = mode == 0 ? l->sql_header_by_id : mode == 1 ? l->sql_header_by_id_any : l->sql_header_current;
  adcp_sql_param p[2] = {adcp_sql_text(a), adcp_sql_text(b)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, sql, p, mode == 1 ? 1 : 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    *found = 1;
    rc = adcp_ledger__header_from_row(h, rs, r, err);
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_ledger_get_revision(adcp_revision_header *out, adcp_ledger *l, const char *account_id,
                             const char *revision_id, adcp_error *err) {
  int found = 0;
  memset(out, 0, sizeof *out);
  int rc = adcp_ledger__check_read_ids(account_id, revision_id, "revision_id", err);
  if (rc) return rc;
  rc = adcp_ledger__load_header(out, NULL, &found, l, account_id ? 0 : 1, revision_id, account_id, err);
  if (!rc && !found) rc = adcp_ledger__not_found_or_quarantined(l, account_id, revision_id, err);
  if (rc) adcp_revision_header_free(out);
  return rc;
}

static int json_str(adcp_buf *o, const char *k, const char *v, int null_if_empty) {
  int rc = adcp_buf_printf(o, ",\"%s\":", k);
  if (rc) return rc;
  if (null_if_empty && (!v || !*v)) return adcp_buf_append_str(o, "null");
  return adcp_jcs_write_string(o, v, strlen(v));
}

int adcp_revision_header_write_json(adcp_buf *o, const adcp_revision_header *h) {
  int rc = adcp_buf_append_str(o, "{\"revision_id\":");
  if (!rc) rc = adcp_jcs_write_string(o, h->revision_id, strlen(h->revision_id));
  if (!rc) rc = json_str(o, "obligation_id", h->obligation_id, 0);
  if (!rc) rc = json_str(o, "account_id", h->account_id, 0);
  if (!rc) rc = adcp_buf_printf(o, ",\"revision_number\":%" PRId64, h->revision_number);
  if (!rc) rc = json_str(o, "finality", adcp_finality_name(h->finality), 0);
  if (!rc) rc = json_str(o, "supersedes_revision_id", h->supersedes_revision_id, 1);
  if (!rc) rc = json_str(o, "binding_algorithm", adcp_binding_algorithm_name(h->binding_algorithm), 0);
  if (!rc) rc = json_str(o, "revision_content_sha256", h->content_sha256, 0);
  if (!rc)
    rc = adcp_buf_printf(o, ",\"canonical_byte_count\":%" PRIu64 ",\"row_count\":%" PRIu64 ",\"chunk_count\":%" PRIu64,
                         h->canonical_byte_count, h->row_count, h->chunk_count);
  if (!rc) rc = adcp_buf_printf(o, ",\"control_totals\":%s", h->control_totals_json ? h->control_totals_json : "[]");
  if (!rc) rc = json_str(o, "row_manifest_sha256", h->row_manifest_sha256, 0);
  if (!rc) rc = json_str(o, "rows_shared_from_revision_id", h->rows_shared_from, 1);
  if (!rc) rc = json_str(o, "rows_state", h->rows_state, 1);
  if (!rc) rc = json_str(o, "period_start", h->period_start, 1);
  if (!rc) rc = json_str(o, "period_end", h->period_end, 1);
  if (!rc) rc = json_str(o, "observed_at", h->observed_at, 1);
  if (!rc) rc = json_str(o, "recorded_at", h->recorded_at, 1);
  if (!rc) rc = json_str(o, "row_binding_id", h->row_binding_id, 1);
  if (!rc) rc = adcp_buf_append_byte(o, '}');
  return rc;
}

/* ---- error mapping --------------------------------------------------------------------- */

int adcp_ledger__map_read_error(int rc, adcp_error *err) {
  if (rc == ADCP_EMANIFEST_MISMATCH || rc == ADCP_ECHUNK_INTEGRITY_FAILED || rc == ADCP_EENVELOPE_INTEGRITY_FAILED) {
    char msg[ADCP_ERROR_MESSAGE_MAX];
    snprintf(msg, sizeof msg, "%s", err ? err->message : "");
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "%s: %s", adcp_error_code_name(rc), msg);
  }
  return rc;
}

int adcp_ledger_buyer_code(int code) {
  switch (code) {
    case ADCP_OK: return ADCP_OK;
    case ADCP_EROWS_UNAVAILABLE:
    case ADCP_EROWS_INTEGRITY_FAILED:
    case ADCP_EMANIFEST_MISMATCH:
    case ADCP_ECHUNK_INTEGRITY_FAILED:
    case ADCP_EENVELOPE_INTEGRITY_FAILED:
    case ADCP_ESTATE_UNAVAILABLE:
    case ADCP_EPROVIDER_UNAVAILABLE:
    case ADCP_EDEADLINE_EXCEEDED:
    case ADCP_EABORTED:
    case ADCP_ESTORAGE:
      return ADCP_ESERVICE_UNAVAILABLE;
    case ADCP_EROWS_EXPIRED:
    case ADCP_EREFERENCE_NOT_FOUND:
    case ADCP_ENOT_FOUND:
      return ADCP_EREFERENCE_NOT_FOUND;
    default: return code;
  }
}

/* ---- row-set checks and manifests --------------------------------------------------------- */

int adcp_ledger__check_rowset(const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err) {
  if (!rs->present) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "rows are not recorded for this revision");
  if (!strcmp(h->rows_state, "pruning") || !strcmp(h->rows_state, "pruned"))
    return adcp_error_set(err, ADCP_EROWS_EXPIRED, "revision rows have expired");
  if (!strcmp(h->rows_state, "unavailable"))
    return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "revision rows are marked unavailable");
  if (strcmp(h->rows_state, "live")) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "unknown rows_state");
  if (strcmp(rs->row_binding_kind, "postgres") && strcmp(rs->row_binding_kind, "object"))
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "the row set's binding is not configured in this process");
  /* The revision header is the trust anchor; the row set must repeat it exactly. */
  if (strcmp(rs->digest_profile, "revision_envelope_v1") || strcmp(rs->content_sha256, h->content_sha256) ||
      strcmp(rs->row_manifest_sha256, h->row_manifest_sha256) || rs->row_count != h->row_count ||
      rs->canonical_byte_count != h->canonical_byte_count || strcmp(rs->account_id, h->account_id) ||
      strcmp(rs->obligation_id, h->obligation_id))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set does not match the revision header");
  return 0;
}

static manifest_cache_entry *cache_find(adcp_ledger *l, const adcp_revision_header *h) {
  for (size_t i = 0; i < l->cache_cap; i++) {
    manifest_cache_entry *e = &l->cache[i];
    if (e->ms && !strcmp(e->revision_id, h->revision_id) && !strcmp(e->row_manifest_sha256, h->row_manifest_sha256) &&
        e->n == h->chunk_count) {
      e->stamp = ++l->cache_clock;
      return e;
    }
  }
  return NULL;
}

/* Keeps at most cache_cap revisions and skips huge ones (> 4096 chunks, ~8 MiB
 * of manifests), so the cache stays bounded. Takes ownership of ms on success. */
static int cache_put(adcp_ledger *l, const adcp_revision_header *h, adcp_chunk_manifest *ms, size_t n) {
  if (!l->cache_cap || n > 4096) return 0;
  manifest_cache_entry *v = &l->cache[0];
  for (size_t i = 0; i < l->cache_cap; i++) {
    if (!l->cache[i].ms) { v = &l->cache[i]; break; }
    if (l->cache[i].stamp < v->stamp) v = &l->cache[i];
  }
  free(v->ms);
  snprintf(v->revision_id, sizeof v->revision_id, "%s", h->revision_id);
  memcpy(v->row_manifest_sha256, h->row_manifest_sha256, 65);
  v->ms = ms, v->n = n, v->stamp = ++l->cache_clock;
  return 1;
}

int adcp_ledger__load_manifests(adcp_chunk_manifest **out, size_t *n_out, int *owned, adcp_ledger *l,
                          const adcp_revision_header *h, const ledger_rowset *rs, adcp_error *err) {
  *out = NULL, *n_out = 0, *owned = 0;
  manifest_cache_entry *e = cache_find(l, h);
  if (e) {
    *out = e->ms, *n_out = e->n;
    return 0;
  }
  adcp_chunk_manifest *ms = NULL;
  size_t n = 0, cap = 0;
  adcp_manifest_checker chk;
  int rc = adcp_manifest_checker_init(&chk, err);
  if (rc) return rc;
  adcp_sql_param p = adcp_sql_text(h->revision_id);
  adcp_sql_rows *r = NULL;
  rc = adcp_sql_query(&r, l->conn,
                      "SELECT chunk_index, first_ordinal, row_count, byte_count, sha256, segments, "
                      "object_key IS NULL, account_id, obligation_id FROM adcp_reporting_row_chunks "
                      "WHERE row_set_id = $1 ORDER BY chunk_index",
                      &p, 1, err);
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      adcp_chunk_manifest *g = realloc(ms, cap * sizeof *ms);
      if (!g) { rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory"); break; }
      ms = g;
    }
    if (adcp_sql_get_int64(r, 6) != !strcmp(rs->row_binding_kind, "postgres") || strcmp(adcp_sql_get_text(r, 7, NULL), h->account_id) ||
        strcmp(adcp_sql_get_text(r, 8, NULL), h->obligation_id)) {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "chunk record %zu does not belong to this row set's binding or obligation", n);
      break;
    }
    /* Rebuild the manifest from column values (never hash stored JSON text). */
    adcp_buf_reset(&l->scratch);
    size_t seglen;
    const char *segs = adcp_sql_get_text(r, 5, &seglen);
    rc = adcp_buf_printf(&l->scratch, "{\"chunk_index\":%s,\"first_ordinal\":%s,\"row_count\":%s,\"byte_count\":%s,"
                                      "\"sha256\":\"%s\",\"segments\":",
                         adcp_sql_get_text(r, 0, NULL), adcp_sql_get_text(r, 1, NULL), adcp_sql_get_text(r, 2, NULL),
                         adcp_sql_get_text(r, 3, NULL), adcp_sql_get_text(r, 4, NULL));
    if (!rc) rc = adcp_buf_append(&l->scratch, segs, seglen);
    if (!rc) rc = adcp_buf_append_byte(&l->scratch, '}');
    if (rc) { rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory"); break; }
    if ((rc = adcp_json_parse(&l->doc, (const char *)l->scratch.data, l->scratch.len, NULL, err)) ||
        (rc = adcp_manifest_from_json(&ms[n], &l->doc, 0, err))) {
      rc = adcp_error_set(err, ADCP_EMANIFEST_MISMATCH, "chunk record %zu is malformed", n);
      break;
    }
    if ((rc = adcp_manifest_checker_add(&chk, &ms[n], err))) break;
    n++;
  }
  adcp_sql_rows_free(r);
  if (!rc) rc = adcp_manifest_checker_finish(&chk, h->row_manifest_sha256, h->row_count, (int64_t)h->chunk_count, err);
  adcp_manifest_checker_free(&chk);
  if (rc) {
    free(ms);
    return adcp_ledger__map_read_error(rc, err);
  }
  if (cache_put(l, h, ms, n)) {
    *out = ms, *n_out = n, *owned = 0;
  } else {
    *out = ms, *n_out = n, *owned = 1;
  }
  return 0;
}

/* ---- clock and tokens ---------------------------------------------------------------------- */

const char *adcp_ledger__now_sql(const adcp_ledger *l) {
  return l->dialect == ADCP_SQL_POSTGRES ? "clock_timestamp()" : "adcp_now()";
}

int64_t adcp_ledger__instant_us(const char *t) {
  int Y, M, D, h, m, s, us = 0;
  if (!t || sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d", &Y, &M, &D, &h, &m, &s) != 6) return -1;
  const char *p = strchr(t, '.');
  if (p) {
    int nd = 0;
    for (p++; isdigit((unsigned char)*p); p++, nd++)
      if (nd < 6) us = us * 10 + (*p - '0');
    for (; nd < 6; nd++) us *= 10;
  }
  struct tm tm = {0};
  tm.tm_year = Y - 1900, tm.tm_mon = M - 1, tm.tm_mday = D, tm.tm_hour = h, tm.tm_min = m, tm.tm_sec = s;
  return (int64_t)timegm(&tm) * 1000000 + us;
}

void adcp_ledger__instant_format(char out[32], int64_t us) {
  time_t secs = (time_t)(us / 1000000);
  struct tm u;
  gmtime_r(&secs, &u);
  snprintf(out, 32, "%04u-%02u-%02uT%02u:%02u:%02u.%06uZ", (unsigned)(u.tm_year + 1900) % 10000u,
           (unsigned)(u.tm_mon + 1) % 100u, (unsigned)u.tm_mday % 100u, (unsigned)u.tm_hour % 100u,
           (unsigned)u.tm_min % 100u, (unsigned)u.tm_sec % 100u, (unsigned)(us % 1000000));
}

int adcp_ledger__now_plus(adcp_ledger *l, char out[32], int64_t ms, adcp_error *err) {
  char now[32];
  int rc = adcp_sql_now(l->conn, now, err);
  if (rc) return rc;
  int64_t us = adcp_ledger__instant_us(now);
  if (us < 0) return adcp_error_set(err, ADCP_ESTORAGE, "database clock is unreadable");
  adcp_ledger__instant_format(out, us + ms * 1000);
  return 0;
}

int adcp_ledger__uuid(char out[37], adcp_error *err) {
  uint8_t b[16];
  FILE *f = fopen("/dev/urandom", "rb");
  size_t n = f ? fread(b, 1, sizeof b, f) : 0;
  if (f) fclose(f);
  if (n != sizeof b) return adcp_error_set(err, ADCP_EIO, "no randomness for an owner token");
  b[6] = (uint8_t)((b[6] & 0x0f) | 0x40), b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
  char hex[33];
  adcp_hex_encode(hex, b, 16);
  snprintf(out, 37, "%.8s-%.4s-%.4s-%.4s-%.12s", hex, hex + 8, hex + 12, hex + 16, hex + 20);
  return 0;
}

int adcp_ledger__object_lock_key(adcp_buf *out, const char *binding, const char *key) {
  adcp_buf_reset(out);
  if (adcp_buf_append_str(out, "adcp-reporting-object:") || adcp_buf_append_str(out, binding) ||
      adcp_buf_append_byte(out, ':') || adcp_buf_append_str(out, key) || adcp_buf_cstr(out))
    return ADCP_ENOMEM;
  return 0;
}

int adcp_ledger__next_number(int64_t *number, char prev_id[ADCP_LEDGER_ID_MAX], adcp_ledger *l, const char *obligation_id,
                       adcp_error *err) {
  *number = 1;
  prev_id[0] = '\0';
  adcp_sql_param p = adcp_sql_text(obligation_id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT revision_id, revision_number, finality FROM adcp_reporting_revisions "
                          "WHERE obligation_id = $1 ORDER BY revision_number DESC LIMIT 1",
                          &p, 1, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    rc = 0;
    snprintf(prev_id, ADCP_LEDGER_ID_MAX, "%s", adcp_sql_get_text(r, 0, NULL));
    *number = adcp_sql_get_int64(r, 1) + 1;
    if (!strcmp(adcp_sql_get_text(r, 2, NULL), "official"))
      rc = adcp_error_set(err, ADCP_ECONFLICT, "obligation %s already has an official revision (%s)", obligation_id,
                          prev_id);
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* recorded_at of the revision about to be inserted (under the account lock):
 * never earlier than the obligation's newest (instants are monotonic per
 * obligation whatever a writer's clock says), and refused when this clock is
 * behind the account's newest by more than the tolerance: a slow SQLite
 * writer would otherwise record instants retention reads as long past. */
static int recorded_instant(char out[40], adcp_ledger *l, const adcp_ledger_commit *req, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(req->account_id), adcp_sql_text(req->obligation_id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          l->dialect == ADCP_SQL_POSTGRES
                              ? "SELECT " PG_TS("clock_timestamp()") ", " PG_TS("(SELECT max(recorded_at) FROM "
                                "adcp_reporting_revisions WHERE account_id = $1)") ", " PG_TS("(SELECT max(recorded_at) "
                                "FROM adcp_reporting_revisions WHERE obligation_id = $2)")
                              : "SELECT adcp_now(), (SELECT max(recorded_at) FROM adcp_reporting_revisions WHERE "
                                "account_id = $1), (SELECT max(recorded_at) FROM adcp_reporting_revisions WHERE "
                                "obligation_id = $2)",
                          p, 2, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) != 1) {
    adcp_sql_rows_free(r);
    return rc < 0 ? rc : adcp_error_set(err, ADCP_EINTERNAL, "the clock query returned no row");
  }
  char now[40], acct[40] = "", obl[40] = "";
  snprintf(now, sizeof now, "%s", adcp_sql_get_text(r, 0, NULL));
  if (!adcp_sql_is_null(r, 1)) snprintf(acct, sizeof acct, "%s", adcp_sql_get_text(r, 1, NULL));
  if (!adcp_sql_is_null(r, 2)) snprintf(obl, sizeof obl, "%s", adcp_sql_get_text(r, 2, NULL));
  adcp_sql_rows_free(r);
  int64_t t_now = adcp_ledger__instant_us(now);
  if (acct[0] && adcp_ledger__instant_us(acct) - t_now > (int64_t)ADCP_LEDGER_CLOCK_TOLERANCE_S * 1000000)
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE,
                          "this writer's clock (%s) is %lld s behind the newest recorded instant of account %s (%s), "
                          "more than the %d s tolerance: fix the host clock",
                          now, (long long)((adcp_ledger__instant_us(acct) - t_now) / 1000000), req->account_id, acct,
                          ADCP_LEDGER_CLOCK_TOLERANCE_S);
  snprintf(out, 40, "%s", obl[0] && adcp_ledger__instant_us(obl) > t_now ? obl : now);
  return 0;
}

static void number_taken(int64_t number, const adcp_ledger_commit *req, adcp_error *err) {
  adcp_error_set(err, ADCP_ECONFLICT, "revision number %" PRId64 " of obligation %s was taken by another writer; retry",
                 number, req->obligation_id);
}

int adcp_ledger__insert_revision(adcp_ledger *l, const adcp_ledger_commit *req, const adcp_rows_result *res, int64_t number,
                           const char *prev_id, const adcp_buf *totals_json, const char *shared_from,
                           const char *observed_at, adcp_error *err) {
  char recorded[40];
  int rc = recorded_instant(recorded, l, req, err);
  if (rc) return rc;
  adcp_sql_param all[15] = {adcp_sql_text(req->revision_id),
                            adcp_sql_text(req->obligation_id),
                            adcp_sql_text(req->account_id),
                            adcp_sql_int64(number),
                            adcp_sql_text(adcp_finality_name(req->finality)),
                            prev_id && prev_id[0] ? adcp_sql_text(prev_id) : adcp_sql_null(),
                            adcp_sql_text(res->content_sha256),
                            adcp_sql_int64((int64_t)res->canonical_byte_count),
                            adcp_sql_int64((int64_t)res->row_count),
                            adcp_sql_textn((const char *)totals_json->data, totals_json->len),
                            adcp_sql_text(res->row_manifest_sha256),
                            shared_from && shared_from[0] ? adcp_sql_text(shared_from) : adcp_sql_null(),
                            observed_at && observed_at[0] ? adcp_sql_text(observed_at) : adcp_sql_null(),
                            adcp_sql_text(adcp_binding_algorithm_name(adcp_ledger__commit_algorithm(req))),
                            adcp_sql_text(recorded)};
  static const char INS_PG[] =
      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
      "finality, supersedes_revision_id, binding_algorithm, revision_content_sha256, "
      "canonical_byte_count, row_count, control_totals, row_manifest_sha256, "
      "rows_shared_from_revision_id, row_set_id, observed_at, recorded_at) VALUES ($1, $2, $3, $4, "
      "$5, $6, $14, $7, $8, $9, $10, $11, $12, $1, $13, $15::timestamptz)";
  static const char INS_SQLITE[] =
      "INSERT INTO adcp_reporting_revisions (revision_id, obligation_id, account_id, revision_number, "
      "finality, supersedes_revision_id, binding_algorithm, revision_content_sha256, "
      "canonical_byte_count, row_count, control_totals, row_manifest_sha256, "
      "rows_shared_from_revision_id, row_set_id, observed_at, recorded_at) VALUES ($1, $2, $3, $4, "
      "$5, $6, $14, $7, $8, $9, $10, $11, $12, $1, $13, $15)";
  const char *ins = l->dialect == ADCP_SQL_POSTGRES ? INS_PG : INS_SQLITE;
  if (l->audit_off) {
    rc = adcp_sql_exec(l->conn, ins, all, 15, err);
    if (rc == ADCP_ECONFLICT) number_taken(number, req, err);
  } else {
    /* Tamper-evident history (docs/trust.md): the header digest becomes the
     * next leaf of the account's log in this transaction, under the account
     * lock, for both binding kinds (both insert the header here). The insert
     * returns the header as the engine stored it and the log's size, so the
     * leaf needs no second read of the header (issue 32). */
    adcp_buf sql;
    adcp_buf_init(&sql);
    adcp_sql_rows *r = NULL;
    rc = adcp_buf_printf(&sql, "%s RETURNING %s", ins, adcp_audit_header_returning(l->dialect)) || adcp_buf_cstr(&sql)
             ? adcp_error_set(err, ADCP_ENOMEM, "out of memory")
             : adcp_sql_query(&r, l->conn, (const char *)sql.data, all, 15, err);
    if (!rc && (rc = adcp_sql_next(r, err)) == 0) rc = adcp_error_set(err, ADCP_ESTORAGE, "the header insert returned no row");
    if (rc == ADCP_ECONFLICT) number_taken(number, req, err); /* the insert's own conflict, not the leaf's */
    if (rc == 1) rc = adcp_audit_append_revision_row(NULL, l->conn, r, err);
    if (!rc && (rc = adcp_sql_next(r, err)) == 1) rc = adcp_error_set(err, ADCP_ESTORAGE, "the header insert returned two rows");
    adcp_sql_rows_free(r);
    adcp_buf_free(&sql);
  }
  return rc;
}

int adcp_ledger__revision_exists(int *exists, adcp_ledger *l, const char *revision_id, adcp_error *err) {
  adcp_sql_param rid = adcp_sql_text(revision_id);
  char one[8];
  *exists = 0;
  return adcp_sql_query_text(one, sizeof one, exists, l->conn,
                             "SELECT 1 FROM adcp_reporting_revisions WHERE revision_id = $1", &rid, 1, err);
}
