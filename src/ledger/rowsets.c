/* ledger/rowsets.c — row sets read by their own columns (ledger room), so
 * row sets another SDK wrote into the shared row-storage tables verify and read
 * here even when this ledger holds no revision header for them (spec 02 §3.4,
 * §10; docs/adopting.md §1). The byte path is read.c's (ledger_direct_*):
 * the same manifest, chunk, segment, gzip and line checks as revision reads. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

#define ROWSET_COLS \
  "SELECT s.row_set_id, s.row_set_kind, s.account_id, s.obligation_id, s.row_binding_id, coalesce(b.kind, ''), " \
  "s.digest_profile, s.rows_state, s.encoding, s.content_sha256, s.row_manifest_sha256, " \
  "coalesce(s.rows_shared_from_row_set_id, ''), s.row_count, s.chunk_count, s.canonical_byte_count, " \
  "coalesce(b.identity_sha256, ''), s.row_location_version, " \
  "(SELECT count(*) FROM adcp_reporting_revisions r WHERE r.revision_id = s.row_set_id) " \
  "FROM adcp_reporting_row_sets s LEFT JOIN adcp_reporting_row_bindings b ON b.row_binding_id = s.row_binding_id "

static void info_from_row(adcp_rowset_info *o, ledger_rowset *rs, adcp_sql_rows *r) {
  memset(o, 0, sizeof *o);
  ledger_copy_text(o->row_set_id, sizeof o->row_set_id, adcp_sql_get_text(r, 0, NULL));
  ledger_copy_text(o->row_set_kind, sizeof o->row_set_kind, adcp_sql_get_text(r, 1, NULL));
  ledger_copy_text(o->account_id, sizeof o->account_id, adcp_sql_get_text(r, 2, NULL));
  ledger_copy_text(o->obligation_id, sizeof o->obligation_id, adcp_sql_get_text(r, 3, NULL));
  ledger_copy_text(o->row_binding_id, sizeof o->row_binding_id, adcp_sql_get_text(r, 4, NULL));
  ledger_copy_text(o->binding_kind, sizeof o->binding_kind, adcp_sql_get_text(r, 5, NULL));
  ledger_copy_text(o->digest_profile, sizeof o->digest_profile, adcp_sql_get_text(r, 6, NULL));
  ledger_copy_text(o->rows_state, sizeof o->rows_state, adcp_sql_get_text(r, 7, NULL));
  ledger_copy_text(o->encoding, sizeof o->encoding, adcp_sql_get_text(r, 8, NULL));
  ledger_copy_text(o->content_sha256, sizeof o->content_sha256, adcp_sql_get_text(r, 9, NULL));
  ledger_copy_text(o->row_manifest_sha256, sizeof o->row_manifest_sha256, adcp_sql_get_text(r, 10, NULL));
  ledger_copy_text(o->rows_shared_from, sizeof o->rows_shared_from, adcp_sql_get_text(r, 11, NULL));
  int64_t rc = adcp_sql_get_int64(r, 12), cc = adcp_sql_get_int64(r, 13), bc = adcp_sql_get_int64(r, 14);
  o->row_count = rc > 0 ? (uint64_t)rc : 0;
  o->chunk_count = cc > 0 ? (uint64_t)cc : 0;
  o->canonical_byte_count = bc > 0 ? (uint64_t)bc : 0;
  o->has_revision = adcp_sql_get_int64(r, 17) > 0;
  if (rs) {
    memset(rs, 0, sizeof *rs);
    rs->present = 1;
    memcpy(rs->row_binding_kind, o->binding_kind, sizeof rs->row_binding_kind);
    memcpy(rs->row_binding_id, o->row_binding_id, sizeof rs->row_binding_id);
    ledger_copy_text(rs->binding_identity, sizeof rs->binding_identity, adcp_sql_get_text(r, 15, NULL));
    rs->row_location_version = adcp_sql_get_int64(r, 16);
    memcpy(rs->digest_profile, o->digest_profile, sizeof rs->digest_profile);
    memcpy(rs->content_sha256, o->content_sha256, 65);
    memcpy(rs->row_manifest_sha256, o->row_manifest_sha256, 65);
    memcpy(rs->account_id, o->account_id, sizeof rs->account_id);
    memcpy(rs->obligation_id, o->obligation_id, sizeof rs->obligation_id);
    rs->row_count = o->row_count, rs->canonical_byte_count = o->canonical_byte_count, rs->chunk_count = o->chunk_count;
  }
}

static int load(adcp_rowset_info *o, ledger_rowset *rs, int *found, adcp_ledger *l, const char *id, adcp_error *err) {
  *found = 0;
  memset(o, 0, sizeof *o);
  adcp_sql_param p = adcp_sql_text(id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, ROWSET_COLS "WHERE s.row_set_id = $1", &p, 1, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    *found = 1;
    info_from_row(o, rs, r);
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc;
}

int adcp_ledger_get_rowset(adcp_rowset_info *out, int *found, adcp_ledger *l, const char *row_set_id, adcp_error *err) {
  int rc = adcp_ledger__check_ident(row_set_id, "row_set_id", err);
  if (rc) return rc;
  return load(out, NULL, found, l, row_set_id, err);
}

int adcp_ledger_list_rowsets(adcp_rowset_info **out, size_t *count, adcp_ledger *l, const char *binding_id,
                             const char *after, size_t limit, adcp_error *err) {
  *out = NULL, *count = 0;
  if (limit < 1 || limit > 1000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "limit must be 1..1000");
  adcp_rowset_info *v = calloc(limit, sizeof *v);
  if (!v) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p[3] = {adcp_sql_text(after ? after : ""), adcp_sql_text(binding_id ? binding_id : ""),
                         adcp_sql_int64((int64_t)limit)};
  /* Byte order on both engines (row_set_id is COLLATE "C" / BINARY). */
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          ROWSET_COLS
                          "WHERE s.row_set_id > $1 AND ($2 = '' OR s.row_binding_id = $2) "
                          "ORDER BY s.row_set_id LIMIT $3",
                          p, 3, err);
  if (rc) {
    free(v);
    return rc;
  }
  size_t n = 0;
  while ((rc = adcp_sql_next(r, err)) == 1 && n < limit) info_from_row(&v[n++], NULL, r);
  adcp_sql_rows_free(r);
  if (rc < 0) {
    free(v);
    return rc;
  }
  *out = v, *count = n;
  return 0;
}

int adcp_ledger_count_rowsets(uint64_t *count, uint64_t *bytes, adcp_ledger *l, const char *binding_id, adcp_error *err) {
  *count = *bytes = 0;
  adcp_sql_param p = adcp_sql_text(binding_id ? binding_id : "");
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT count(*), coalesce(sum(canonical_byte_count), 0) FROM adcp_reporting_row_sets "
                          "WHERE $1 = '' OR row_binding_id = $1",
                          &p, 1, err);
  if (rc) return rc;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    *count = (uint64_t)adcp_sql_get_int64(r, 0);
    *bytes = (uint64_t)adcp_sql_get_int64(r, 1);
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* Everything a direct read needs: the row set's own header facts, its state,
 * and where its content digest comes from. *content_mode gets the outcome a
 * successful full read will have. */
typedef struct prepared {
  adcp_revision_header h; /* built from the row set; control_totals_json owned */
  ledger_rowset rs;
  adcp_revision_header rev; /* this ledger's revision header, when has_revision */
  int have_rev;
  ledger_direct d;
} prepared;

static void prepared_free(prepared *p) {
  adcp_revision_header_free(&p->h);
  if (p->have_rev) adcp_revision_header_free(&p->rev);
}

static int prepare(prepared *p, adcp_ledger *l, const char *id, const adcp_rowset_envelope *env, adcp_error *err) {
  memset(p, 0, sizeof *p);
  int rc = adcp_ledger__check_ident(id, "row_set_id", err);
  if (rc) return rc;
  adcp_rowset_info info;
  int found = 0;
  if ((rc = load(&info, &p->rs, &found, l, id, err))) return rc;
  if (!found) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "row set not found");
  /* State first (spec 01 §9.1): an expired row set is never read. */
  if (!strcmp(info.rows_state, "pruning") || !strcmp(info.rows_state, "pruned"))
    return adcp_error_set(err, ADCP_EROWS_EXPIRED, "row set rows have expired");
  if (!strcmp(info.rows_state, "unavailable"))
    return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "row set rows are marked unavailable");
  if (strcmp(info.rows_state, "live")) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "unknown rows_state");
  if (strcmp(info.encoding, ADCP_ROWS_ENCODING))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set records an unknown encoding");
  if (strcmp(info.binding_kind, "postgres") && strcmp(info.binding_kind, "object"))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set names a binding that is not recorded");
  int rows_v1 = !strcmp(info.digest_profile, "rows_v1");
  if (!rows_v1 && strcmp(info.digest_profile, "revision_envelope_v1"))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set records an unknown digest profile");
  if (!adcp_hex_is_sha256(info.content_sha256, strlen(info.content_sha256)) ||
      !adcp_hex_is_sha256(info.row_manifest_sha256, strlen(info.row_manifest_sha256)) ||
      (info.row_count == 0) != (info.chunk_count == 0))
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "row set header columns are malformed");
  if (rows_v1 && env) return adcp_error_set(err, ADCP_EINVALID_INPUT, "a rows_v1 row set's digest needs no totals");

  adcp_revision_header *h = &p->h;
  ledger_copy_text(h->revision_id, sizeof h->revision_id, info.row_set_id);
  ledger_copy_text(h->account_id, sizeof h->account_id, info.account_id);
  ledger_copy_text(h->obligation_id, sizeof h->obligation_id, info.obligation_id);
  memcpy(h->content_sha256, info.content_sha256, 65);
  memcpy(h->row_manifest_sha256, info.row_manifest_sha256, 65);
  memcpy(h->rows_state, info.rows_state, sizeof h->rows_state);
  h->row_count = info.row_count, h->chunk_count = info.chunk_count, h->canonical_byte_count = info.canonical_byte_count;
  h->binding_algorithm = ADCP_BINDING_RFC8785_JCS_V1;
  p->d.h = h, p->d.rs = &p->rs;
  p->d.env = rows_v1 ? LEDGER_ENV_ROWS : LEDGER_ENV_NONE;
  adcp_buf t;
  adcp_buf_init(&t);
  if (env) {
    if (env->revision_id && (rc = adcp_ledger__check_ident_pattern(env->revision_id, "revision_id", err))) return rc;
    if (env->totals && adcp_totals_write_jcs(&t, env->totals, ADCP_BINDING_RFC8785_JCS_V1)) {
      adcp_buf_free(&t);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    h->binding_algorithm = env->algorithm ? env->algorithm : ADCP_BINDING_RFC8785_JCS_V1;
    p->d.env = LEDGER_ENV_REVISION;
    p->d.envelope_revision_id = env->revision_id;
  } else if (!rows_v1 && info.has_revision) {
    /* Our own header is the trust anchor: the row set must repeat it. */
    ledger_rowset rrs;
    int f = 0;
    p->have_rev = 1; /* freed by prepared_free whatever happens next */
    if ((rc = adcp_ledger__load_header(&p->rev, &rrs, &f, l, 1, info.row_set_id, NULL, err))) return rc;
    if (f && (rc = adcp_ledger__check_rowset(&p->rev, &rrs, err))) return rc;
    if (f) {
      if (adcp_buf_append_str(&t, p->rev.control_totals_json ? p->rev.control_totals_json : "[]")) {
        adcp_buf_free(&t);
        return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      }
      h->binding_algorithm = p->rev.binding_algorithm ? p->rev.binding_algorithm : ADCP_BINDING_RFC8785_JCS_V1;
      p->d.env = LEDGER_ENV_REVISION;
    }
  }
  h->control_totals_json = strndup(t.len ? (const char *)t.data : "[]", t.len ? t.len : 2);
  adcp_buf_free(&t);
  if (!h->control_totals_json) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_ledger_verify_rowset(int *content, adcp_ledger *l, const char *row_set_id, const adcp_rowset_envelope *env,
                              adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err) {
  if (content) *content = ADCP_ROWSET_CONTENT_UNCHECKED;
  prepared p;
  int rc = prepare(&p, l, row_set_id, env, err);
  if (!rc) rc = adcp_ledger__direct_verify(l, &p.d, fn, ctx, err);
  if (!rc && content)
    *content = p.d.env == LEDGER_ENV_NONE ? ADCP_ROWSET_CONTENT_UNCHECKED : ADCP_ROWSET_CONTENT_VERIFIED;
  prepared_free(&p);
  return rc ? adcp_ledger__map_read_error(rc, err) : 0;
}

int adcp_ledger_read_rowset_rows(adcp_ledger_page *out, adcp_ledger *l, const char *row_set_id,
                                 const adcp_rowset_envelope *env, uint64_t offset, uint64_t limit, adcp_error *err) {
  prepared p;
  int rc = prepare(&p, l, row_set_id, env, err);
  if (rc) out->data.len = 0, out->count = 0, out->total_rows = 0, out->envelope_verified = 0;
  if (!rc) rc = adcp_ledger__direct_page(out, l, &p.d, offset, limit, err);
  prepared_free(&p);
  return rc ? adcp_ledger__map_read_error(rc, err) : 0;
}
