/* ledger/verify_header.c — the header invariants of one revision, checked by
 * `verify` (and every full read) in one SELECT, so one snapshot on both
 * engines and no false alarm from a concurrent commit.
 *
 * The schema prevents these states in normal operation (UNIQUE and partial
 * unique indexes, CHECKs, foreign keys, immutability triggers, the writer's
 * numbering under the account lock). A database editor can drop or bypass
 * any of them, so each one is re-checked here from the data itself:
 * finality and binding_algorithm values, gapless numbering 1..n, the
 * supersedes chain (revision 1 supersedes nothing, revision n names n-1 of the
 * same obligation, no fork), at most one official and nothing after it,
 * header-only sharing (an earlier revision of the same obligation and account
 * with the same row manifest), the row set (kind, encoding, sharing, binding,
 * chunk_count vs chunk records) and the obligation (exists, same account,
 * period_end after period_start). Every broken invariant is listed in the
 * message; the code is ROWS_INTEGRITY_FAILED (buyers see SERVICE_UNAVAILABLE). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ledger/internal.h"

#define REVS "adcp_reporting_revisions"
#define OF_OBLIGATION "FROM " REVS " x WHERE x.obligation_id = r.obligation_id"

/* Column order is read by check_row below. */
#define HEADER_INVARIANTS_SQL \
  "SELECT r.revision_number, r.finality, coalesce(r.supersedes_revision_id, ''), " \
  "coalesce(r.rows_shared_from_revision_id, ''), r.binding_algorithm, coalesce(r.row_set_id, ''), " \
  "CASE WHEN o.obligation_id IS NULL THEN 0 ELSE 1 END, coalesce(o.account_id, ''), " \
  "CASE WHEN o.period_end > o.period_start THEN 1 ELSE 0 END, " \
  "(SELECT count(*) " OF_OBLIGATION \
  "), " \
  "(SELECT count(DISTINCT x.revision_number) " OF_OBLIGATION \
  "), " \
  "(SELECT min(x.revision_number) " OF_OBLIGATION \
  "), " \
  "(SELECT max(x.revision_number) " OF_OBLIGATION \
  "), " \
  "(SELECT count(*) " OF_OBLIGATION \
  " AND x.finality = 'official'), " \
  "(SELECT count(*) " OF_OBLIGATION \
  " AND x.revision_number = r.revision_number), " \
  "(SELECT count(*) " OF_OBLIGATION \
  " AND x.revision_number > r.revision_number), " \
  "(SELECT count(*) FROM " REVS \
  " x WHERE x.supersedes_revision_id = r.revision_id), " \
  "CASE WHEN p.revision_id IS NULL THEN 0 ELSE 1 END, coalesce(p.obligation_id, ''), " \
  "coalesce(p.revision_number, 0), coalesce(p.account_id, ''), " \
  "CASE WHEN h.revision_id IS NULL THEN 0 ELSE 1 END, coalesce(h.obligation_id, ''), coalesce(h.account_id, ''), " \
  "coalesce(h.revision_number, 0), coalesce(h.row_manifest_sha256, ''), coalesce(h.row_count, -1), " \
  "r.row_manifest_sha256, r.row_count, r.account_id, r.obligation_id, " \
  "CASE WHEN s.row_set_id IS NULL THEN 0 ELSE 1 END, coalesce(s.row_set_kind, ''), coalesce(s.encoding, ''), " \
  "coalesce(s.rows_shared_from_row_set_id, ''), coalesce(s.chunk_count, 0), " \
  "(SELECT count(*) FROM adcp_reporting_row_chunks c WHERE c.row_set_id = s.row_set_id), " \
  "CASE WHEN b.row_binding_id IS NULL THEN 0 ELSE 1 END, coalesce(s.row_binding_id, ''), r.canonical_byte_count, " \
  "(SELECT count(*) " OF_OBLIGATION \
  " AND x.finality = 'official' AND x.revision_number < r.revision_number) " \
  "FROM " REVS \
  " r " \
  "LEFT JOIN adcp_reporting_obligations o ON o.obligation_id = r.obligation_id " \
  "LEFT JOIN " REVS \
  " p ON p.revision_id = r.supersedes_revision_id " \
  "LEFT JOIN " REVS \
  " h ON h.revision_id = r.rows_shared_from_revision_id " \
  "LEFT JOIN adcp_reporting_row_sets s ON s.row_set_id = coalesce(r.row_set_id, r.revision_id) " \
  "LEFT JOIN adcp_reporting_row_bindings b ON b.row_binding_id = s.row_binding_id "

static const char SQL_BY_ACCOUNT[] = HEADER_INVARIANTS_SQL "WHERE r.revision_id = $1 AND r.account_id = $2";
static const char SQL_ANY[] = HEADER_INVARIANTS_SQL "WHERE r.revision_id = $1";

/* Column positions of HEADER_INVARIANTS_SQL. */
enum {
  C_NUMBER,
  C_FINALITY,
  C_SUPERSEDES,
  C_SHARED,
  C_ALGORITHM,
  C_ROW_SET_ID,
  C_OB_EXISTS,
  C_OB_ACCOUNT,
  C_OB_PERIOD_OK,
  C_COUNT,
  C_DISTINCT,
  C_MIN,
  C_MAX,
  C_OFFICIALS,
  C_SAME_NUMBER,
  C_LATER,
  C_SUCCESSORS,
  C_PREV_EXISTS,
  C_PREV_OBLIGATION,
  C_PREV_NUMBER,
  C_PREV_ACCOUNT,
  C_SH_EXISTS,
  C_SH_OBLIGATION,
  C_SH_ACCOUNT,
  C_SH_NUMBER,
  C_SH_MANIFEST,
  C_SH_ROWS,
  C_MANIFEST,
  C_ROWS,
  C_ACCOUNT,
  C_OBLIGATION,
  C_RS_EXISTS,
  C_RS_KIND,
  C_RS_ENCODING,
  C_RS_SHARED,
  C_RS_CHUNKS,
  C_CHUNK_RECORDS,
  C_BINDING_EXISTS,
  C_BINDING_ID,
  C_BYTES,
  C_OFFICIAL_BEFORE,
};

typedef struct problems {
  adcp_buf b;
  size_t count;
} problems;

static void add(problems *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(problems *p, const char *fmt, ...) {
  char one[ADCP_ERROR_MESSAGE_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(one, sizeof one, fmt, ap);
  va_end(ap);
  /* The error message is bounded anyway; stop growing once it is full. */
  if (p->b.len < 2 * ADCP_ERROR_MESSAGE_MAX) adcp_buf_printf(&p->b, "%s%s", p->count ? "; " : "", one);
  p->count++;
}

#define T(i) adcp_sql_get_text(r, (i), NULL)
#define I(i) adcp_sql_get_int64(r, (i))

static void check_row(problems *p, adcp_sql_rows *r, const char *revision_id) {
  int64_t n = I(C_NUMBER);
  const char *fin = T(C_FINALITY), *sup = T(C_SUPERSEDES), *shared = T(C_SHARED), *algo = T(C_ALGORITHM);
  const char *account = T(C_ACCOUNT), *obligation = T(C_OBLIGATION);
  int official = !strcmp(fin, "official");

  /* Values the CHECKs constrain (a dropped CHECK must not let them through). */
  if (!official && strcmp(fin, "snapshot")) add(p, "finality '%.32s' is neither snapshot nor official", fin);
  adcp_binding_algorithm ba;
  if (adcp_binding_algorithm_parse(&ba, algo, NULL)) add(p, "binding_algorithm '%.40s' is unknown", algo);
  if (n < 1) add(p, "revision_number %" PRId64 " is below 1", n);
  if (I(C_BYTES) <= 0) add(p, "canonical_byte_count %" PRId64 " is not positive", I(C_BYTES));
  if (I(C_ROWS) < 0) add(p, "row_count %" PRId64 " is negative", I(C_ROWS));
  if (T(C_ROW_SET_ID)[0] && strcmp(T(C_ROW_SET_ID), revision_id))
    add(p, "row_set_id %.64s is not the revision ID", T(C_ROW_SET_ID));

  /* The obligation. */
  if (!I(C_OB_EXISTS)) {
    add(p, "obligation %.64s does not exist", obligation);
  } else {
    if (strcmp(T(C_OB_ACCOUNT), account)) add(p, "account differs from the account of obligation %.64s", obligation);
    if (!I(C_OB_PERIOD_OK)) add(p, "obligation %.64s has period_end not after period_start", obligation);
  }

  /* Numbering: the obligation's revisions are exactly 1..k, each once. */
  int64_t count = I(C_COUNT), lo = I(C_MIN), hi = I(C_MAX);
  if (I(C_DISTINCT) != count || lo != 1 || hi != count)
    add(p, "revision numbers of obligation %.64s are not 1..%" PRId64 " (they run %" PRId64 "..%" PRId64 ")",
        obligation, count, lo, hi);
  if (I(C_SAME_NUMBER) > 1) add(p, "revision_number %" PRId64 " is used by %" PRId64 " revisions", n, I(C_SAME_NUMBER));

  /* The supersedes chain: 1 starts it, n names n-1, no fork. */
  if (n == 1 && sup[0]) add(p, "revision 1 supersedes %.64s", sup);
  if (n > 1 && !sup[0]) add(p, "revision %" PRId64 " supersedes nothing", n);
  if (sup[0]) {
    if (!I(C_PREV_EXISTS)) add(p, "supersedes %.64s, which does not exist", sup);
    else if (strcmp(T(C_PREV_OBLIGATION), obligation) || strcmp(T(C_PREV_ACCOUNT), account))
      add(p, "supersedes %.64s of another obligation or account", sup);
    else if (I(C_PREV_NUMBER) != n - 1)
      add(p, "supersedes %.64s (number %" PRId64 "), not number %" PRId64, sup, I(C_PREV_NUMBER), n - 1);
  }
  if (I(C_SUCCESSORS) > 1) add(p, "%" PRId64 " revisions supersede it (the chain forks)", I(C_SUCCESSORS));

  /* Official is final: one per obligation, nothing after it. */
  if (I(C_OFFICIALS) > 1) add(p, "obligation %.64s has %" PRId64 " official revisions", obligation, I(C_OFFICIALS));
  if (official && (I(C_LATER) > 0 || I(C_SUCCESSORS) > 0)) add(p, "finality is official but a later revision exists");
  /* Checked from the later side too: reading the revision after an official
   * one must fail as well, not only verifying the official one. */
  if (I(C_OFFICIAL_BEFORE) > 0) add(p, "an earlier revision of obligation %.64s is already official", obligation);

  /* Header-only sharing: an earlier revision of the same obligation with the same rows. */
  if (shared[0]) {
    if (!strcmp(shared, revision_id)) add(p, "rows_shared_from names the revision itself");
    else if (!I(C_SH_EXISTS)) add(p, "rows_shared_from %.64s does not exist", shared);
    else if (strcmp(T(C_SH_OBLIGATION), obligation) || strcmp(T(C_SH_ACCOUNT), account))
      add(p, "rows_shared_from %.64s belongs to another obligation or account", shared);
    else {
      if (I(C_SH_NUMBER) >= n) add(p, "rows_shared_from %.64s is not an earlier revision", shared);
      if (strcmp(T(C_SH_MANIFEST), T(C_MANIFEST)) || I(C_SH_ROWS) != I(C_ROWS))
        add(p, "rows_shared_from %.64s has a different row manifest digest or row count", shared);
    }
  }

  /* The row set repeats the header's choices. */
  if (I(C_RS_EXISTS)) {
    if (strcmp(T(C_RS_KIND), "revision")) add(p, "row set kind is '%.32s', not revision", T(C_RS_KIND));
    if (strcmp(T(C_RS_ENCODING), "adcp_canonical_jsonl_v1"))
      add(p, "row set encoding '%.40s' is unknown", T(C_RS_ENCODING));
    if (strcmp(T(C_RS_SHARED), shared))
      add(p, "row set shares rows from '%.64s' but the header names '%.64s'", T(C_RS_SHARED), shared);
    if (I(C_RS_CHUNKS) != I(C_CHUNK_RECORDS))
      add(p, "chunk_count %" PRId64 " but %" PRId64 " chunk records", I(C_RS_CHUNKS), I(C_CHUNK_RECORDS));
    if ((I(C_ROWS) == 0) != (I(C_RS_CHUNKS) == 0))
      add(p, "row_count %" PRId64 " with chunk_count %" PRId64, I(C_ROWS), I(C_RS_CHUNKS));
    if (!I(C_BINDING_EXISTS)) add(p, "row set names binding %.64s, which does not exist", T(C_BINDING_ID));
  } else {
    add(p, "no row set is recorded for it");
  }
}

int adcp_ledger_verify_revision_header(adcp_ledger *l, const char *account_id, const char *revision_id, adcp_error *err) {
  /* The boundary rule of every read (ids.c): a malformed ID is INVALID_INPUT. */
  int rc = adcp_ledger__check_read_ids(account_id, revision_id, "revision_id", err);
  if (rc) return rc;
  adcp_sql_param prm[2] = {adcp_sql_text(revision_id), adcp_sql_text(account_id)};
  adcp_sql_rows *r;
  rc = adcp_sql_query(&r, l->conn, account_id ? SQL_BY_ACCOUNT : SQL_ANY, prm, account_id ? 2 : 1, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  if (rc <= 0) {
    adcp_sql_rows_free(r);
    return rc < 0 ? rc : adcp_error_set(err, ADCP_EREFERENCE_NOT_FOUND, "revision not found");
  }
  problems p = {.count = 0};
  adcp_buf_init(&p.b);
  check_row(&p, r, revision_id);
  adcp_sql_rows_free(r);
  rc = 0;
  if (p.count) {
    rc = adcp_buf_cstr(&p.b) ? adcp_error_set(err, ADCP_ENOMEM, "out of memory")
                             : adcp_error_set(err, ADCP_EROWS_INTEGRITY_FAILED, "header invariant%s broken: %s",
                                              p.count > 1 ? "s" : "", (const char *)p.b.data);
  }
  adcp_buf_free(&p.b);
  return rc;
}
