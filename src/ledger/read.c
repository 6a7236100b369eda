/* ledger/read.c — verified reads (spec 02 §10, spec 01 §9). A paged read
 * checks the header and row-set state, verifies the manifests against the
 * header's row_manifest_sha256, then fetches only the byte range of the
 * segments the page overlaps and verifies each of them before releasing a
 * row. A full read (and adcp_ledger_verify_revision) verifies every chunk whole
 * and re-derives the envelope digest. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ledger/internal.h"

void adcp_ledger_page_init(adcp_ledger_page *p) { memset(p, 0, sizeof *p); }

void adcp_ledger_page_free(adcp_ledger_page *p) {
  if (!p) return;
  adcp_buf_free(&p->data);
  free(p->ends);
  memset(p, 0, sizeof *p);
}

static int page_reset(adcp_ledger_page *p) {
  adcp_buf_reset(&p->data);
  p->count = p->offset = p->total_rows = 0;
  p->envelope_verified = 0;
  return 0;
}

static int page_add(adcp_ledger_page *p, const uint8_t *line, size_t n) {
  if (p->count == p->ends_cap) {
    size_t cap = p->ends_cap ? p->ends_cap * 2 : 512;
    size_t *g = realloc(p->ends, cap * sizeof *g);
    if (!g) return ADCP_ENOMEM;
    p->ends = g, p->ends_cap = cap;
  }
  if (adcp_buf_append(&p->data, line, n) || adcp_buf_append_byte(&p->data, '\n')) return ADCP_ENOMEM;
  p->ends[p->count++] = p->data.len;
  return 0;
}

/* Header + row set + verified manifests, with the account check. */
typedef struct opened {
  adcp_revision_header h;
  ledger_rowset rs;
  adcp_chunk_manifest *ms;
  size_t n;
  int owned;
  /* object kind */
  ledger_binding *binding;
  ledger_locator *loc;
  int moved; /* a missing object whose row set moved or expired meanwhile */
  adcp_buf phys;
  int env;                     /* LEDGER_ENV_*: which content digest a full read re-derives */
  const char *env_revision_id; /* envelope ID when it is not the row set ID (NULL: same) */
  int direct;                  /* opened by row set ID alone (rowsets.c): no revision header */
} opened;

static void opened_free(opened *o) {
  adcp_revision_header_free(&o->h);
  if (o->owned) free(o->ms);
  o->ms = NULL;
  for (size_t i = 0; o->loc && i < o->n; i++) free(o->loc[i].object_key), free(o->loc[i].native_version);
  free(o->loc);
  o->loc = NULL;
  adcp_buf_free(&o->phys);
}

/* Object kind (spec 02 §10.2): the binding must be configured here with the
 * recorded identity; then the chunk locators, in chunk order. */
static int open_locators(opened *o, adcp_ledger *l, adcp_error *err) {
  ledger_binding *b = adcp_ledger__binding_find(l, o->rs.row_binding_id);
  if (!b || strcmp(b->identity_sha256, o->rs.binding_identity))
    return adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE,
                          b ? "binding %s: configured identity differs from the recorded one"
                            : "binding %s is not configured in this process (keep retired bindings configured)",
                          o->rs.row_binding_id);
  o->binding = b;
  o->loc = calloc(o->n ? o->n : 1, sizeof *o->loc);
  if (!o->loc) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text(o->h.revision_id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT chunk_index, object_key, native_version, compression, physical_sha256, "
                          "physical_byte_count FROM adcp_reporting_row_chunks WHERE row_set_id = $1 ORDER BY chunk_index",
                          &p, 1, err);
  if (rc) return rc;
  size_t i = 0;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    if (i >= o->n || adcp_sql_get_int64(r, 0) != (int64_t)i || adcp_sql_is_null(r, 1)) {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk locator %zu is missing or out of order", i);
      break;
    }
    ledger_locator *c = &o->loc[i++];
    c->object_key = strdup(adcp_sql_get_text(r, 1, NULL));
    c->native_version = strdup(adcp_sql_get_text(r, 2, NULL));
    if (!c->object_key || !c->native_version) {
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    /* A stored key that is malformed or outside the binding's prefix was
     * edited in the database: an integrity failure, not caller input. */
    size_t kl = strlen(c->object_key), pl = strlen(b->prefix ? b->prefix : "");
    if (!adcp_object_key_is_valid(c->object_key, kl) || kl <= pl + 1 || memcmp(c->object_key, b->prefix, pl) ||
        c->object_key[pl] != '/') {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk locator %zu records an invalid object key", i - 1);
      break;
    }
    if (adcp_object_compression_parse(&c->compression, adcp_sql_get_text(r, 3, NULL), NULL) ||
        !adcp_hex_is_sha256(adcp_sql_get_text(r, 4, NULL), 64) || adcp_sql_get_int64(r, 5) <= 0) {
      rc = adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk locator %zu is malformed", i - 1);
      break;
    }
    memcpy(c->physical_sha256, adcp_sql_get_text(r, 4, NULL), 65);
    c->physical_byte_count = (uint64_t)adcp_sql_get_int64(r, 5);
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  if (i != o->n) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk locators do not match the chunk count");
  return 0;
}

/* A legacy revision the import quarantined (docs/adopting.md) is never in the
 * ledger: its reads fail closed as an integrity failure, not as unknown. */
int adcp_ledger__not_found_or_quarantined(adcp_ledger *l, const char *account, const char *revision, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(revision), adcp_sql_text(account ? account : "")};
  char why[64];
  int found = 0;
  int rc = adcp_sql_query_text(why, sizeof why, &found, l->conn,
                               account ? "SELECT failed_check FROM adcp_legacy_import_quarantine WHERE revision_id = $1 "
                                         "AND account_id = $2"
                                       : "SELECT failed_check FROM adcp_legacy_import_quarantine WHERE revision_id = $1",
                               p, account ? 2 : 1, err);
  if (rc) return rc;
  if (found)
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED,
                          "revision was quarantined by the legacy import (%s check failed); its rows are not served", why);
  return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found");
}

static int open_rowset(opened *o, adcp_ledger *l, const char *account, const char *revision, adcp_error *err) {
  memset(o, 0, sizeof *o);
  int rc = adcp_ledger__check_read_ids(account, revision, "revision_id", err);
  if (rc) return rc;
  int found = 0;
  rc = adcp_ledger__load_header(&o->h, &o->rs, &found, l, account ? 0 : 1, revision, account, err);
  if (!rc && !found) rc = adcp_ledger__not_found_or_quarantined(l, account, revision, err);
  if (!rc) rc = adcp_ledger__check_rowset(&o->h, &o->rs, err);
  if (!rc) rc = adcp_ledger__load_manifests(&o->ms, &o->n, &o->owned, l, &o->h, &o->rs, err);
  if (!rc && !strcmp(o->rs.row_binding_kind, "object")) rc = open_locators(o, l, err);
  if (rc) opened_free(o);
  return rc;
}

static int fetch_object(adcp_buf *out, adcp_ledger *l, opened *o, size_t ci, uint64_t off, uint64_t len, int whole,
                        adcp_error *err);
static int rows_missing(adcp_ledger *l, opened *o, size_t ci, adcp_error *err);

/* Fetches [off, off+len) of one chunk body (1-based substring on both engines).
 * Missing body → ROWS_UNAVAILABLE. The bytes are only valid until the next
 * query on the connection, so they are copied into out. */
static int fetch_range(adcp_buf *out, adcp_ledger *l, opened *o, const adcp_chunk_manifest *m, uint64_t off,
                       uint64_t len, int whole, adcp_error *err) {
  if (o->loc) return fetch_object(out, l, o, (size_t)(m - o->ms), off, len, whole, err);
  adcp_sql_param p[5] = {adcp_sql_text(o->h.account_id), adcp_sql_text(o->h.obligation_id), adcp_sql_text(m->sha256),
                         adcp_sql_int64((int64_t)off + 1), adcp_sql_int64((int64_t)len)};
  if (!whole && l->dialect == ADCP_SQL_SQLITE) {
    /* SQLite's substr() loads the whole blob first; read just the range. */
    char rowid[24];
    int found = 0;
    int rc = adcp_sql_query_text(rowid, sizeof rowid, &found, l->conn,
                                 "SELECT rowid FROM adcp_reporting_chunk_bodies WHERE account_id = $1 "
                                 "AND obligation_id = $2 AND sha256 = $3",
                                 p, 3, err);
    if (rc) return rc;
    adcp_buf_reset(out);
    if (found)
      rc = adcp_sql_blob_read(out, l->conn, "adcp_reporting_chunk_bodies", "body", strtoll(rowid, NULL, 10), off,
                              (size_t)len, err);
    if (!found || rc == ADCP_ENOT_FOUND) return rows_missing(l, o, (size_t)(m - o->ms), err);
    return rc;
  }
  const char *sql = whole ? "SELECT body FROM adcp_reporting_chunk_bodies WHERE account_id = $1 AND obligation_id = $2 "
                            "AND sha256 = $3"
                    : l->dialect == ADCP_SQL_POSTGRES
                        ? "SELECT substring(body FROM $4::int FOR $5::int) FROM adcp_reporting_chunk_bodies "
                          "WHERE account_id = $1 AND obligation_id = $2 AND sha256 = $3"
                        : "SELECT substr(body, $4, $5) FROM adcp_reporting_chunk_bodies "
                          "WHERE account_id = $1 AND obligation_id = $2 AND sha256 = $3";
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn, sql, p, whole ? 3 : 5, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc == 1) {
    size_t n = 0;
    const uint8_t *b = adcp_sql_get_blob(r, 0, &n);
    adcp_buf_reset(out);
    rc = (n && adcp_buf_append(out, b, n)) ? adcp_error_set(err, ADCP_ENOMEM, "out of memory") : 0;
  } else if (rc == 0) {
    adcp_sql_rows_free(r);
    return rows_missing(l, o, (size_t)(m - o->ms), err);
  }
  adcp_sql_rows_free(r);
  return rc;
}

/* Missing bytes (a body row or an object): re-read the header before saying
 * ROWS_UNAVAILABLE (spec 02 §10.4). Pruned or gone → ROWS_EXPIRED; moved →
 * retried by the caller. */
static int rows_missing_direct(adcp_ledger *l, opened *o, size_t ci, adcp_error *err);
static int rows_missing(adcp_ledger *l, opened *o, size_t ci, adcp_error *err) {
  if (o->direct) return rows_missing_direct(l, o, ci, err);
  adcp_revision_header h;
  ledger_rowset rs;
  int found = 0;
  adcp_error e2 = {0};
  int rc = adcp_ledger__load_header(&h, &rs, &found, l, 1, o->h.revision_id, NULL, &e2);
  if (rc) return adcp_error_set(err, rc, "%s", e2.message);
  int expired = !found || !rs.present || !strcmp(h.rows_state, "pruning") || !strcmp(h.rows_state, "pruned");
  int moved = found && rs.present &&
              (rs.row_location_version != o->rs.row_location_version || strcmp(rs.row_binding_id, o->rs.row_binding_id));
  adcp_revision_header_free(&h);
  if (expired) return adcp_error_set(err, ADCP_EROWS_EXPIRED, "revision rows have expired");
  if (moved) {
    o->moved = 1;
    return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "row set moved during the read; retry");
  }
  if (!o->loc) return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "chunk %zu body is missing", ci);
  return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "chunk %zu is missing at its recorded version (object %s)", ci,
                        o->loc[ci].object_key);
}

/* The same re-read for a row set opened without a revision header. */
static int rows_missing_direct(adcp_ledger *l, opened *o, size_t ci, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(o->h.revision_id);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, l->conn,
                          "SELECT rows_state, row_location_version, row_binding_id FROM adcp_reporting_row_sets "
                          "WHERE row_set_id = $1",
                          &p, 1, err);
  if (rc) return rc;
  int found = 0, expired = 1, moved = 0;
  if ((rc = adcp_sql_next(r, err)) == 1) {
    const char *st = adcp_sql_get_text(r, 0, NULL);
    found = 1;
    expired = !strcmp(st, "pruning") || !strcmp(st, "pruned");
    moved = adcp_sql_get_int64(r, 1) != o->rs.row_location_version ||
            strcmp(adcp_sql_get_text(r, 2, NULL), o->rs.row_binding_id);
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  if (!found || expired) return adcp_error_set(err, ADCP_EROWS_EXPIRED, "row set rows have expired");
  if (moved) {
    o->moved = 1;
    return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "row set moved during the read; retry");
  }
  if (!o->loc) return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "chunk %zu body is missing", ci);
  return adcp_error_set(err, ADCP_EROWS_UNAVAILABLE, "chunk %zu is missing at its recorded version (object %s)", ci,
                        o->loc[ci].object_key);
}

/* A provider refusing a stored key or version as malformed: the row came from
 * the database, so it is an integrity failure (exit 3), never caller input. */
static int stored_locator_error(int rc, size_t ci, adcp_error *err) {
  if (rc != ADCP_EINVALID_INPUT) return rc;
  return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk %zu locator was refused by the provider", ci);
}

/* Object kind fetch (spec 02 §10.3): an uncompressed chunk is range-read at its
 * pinned version; a gzip chunk is read whole (capped at its physical size),
 * checked for length and physical digest BEFORE inflating, inflated with the
 * output capped at byte_count and no trailing data, then sliced. */
static int fetch_object(adcp_buf *out, adcp_ledger *l, opened *o, size_t ci, uint64_t off, uint64_t len, int whole,
                        adcp_error *err) {
  const ledger_locator *c = &o->loc[ci];
  const adcp_chunk_manifest *m = &o->ms[ci];
  adcp_object_provider *p = o->binding->client;
  adcp_object_ctx ctx = {adcp_object_now_ms() + l->write_deadline_ms, NULL};
  adcp_buf_reset(out);
  int rc;
  if (c->compression == ADCP_OBJECT_COMPRESSION_NONE && (whole || (p->capabilities & ADCP_OBJECT_CAP_RANGED_READS))) {
    if (c->physical_byte_count != m->byte_count || strcmp(c->physical_sha256, m->sha256))
      return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk %zu locator disagrees with its manifest", ci);
    adcp_object_get_input gi = {
        c->object_key, c->native_version, !whole, off, len, whole ? c->physical_byte_count : len};
    rc = adcp_object_get(p, out, &gi, &ctx, err);
    if (rc == ADCP_ENOT_FOUND) return rows_missing(l, o, ci, err);
    if (rc) return stored_locator_error(rc, ci, err);
    if (out->len != (whole ? m->byte_count : len))
      return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk %zu object is shorter than recorded", ci);
    return 0; /* whole: the chunk digest is checked by the caller; ranges: segment digests */
  }
  /* physical_byte_count comes from an untrusted row: bound it by what deflate
   * can possibly produce for byte_count bytes (worst case: stored blocks). */
  if (c->physical_byte_count > m->byte_count + (m->byte_count >> 10) + 1024)
    return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "chunk %zu locator records an implausible stored size", ci);
  adcp_buf_reset(&o->phys);
  adcp_object_get_input gi = {c->object_key, c->native_version, 0, 0, 0, c->physical_byte_count};
  rc = adcp_object_get(p, &o->phys, &gi, &ctx, err);
  if (rc == ADCP_ENOT_FOUND) return rows_missing(l, o, ci, err);
  if (rc) return stored_locator_error(rc, ci, err);
  rc = adcp_object_physical_verify(out, o->phys.data, o->phys.len, c->compression, c->physical_sha256,
                                   c->physical_byte_count, m->byte_count, NULL, err);
  if (rc) return rc;
  if (!whole) {
    if (off + len > out->len) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "range beyond the chunk");
    memmove(out->data, out->data + off, (size_t)len);
    out->len = (size_t)len;
  }
  return 0;
}

typedef struct release_ctx {
  adcp_ledger_page *page;
  uint64_t ordinal, lo, hi; /* release ordinals in [lo, hi) */
} release_ctx;

static int release_line(void *vctx, const uint8_t *line, size_t n) {
  release_ctx *c = vctx;
  int rc = 0;
  if (c->ordinal >= c->lo && c->ordinal < c->hi) rc = page_add(c->page, line, n);
  c->ordinal++;
  return rc;
}

typedef struct full_ctx {
  adcp_ledger_page *page;
  adcp_ledger *l;
} full_ctx;

static int full_chunk(void *vctx, const uint8_t *bytes, size_t len, uint64_t rows, adcp_error *err) {
  (void)rows;
  full_ctx *c = vctx;
  release_ctx rc_ = {c->page, 0, 0, UINT64_MAX};
  return adcp_rows_check_lines(bytes, len, &c->l->doc, release_line, &rc_, err);
}

static int verify_opened(adcp_ledger *l, opened *o, adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err) {
  adcp_control_totals totals = {0};
  const char *tj = o->h.control_totals_json ? o->h.control_totals_json : "[]";
  int rc = adcp_totals_parse(&totals, tj, strlen(tj), err);
  if (rc) return adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "stored control totals do not parse");
  adcp_rows_hasher h;
  memset(&h, 0, sizeof h);
  const char *env_id = o->env_revision_id ? o->env_revision_id : o->h.revision_id;
  if (o->env == LEDGER_ENV_ROWS) rc = adcp_rows_hasher_init_rows(&h, o->h.row_count, err);
  else if (o->env == LEDGER_ENV_REVISION)
    rc = adcp_rows_hasher_init_envelope(&h, env_id, o->h.row_count, &totals,
                                        o->h.binding_algorithm ? o->h.binding_algorithm : ADCP_BINDING_RFC8785_JCS_V1,
                                        err);
  adcp_rows_hasher *hp = o->env == LEDGER_ENV_NONE ? NULL : &h;
  adcp_buf body;
  adcp_buf_init(&body);
  for (size_t i = 0; !rc && i < o->n; i++) {
    const adcp_chunk_manifest *m = &o->ms[i];
    if ((rc = fetch_range(&body, l, o, m, 0, 0, 1, err))) break;
    if ((rc = adcp_rows_verify_chunk(m, body.data, body.len, ADCP_VERIFY_CHUNK_DIGEST, hp, err))) break;
    if (fn && (rc = fn(ctx, body.data, body.len, m->row_count, err))) break;
  }
  if (!rc && hp) rc = adcp_rows_hasher_verify(&h, o->h.content_sha256, o->h.canonical_byte_count, err);
  adcp_rows_hasher_free(&h);
  adcp_buf_free(&body);
  adcp_totals_free(&totals);
  return adcp_ledger__map_read_error(rc, err);
}

int adcp_ledger_verify_revision(adcp_ledger *l, const char *account_id, const char *revision_id,
                                adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err) {
  /* Header invariants first (verify_header.c): one SELECT, before any byte. */
  int hrc = adcp_ledger_verify_revision_header(l, account_id, revision_id, err);
  if (hrc == ADCP_EREFERENCE_NOT_FOUND) hrc = adcp_ledger__not_found_or_quarantined(l, account_id, revision_id, err);
  if (hrc) return adcp_ledger__read_failure_recheck(l, revision_id, hrc, err);
  for (int attempt = 0;; attempt++) {
    opened o;
    int rc = open_rowset(&o, l, account_id, revision_id, err);
    if (rc) return adcp_ledger__read_failure_recheck(l, revision_id, rc, err);
    rc = verify_opened(l, &o, fn, ctx, err);
    int moved = o.moved;
    opened_free(&o);
    /* Retry a moved row set once, unless chunks were already handed out. */
    if (!(rc && moved && attempt == 0 && !fn))
      return rc ? adcp_ledger__read_failure_recheck(l, revision_id, rc, err) : 0;
  }
}

/* First chunk whose range holds ordinal (manifests are verified: contiguous). */
static size_t find_chunk(const adcp_chunk_manifest *ms, size_t n, uint64_t ordinal) {
  size_t lo = 0, hi = n;
  while (hi - lo > 1) {
    size_t mid = lo + (hi - lo) / 2;
    if (ms[mid].first_ordinal <= ordinal) lo = mid;
    else hi = mid;
  }
  return lo;
}

static int read_rows_once(adcp_ledger_page *out, adcp_ledger *l, const char *account_id, const char *revision_id,
                          uint64_t offset, uint64_t limit, int *moved, adcp_error *err);
static int read_page_opened(adcp_ledger_page *out, adcp_ledger *l, opened *op, uint64_t offset, uint64_t limit,
                            int *moved, adcp_error *err);

int adcp_ledger_read_revision_rows(adcp_ledger_page *out, adcp_ledger *l, const char *account_id,
                                   const char *revision_id, uint64_t offset, uint64_t limit, adcp_error *err) {
  int moved = 0;
  int rc = read_rows_once(out, l, account_id, revision_id, offset, limit, &moved, err);
  if (rc && moved) rc = read_rows_once(out, l, account_id, revision_id, offset, limit, &moved, err);
  if (rc) rc = adcp_ledger__read_failure_recheck(l, revision_id, rc, err);
  return rc;
}

static int read_rows_once(adcp_ledger_page *out, adcp_ledger *l, const char *account_id, const char *revision_id,
                          uint64_t offset, uint64_t limit, int *moved, adcp_error *err) {
  page_reset(out);
  if (!account_id) return adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found");
  opened o;
  int rc = open_rowset(&o, l, account_id, revision_id, err);
  if (rc) return rc;
  return read_page_opened(out, l, &o, offset, limit, moved, err);
}

/* The page read proper over an opened row set (revision or direct); frees o. */
static int read_page_opened(adcp_ledger_page *out, adcp_ledger *l, opened *op, uint64_t offset, uint64_t limit,
                            int *moved, adcp_error *err) {
  opened o = *op;
  int rc = 0;
  uint64_t total = o.h.row_count;
  out->total_rows = total;
  out->offset = offset;
  uint64_t end = (limit == 0 || limit > total - (offset < total ? offset : total)) ? total : offset + limit;
  /* A page is buffered until it verified: bound it, so no call holds a whole
   * large revision (stream those with adcp_ledger_verify_revision). */
  uint64_t page_bytes = 0;
  for (size_t ci = 0; ci < o.n; ci++)
    for (uint32_t si = 0; si < o.ms[ci].segment_count; si++) {
      const adcp_segment_manifest *sm = &o.ms[ci].segments[si];
      if (sm->first_ordinal < end && sm->first_ordinal + sm->row_count > offset) page_bytes += sm->byte_count;
    }
  if (page_bytes > l->max_page_bytes) {
    opened_free(&o);
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "page of %" PRIu64 " bytes exceeds the %" PRIu64
                          "-byte page limit: ask for fewer rows or "
                          "stream the revision (adcp_ledger_verify_revision, or `adcp-ledger read` without --limit)",
                          page_bytes, l->max_page_bytes);
  }
  if (offset == 0 && end == total) {
    /* The whole revision: verify everything, envelope included, and only
     * then hand the page over (rows are buffered until the digest matched). */
    full_ctx fc = {out, l};
    rc = verify_opened(l, &o, full_chunk, &fc, err);
    if (!rc) out->envelope_verified = o.env != LEDGER_ENV_NONE;
    else page_reset(out), out->total_rows = total;
    *moved = o.moved;
    opened_free(&o);
    return rc;
  }
  if (offset >= total) {
    opened_free(&o);
    return 0;
  }
  adcp_buf buf;
  adcp_buf_init(&buf);
  for (size_t ci = find_chunk(o.ms, o.n, offset); !rc && ci < o.n && o.ms[ci].first_ordinal < end; ci++) {
    const adcp_chunk_manifest *m = &o.ms[ci];
    uint64_t cf = m->first_ordinal, ce = cf + m->row_count;
    uint64_t lo = offset > cf ? offset : cf, hi = end < ce ? end : ce;
    /* Every segment but the last has exactly 500 rows (checked with the manifest). */
    uint32_t from = (uint32_t)((lo - cf) / ADCP_ROWS_SEGMENT_MAX_ROWS);
    uint32_t to = (uint32_t)((hi - 1 - cf) / ADCP_ROWS_SEGMENT_MAX_ROWS);
    if (to >= m->segment_count) to = m->segment_count - 1;
    const adcp_segment_manifest *sf = &m->segments[from], *st = &m->segments[to];
    uint64_t boff = sf->byte_offset, blen = st->byte_offset + st->byte_count - sf->byte_offset;
    if ((rc = fetch_range(&buf, l, &o, m, boff, blen, 0, err))) break;
    if ((rc = adcp_rows_verify_segments(m, from, to, buf.data, buf.len, err))) break;
    /* Every fetched segment verified; parse and release only the page's lines. */
    const uint8_t *p = buf.data, *e = buf.data + buf.len;
    for (uint64_t k = sf->first_ordinal; k < lo && p < e; k++)
      p = (const uint8_t *)memchr(p, '\n', (size_t)(e - p)) + 1;
    const uint8_t *q = p;
    for (uint64_t k = lo; k < hi && q < e; k++) q = (const uint8_t *)memchr(q, '\n', (size_t)(e - q)) + 1;
    release_ctx rctx = {out, lo, lo, hi};
    if ((rc = adcp_rows_check_lines(p, (size_t)(q - p), &l->doc, release_line, &rctx, err))) break;
    if (out->count != hi - offset) {
      rc = adcp_error_set(err, ADCP_ECHUNK_INTEGRITY_FAILED, "verified segments hold fewer rows than the page needs");
      break;
    }
  }
  adcp_buf_free(&buf);
  *moved = o.moved;
  opened_free(&o);
  if (rc) {
    page_reset(out);
    out->total_rows = total;
    if (rc == ADCP_ENOMEM) adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  return adcp_ledger__map_read_error(rc, err);
}

/* ---- row sets without a revision header (rowsets.c) ------------------------------ */

static int open_direct(opened *o, adcp_ledger *l, const ledger_direct *d, adcp_error *err) {
  memset(o, 0, sizeof *o);
  o->h = *d->h;
  o->h.control_totals_json = strdup(d->h->control_totals_json ? d->h->control_totals_json : "[]");
  if (!o->h.control_totals_json) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  o->rs = *d->rs;
  o->env = d->env;
  o->env_revision_id = d->envelope_revision_id;
  o->direct = 1;
  int rc = adcp_ledger__load_manifests(&o->ms, &o->n, &o->owned, l, &o->h, &o->rs, err);
  if (!rc && !strcmp(o->rs.row_binding_kind, "object")) rc = open_locators(o, l, err);
  if (rc) opened_free(o);
  return rc;
}

int adcp_ledger__direct_verify(adcp_ledger *l, const ledger_direct *d, adcp_ledger_chunk_fn fn, void *ctx, adcp_error *err) {
  for (int attempt = 0;; attempt++) {
    opened o;
    int rc = open_direct(&o, l, d, err);
    if (rc) return rc;
    rc = verify_opened(l, &o, fn, ctx, err);
    int moved = o.moved;
    opened_free(&o);
    if (!(rc && moved && attempt == 0 && !fn)) return rc;
  }
}

int adcp_ledger__direct_page(adcp_ledger_page *out, adcp_ledger *l, const ledger_direct *d, uint64_t offset,
                             uint64_t limit, adcp_error *err) {
  page_reset(out);
  for (int attempt = 0;; attempt++) {
    opened o;
    int moved = 0;
    int rc = open_direct(&o, l, d, err);
    if (rc) return rc;
    rc = read_page_opened(out, l, &o, offset, limit, &moved, err);
    if (!(rc && moved && attempt == 0)) return rc;
  }
}
