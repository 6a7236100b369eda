/* auditlog/retirement.c — room auditlog: retirement evidence in the log
 * (profile adcp-retirement-v1, docs/trust.md): the document period retirement
 * appends in its phase-3 transaction and its strict parser (the housekeeping
 * look-up is the audit room's, audit/retire.c). The
 * document lists every logged revision of the obligation by leaf index and
 * digest; each of those leaves holds its header object, so an auditor can
 * tell from the log alone (not the editable tables) whether the retirement
 * was due. The leaf keeps the document's JCS text (entry_document); the
 * audit re-hashes it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auditlog/internal.h"
#include "core/instant.h"

static int put_key(adcp_buf *b, const char *k, int first) {
  return (first ? 0 : adcp_buf_append_byte(b, ',')) || adcp_jcs_write_string(b, k, strlen(k)) ||
         adcp_buf_append_byte(b, ':');
}

static int put_str(adcp_buf *b, const char *s) {
  return s ? adcp_jcs_write_string(b, s, strlen(s)) : adcp_buf_append_str(b, "null");
}

/* ---- instants ------------------------------------------------------------------------ */

int adcp_audit_instant_us(int64_t *out, const char *s, adcp_error *err) { return adcp_core_instant_parse(out, s, err); }

/* ---- emission -------------------------------------------------------------------------- */

/* One revision entry: its newest leaf in this account (the leaf, never the
 * editable header row, is the evidence; it holds the logged header).
 * *logged = 0 when it has no leaf. */
static int put_entry(adcp_buf *b, int *logged, adcp_sql_conn *conn, const adcp_audit_retirement *rec, const char *rev,
                     int first, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(rev), adcp_sql_text(rec->account_id)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, conn,
                          "SELECT leaf_index, entry_sha256 FROM adcp_audit_log_leaves WHERE entry_kind = 'revision' "
                          "AND entry_id = $1 AND account_id = $2 ORDER BY leaf_index DESC LIMIT 1",
                          p, 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  int64_t idx = rc == 1 ? adcp_sql_get_int64(r, 0) : -1;
  char leaf[65] = "";
  if (rc == 1) snprintf(leaf, sizeof leaf, "%s", adcp_sql_get_text(r, 1, NULL));
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  *logged = rc == 1;
  if (*logged &&
      ((first ? 0 : adcp_buf_append_byte(b, ',')) || adcp_buf_append_byte(b, '{') || put_key(b, "header_sha256", 1) ||
       put_str(b, leaf) || put_key(b, "leaf_index", 0) || adcp_buf_printf(b, "%" PRId64, idx) ||
       put_key(b, "revision_id", 0) || put_str(b, rev) || adcp_buf_append_byte(b, '}')))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  return 0;
}

int adcp_audit_append_retirement(uint64_t *leaf_index, adcp_sql_conn *conn, const adcp_audit_retirement *rec,
                                 adcp_error *err) {
  if (!rec || rec->version != ADCP_AUDIT_RETIREMENT_VERSION || !rec->account_id || !*rec->account_id ||
      !rec->record_id || !*rec->record_id || !rec->obligation_id || !*rec->obligation_id || !rec->period_start ||
      !rec->period_end || !rec->retired_at || rec->retention_days < 0 || (rec->n_revisions && !rec->revision_ids) ||
      rec->n_revisions > ADCP_AUDIT_RETIREMENT_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "retirement record: version 2 with account, obligation, record ID, period and instant");
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = 0, bad = 0;
  /* Members in RFC 8785 order. */
  bad |= adcp_buf_append_byte(&b, '{') || put_key(&b, "account_id", 1) || put_str(&b, rec->account_id);
  bad |= put_key(&b, "obligation_id", 0) || put_str(&b, rec->obligation_id);
  bad |= put_key(&b, "period_end", 0) || put_str(&b, rec->period_end);
  bad |= put_key(&b, "period_start", 0) || put_str(&b, rec->period_start);
  bad |= put_key(&b, "profile", 0) || put_str(&b, ADCP_AUDIT_RETIREMENT_PROFILE);
  bad |= put_key(&b, "record_id", 0) || put_str(&b, rec->record_id);
  bad |= put_key(&b, "retention_days", 0) || adcp_buf_printf(&b, "%" PRId64, rec->retention_days);
  bad |= put_key(&b, "retired_at", 0) || put_str(&b, rec->retired_at);
  bad |= put_key(&b, "revisions", 0) || adcp_buf_append_byte(&b, '[');
  int first = 1;
  for (size_t i = 0; !bad && !rc && i < rec->n_revisions; i++) {
    int logged = 0;
    rc = put_entry(&b, &logged, conn, rec, rec->revision_ids[i], first, err);
    if (logged) first = 0;
  }
  bad |= adcp_buf_append_str(&b, "]}") || adcp_buf_cstr(&b);
  if (!rc && bad) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  /* What is written must be what the audit accepts. */
  adcp_audit_retirement_doc chk;
  if (!rc && (rc = adcp_audit_retirement_parse(&chk, (const char *)b.data, b.len, err)) == 0)
    adcp_audit_retirement_doc_free(&chk);
  char digest[65];
  if (!rc) rc = adcp_sha256_hex(digest, b.data, b.len, err);
  if (!rc)
    rc = adcp_auditlog__append_leaf(leaf_index, conn, rec->account_id, "retirement", rec->record_id, rec->obligation_id,
                                    ADCP_AUDIT_RETIREMENT_PROFILE, digest, (const char *)b.data, -1, err);
  adcp_buf_free(&b);
  return rc;
}

/* ---- strict parser ----------------------------------------------------------------------- */

static int bad_doc(adcp_error *err, const char *what) {
  return adcp_error_set(err, ADCP_EINVALID_INPUT, "retirement document: %s", what);
}

int adcp_auditlog__member_str(char *dst, size_t cap, const adcp_json_doc *d, uint32_t obj, const char *k, int nonempty) {
  uint32_t n = adcp_json_get(d, obj, k);
  size_t len = 0;
  const char *s = n && adcp_json_at(d, n)->type == ADCP_JSON_STRING ? adcp_json_str(d, n, &len) : NULL;
  if (!s || (nonempty && !len) || len >= cap || memchr(s, 0, len)) return -1;
  memcpy(dst, s, len);
  dst[len] = 0;
  return 0;
}

static int member_str(char *dst, size_t cap, const adcp_json_doc *d, uint32_t obj, const char *k) {
  return adcp_auditlog__member_str(dst, cap, d, obj, k, 1);
}

static int only_members(const adcp_json_doc *d, uint32_t obj, const char *const *names, uint32_t n) {
  if (adcp_json_at(d, obj)->type != ADCP_JSON_OBJECT || adcp_json_at(d, obj)->count != n) return -1;
  for (uint32_t i = 0; i < n; i++)
    if (!adcp_json_get(d, obj, names[i])) return -1;
  return 0;
}

static const char *const DOC_MEMBERS[] = {"account_id", "obligation_id",  "period_end", "period_start", "profile",
                                          "record_id",  "retention_days", "retired_at", "revisions"};
static const char *const ENTRY_MEMBERS[] = {"header_sha256", "leaf_index", "revision_id"};

static int parse_entry(adcp_audit_retired_revision *e, const adcp_json_doc *d, uint32_t node, adcp_error *err) {
  memset(e, 0, sizeof *e);
  if (only_members(d, node, ENTRY_MEMBERS, 3))
    return bad_doc(err, "a revision entry is not {header_sha256, leaf_index, revision_id}");
  adcp_error e2 = {0};
  uint32_t li = adcp_json_get(d, node, "leaf_index");
  if (member_str(e->revision_id, sizeof e->revision_id, d, node, "revision_id") ||
      member_str(e->header_sha256, sizeof e->header_sha256, d, node, "header_sha256") ||
      !adcp_hex_is_sha256(e->header_sha256, strlen(e->header_sha256)) || adcp_json_get_u64(&e->leaf_index, d, li, &e2))
    return bad_doc(err, "a revision entry has a bad revision_id, header_sha256 or leaf_index");
  return 0;
}

void adcp_audit_retirement_doc_free(adcp_audit_retirement_doc *d) {
  if (!d) return;
  free(d->revisions);
  d->revisions = NULL;
  d->n_revisions = 0;
}

int adcp_audit_retirement_parse(adcp_audit_retirement_doc *out, const char *json, size_t len, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_buf canon;
  adcp_buf_init(&canon);
  int rc = 0;
  if (!json || adcp_json_parse(&d, json, len, NULL, NULL)) rc = bad_doc(err, "not valid JSON");
  if (!rc && only_members(&d, 0, DOC_MEMBERS, 9))
    rc = bad_doc(err, "not exactly the members of " ADCP_AUDIT_RETIREMENT_PROFILE);
  /* One spelling only: the stored text is its own RFC 8785 form. */
  if (!rc && adcp_jcs_write(&canon, &d, 0)) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc && (canon.len != len || memcmp(canon.data, json, len))) rc = bad_doc(err, "not in RFC 8785 canonical form");
  uint32_t prof = rc ? 0 : adcp_json_get(&d, 0, "profile");
  if (!rc && !adcp_json_str_eq(&d, prof, ADCP_AUDIT_RETIREMENT_PROFILE))
    rc = bad_doc(err, "profile is not " ADCP_AUDIT_RETIREMENT_PROFILE);
  adcp_error e2 = {0};
  if (!rc && (member_str(out->account_id, sizeof out->account_id, &d, 0, "account_id") ||
              member_str(out->obligation_id, sizeof out->obligation_id, &d, 0, "obligation_id") ||
              member_str(out->record_id, sizeof out->record_id, &d, 0, "record_id") ||
              member_str(out->period_start, sizeof out->period_start, &d, 0, "period_start") ||
              member_str(out->period_end, sizeof out->period_end, &d, 0, "period_end") ||
              member_str(out->retired_at, sizeof out->retired_at, &d, 0, "retired_at")))
    rc = bad_doc(err, "account_id, obligation_id, record_id, period_start, period_end and retired_at must be strings");
  if (!rc && (adcp_audit_instant_us(&out->retired_at_us, out->retired_at, &e2) ||
              adcp_audit_instant_us(&out->period_start_us, out->period_start, &e2) ||
              adcp_audit_instant_us(&out->period_end_us, out->period_end, &e2)))
    rc = bad_doc(err, "retired_at, period_start and period_end must be RFC 3339 instants");
  if (!rc && (adcp_json_get_u64(&out->retention_days, &d, adcp_json_get(&d, 0, "retention_days"), &e2) ||
              out->retention_days > 36500))
    rc = bad_doc(err, "retention_days must be an integer 0-36500");
  uint32_t revs = rc ? 0 : adcp_json_get(&d, 0, "revisions");
  if (!rc && (adcp_json_at(&d, revs)->type != ADCP_JSON_ARRAY || adcp_json_at(&d, revs)->count > ADCP_AUDIT_RETIREMENT_MAX))
    rc = bad_doc(err, "revisions must be an array of at most 100000 entries");
  size_t n = rc ? 0 : adcp_json_at(&d, revs)->count;
  if (!rc && n && !(out->revisions = calloc(n, sizeof *out->revisions)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (uint32_t e = rc ? 0 : adcp_json_first(&d, revs); !rc && e; e = adcp_json_next(&d, revs, e)) {
    adcp_audit_retired_revision *x = &out->revisions[out->n_revisions];
    if ((rc = parse_entry(x, &d, e, err))) break;
    if (out->n_revisions && out->revisions[out->n_revisions - 1].leaf_index >= x->leaf_index)
      rc = bad_doc(err, "revision entries must be in leaf order, each once");
    out->n_revisions++;
  }
  adcp_buf_free(&canon);
  adcp_json_doc_free(&d);
  if (rc) adcp_audit_retirement_doc_free(out);
  return rc;
}
