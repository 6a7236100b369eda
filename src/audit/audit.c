/* audit/audit.c — adcp_audit_run: per account, every leaf in order (no gap,
 * leaf hash = H(0x00 || entry digest)), every logged header re-hashed from
 * the stored row (an edited or replaced revision no longer matches its leaf;
 * a missing one is missing unless retired), every revision without a leaf,
 * the stored subtree hashes against the tree rebuilt from the leaves, and
 * the tree against every checkpoint signed by a pinned key (root at its size,
 * and a consistency proof between each pair of consecutive checkpoints).
 * Nothing in the database is trusted: a checkpoint counts only when a pinned
 * key signed it. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit/internal.h"

typedef struct retinfo {
  int64_t idx, at_us; /* a retirement leaf that parsed, and its instant */
} retinfo;

typedef struct run {
  adcp_sql_conn *conn;
  const adcp_audit_options *o;
  adcp_audit_report *rep;
  const char *account;
  int64_t window_days; /* 0: unknown */
  retinfo *rets;       /* this account's parsed retirements, leaf order */
  size_t nrets, caprets;
  int64_t newest_outside_us;
} run;

static void finding(run *x, const char *kind, int64_t idx, int64_t end, const char *entry, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
static void finding(run *x, const char *kind, int64_t idx, int64_t end, const char *entry, const char *fmt, ...) {
  char detail[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  x->rep->findings++;
  adcp_audit_finding f = {kind, x->account, idx, end, entry ? entry : "", detail};
  if (x->o->on_finding) x->o->on_finding(x->o->ctx, &f);
}

static int cmp_cp(const void *a, const void *b) {
  const adcp_audit_checkpoint *x = a, *y = b;
  return x->tree_size < y->tree_size ? -1 : x->tree_size > y->tree_size ? 1 : strcmp(x->timestamp, y->timestamp);
}

static int add_cp(adcp_audit_checkpoint **cps, size_t *n, size_t *cap, const adcp_audit_checkpoint *c, adcp_error *err) {
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 8;
    adcp_audit_checkpoint *g = realloc(*cps, nc * sizeof *g);
    if (!g) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    *cps = g, *cap = nc;
  }
  (*cps)[(*n)++] = *c;
  return 0;
}

static int check_checkpoints(run *x, const adcp_merkle_mem *mem, uint64_t n, adcp_error *err) {
  adcp_audit_checkpoint *cps = NULL;
  size_t ncp = 0, cap = 0, nt = 0;
  int rc = 0, verified = 0;
  if (!x->o->skip_stored_checkpoints) {
    adcp_sql_param p = adcp_sql_text(x->account);
    adcp_sql_rows *r = NULL;
    rc = adcp_sql_query(&r, x->conn,
                        "SELECT document FROM adcp_audit_checkpoints WHERE account_id = $1 ORDER BY "
                        "tree_size, signed_at",
                        &p, 1, err);
    size_t i = 0;
    while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
      size_t dl = 0;
      const char *doc = adcp_sql_get_text(r, 0, &dl);
      adcp_audit_checkpoint c;
      adcp_error e2 = {0};
      if (adcp_audit_checkpoint_parse(&c, doc ? doc : "", doc ? dl : 0, &e2)) {
        finding(x, "checkpoint_untrusted", -1, -1, NULL, "stored checkpoint %zu does not parse: %s", i, e2.message);
      } else if ((rc = add_cp(&cps, &ncp, &cap, &c, err))) {
        adcp_audit_checkpoint_free(&c);
      }
      i++;
    }
    adcp_sql_rows_free(r);
    if (rc == 0 || rc == 1) rc = 0;
  }
  for (size_t i = 0; !rc && i < x->o->n_extra; i++) {
    if (strcmp(x->o->extra[i].account_id, x->account)) continue;
    adcp_audit_checkpoint c = x->o->extra[i];
    c.document = NULL; /* borrowed: never freed here */
    rc = add_cp(&cps, &ncp, &cap, &c, err);
  }
  if (rc) goto out;
  /* Only what a pinned key signed counts. */
  for (size_t i = 0; i < ncp; i++) {
    adcp_error e2 = {0};
    if (adcp_audit_checkpoint_verify(&cps[i], x->o->keys, &e2)) {
      finding(x, "checkpoint_untrusted", -1, -1, NULL, "checkpoint at size %" PRIu64 " (%s): %s", cps[i].tree_size,
              cps[i].timestamp, e2.message);
      adcp_audit_checkpoint_free(&cps[i]);
      continue;
    }
    cps[nt++] = cps[i];
  }
  verified = 1;
  if (nt) qsort(cps, nt, sizeof *cps, cmp_cp); /* cps may be NULL when nothing verified */
  x->rep->checkpoints += nt;
  for (size_t i = 0; i < nt; i++) {
    int64_t at = 0;
    adcp_error e2 = {0};
    if (adcp_audit_instant_us(&at, cps[i].timestamp, &e2)) {
      finding(x, "checkpoint_untrusted", -1, -1, NULL, "checkpoint at size %" PRIu64 " has no valid timestamp",
              cps[i].tree_size);
      continue;
    }
    /* Outside ones were borrowed without their document (above). */
    if (!cps[i].document) {
      x->rep->outside_verified++;
      if (!x->rep->outside_newest_at[0] || at > x->newest_outside_us) {
        x->newest_outside_us = at;
        x->rep->outside_newest_size = cps[i].tree_size;
        snprintf(x->rep->outside_newest_at, sizeof x->rep->outside_newest_at, "%s", cps[i].timestamp);
      }
    }
    /* A signed head that covers a retirement leaf was signed after it. */
    for (size_t k = 0; k < x->nrets; k++)
      if ((uint64_t)x->rets[k].idx < cps[i].tree_size && x->rets[k].at_us > at)
        finding(x, "retirement_after_checkpoint", x->rets[k].idx, -1, NULL,
                "the retirement at leaf %" PRId64 " claims an instant later than the checkpoint of %s (size %" PRIu64
                ") that already covers it",
                x->rets[k].idx, cps[i].timestamp, cps[i].tree_size);
  }
  uint64_t good = 0; /* largest size whose checkpoint matched */
  for (size_t i = 0; !rc && i < nt; i++) {
    const adcp_audit_checkpoint *c = &cps[i];
    if (c->tree_size > n) {
      finding(x, "checkpoint_beyond_log", (int64_t)n, (int64_t)c->tree_size, NULL,
              "checkpoint of %s signed a log of %" PRIu64 " leaves; the log now has %" PRIu64 ": leaves %" PRIu64
              "..%" PRIu64 " were removed",
              c->timestamp, c->tree_size, n, n, c->tree_size - 1);
      continue;
    }
    uint8_t root[32];
    char hex[65];
    if ((rc = adcp_merkle_root(root, c->tree_size, adcp_merkle_mem_subtree, (void *)mem, err))) break;
    adcp_auditlog__to_hex(hex, root);
    if (strcmp(hex, c->root_hash)) {
      finding(x, "checkpoint_mismatch", (int64_t)good, (int64_t)c->tree_size, NULL,
              "the log does not reproduce the checkpoint of %s (size %" PRIu64 "): a leaf in %" PRIu64 "..%" PRIu64
              " was rewritten",
              c->timestamp, c->tree_size, good, c->tree_size - 1);
    } else {
      good = c->tree_size;
    }
  }
  /* Consistency between consecutive checkpoints (distinct sizes). */
  for (size_t i = 1; !rc && i < nt; i++) {
    const adcp_audit_checkpoint *a = &cps[i - 1], *b = &cps[i];
    if (a->tree_size == 0 || b->tree_size > n) continue;
    uint8_t ra[32], rb[32];
    if (adcp_auditlog__hex32(ra, a->root_hash, err) || adcp_auditlog__hex32(rb, b->root_hash, err)) continue;
    int ok;
    if (a->tree_size == b->tree_size) {
      ok = !memcmp(ra, rb, 32);
    } else {
      adcp_hash32 proof[ADCP_AUDIT_MAX_PATH];
      size_t np = 0;
      if ((rc = adcp_merkle_consistency_proof(proof, &np, a->tree_size, b->tree_size, adcp_merkle_mem_subtree,
                                              (void *)mem, err)))
        break;
      ok = adcp_merkle_verify_consistency(a->tree_size, b->tree_size, ra, rb, proof, np);
    }
    x->rep->consistency_proofs++;
    if (!ok)
      finding(x, "checkpoints_inconsistent", (int64_t)a->tree_size, (int64_t)b->tree_size, NULL,
              "checkpoints of %s (size %" PRIu64 ") and %s (size %" PRIu64 ") are not one append-only history",
              a->timestamp, a->tree_size, b->timestamp, b->tree_size);
  }
out:
  /* Untrusted ones were freed as they were dropped; on an early exit none was. */
  for (size_t i = 0; i < (verified ? nt : ncp); i++) adcp_audit_checkpoint_free(&cps[i]);
  free(cps);
  return rc;
}

static int check_nodes(run *x, const adcp_merkle_mem *mem, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(x->account);
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, x->conn, "SELECT level, node_index, hash FROM adcp_audit_log_nodes WHERE account_id = $1",
                          &p, 1, err);
  if (rc) return rc;
  uint64_t seen = 0, expected = 0;
  for (unsigned k = 1; k < mem->n_levels; k++) expected += mem->counts[k];
  while ((rc = adcp_sql_next(r, err)) == 1) {
    int64_t lv = adcp_sql_get_int64(r, 0), ix = adcp_sql_get_int64(r, 1);
    const char *h = adcp_sql_get_text(r, 2, NULL);
    char want[65];
    if (lv < 1 || lv >= (int64_t)mem->n_levels || ix < 0 || (uint64_t)ix >= mem->counts[lv]) {
      finding(x, "node_mismatch", -1, -1, NULL, "stored node level %" PRId64 " index %" PRId64 " lies outside the log",
              lv, ix);
      continue;
    }
    seen++;
    adcp_auditlog__to_hex(want, mem->levels[lv][ix]);
    if (!h || strcmp(h, want))
      finding(x, "node_mismatch", ix << lv, (ix + 1) << lv, NULL,
              "stored node level %" PRId64 " index %" PRId64 " differs from the leaves below it", lv, ix);
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  if (seen < expected)
    finding(x, "node_mismatch", -1, -1, NULL, "%" PRIu64 " stored subtree hashes are missing", expected - seen);
  return 0;
}

/* ---- per-account state of the set comparison ------------------------------------------ */

enum { RL_MATCH = 0, RL_EDITED = 1, RL_ABSENT = 2 };

/* One revision leaf, compactly (IDs as 64-bit hashes: a collision only ever
 * merges two groups, which the exact look-up below splits again, or adds an
 * order comparison, which can raise a finding but never hide one). */
typedef struct revleaf {
  uint64_t idh, obh;
  int64_t idx, number;
  int64_t listed_by, retired_by; /* retirement leaf listing it / validly retiring it, else -1 */
  int status;
} revleaf;

/* A sort key: (hash, leaf index) -> position in acct.rl. */
typedef struct ord {
  uint64_t h;
  int64_t idx;
  size_t pos;
} ord;

static int cmp_ord(const void *a, const void *b) {
  const ord *x = a, *y = b;
  if (x->h != y->h) return x->h < y->h ? -1 : 1;
  return x->idx < y->idx ? -1 : x->idx > y->idx;
}

typedef struct acct {
  revleaf *rl;
  size_t n, cap;
  ord *byob, *byid; /* positions sorted by (obh, idx) and (idh, idx) */
  int64_t *retidx;  /* retirement leaves whose document hashes to the leaf */
  size_t nret, capret;
} acct;

static revleaf *find_leaf(acct *a, int64_t idx) {
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a->rl[mid].idx < idx) lo = mid + 1;
    else hi = mid;
  }
  return lo < a->n && a->rl[lo].idx == idx ? &a->rl[lo] : NULL;
}

/* A stored leaf by index (kind, ID, obligation, digest); *found = 0 when none. */
typedef struct leafrow {
  char kind[16], id[256], obligation[256], entry[65];
  char *doc; /* entry_document (NULL when none); caller frees with leafrow_free */
} leafrow;
static int load_leaf(leafrow *out, int *found, run *x, int64_t idx, int want_doc, adcp_error *err) {
  memset(out, 0, sizeof *out);
  adcp_sql_param p[2] = {adcp_sql_text(x->account), adcp_sql_int64(idx)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, x->conn,
                          "SELECT entry_kind, entry_id, coalesce(obligation_id, ''), entry_sha256, entry_document "
                          "FROM adcp_audit_log_leaves WHERE account_id = $1 AND leaf_index = $2",
                          p, 2, err);
  if (rc) return rc;
  rc = adcp_sql_next(r, err);
  *found = rc == 1;
  if (rc == 1) {
    snprintf(out->kind, sizeof out->kind, "%s", adcp_sql_get_text(r, 0, NULL));
    snprintf(out->id, sizeof out->id, "%s", adcp_sql_get_text(r, 1, NULL));
    snprintf(out->obligation, sizeof out->obligation, "%s", adcp_sql_get_text(r, 2, NULL));
    snprintf(out->entry, sizeof out->entry, "%s", adcp_sql_get_text(r, 3, NULL));
    const char *d = adcp_sql_get_text(r, 4, NULL);
    if (want_doc && d && !(out->doc = strdup(d))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

static void leafrow_free(leafrow *l) {
  free(l->doc);
  l->doc = NULL;
}

static int header_instant(int64_t *out, const adcp_json_doc *d, const char *k) {
  char t[40];
  adcp_error e = {0};
  return adcp_auditlog__member_str(t, sizeof t, d, 0, k, 1) ? -1 : adcp_audit_instant_us(out, t, &e);
}

/* Reads the logged header of a revision leaf: its document must hash to the
 * leaf's digest and be an adcp-header-v1 object of this account, obligation
 * and revision. NULL when so, else why not. */
static const char *logged_header(adcp_json_doc *hd, int64_t *recorded, int64_t *pstart, int64_t *pend, const leafrow *lr,
                                 const char *account, const adcp_audit_retirement_doc *doc, const char *rev) {
  if (!lr->doc) return "holds no header object (logged before the log kept them)";
  char h[65];
  adcp_error e = {0};
  if (adcp_sha256_hex(h, lr->doc, strlen(lr->doc), &e) || strcmp(h, lr->entry))
    return "holds a document that does not hash to the leaf";
  if (adcp_json_parse(hd, lr->doc, strlen(lr->doc), NULL, &e) || adcp_json_at(hd, 0)->type != ADCP_JSON_OBJECT)
    return "is not JSON";
  uint32_t pr = adcp_json_get(hd, 0, "profile"), ac = adcp_json_get(hd, 0, "account_id");
  uint32_t ob = adcp_json_get(hd, 0, "obligation_id"), rv = adcp_json_get(hd, 0, "revision_id");
  if (!pr || !adcp_json_str_eq(hd, pr, ADCP_AUDIT_HEADER_PROFILE) || !ac || !adcp_json_str_eq(hd, ac, account) || !ob ||
      !adcp_json_str_eq(hd, ob, doc->obligation_id) || !rv || !adcp_json_str_eq(hd, rv, rev))
    return "is not this account's, obligation's and revision's adcp-header-v1 object";
  if (header_instant(recorded, hd, "recorded_at") || header_instant(pstart, hd, "period_start") ||
      header_instant(pend, hd, "period_end"))
    return "has no valid recorded_at or period";
  return NULL;
}

/* One retirement leaf (docs/trust.md, "Retirement evidence"): the document
 * parses strictly; each entry is a logged revision leaf of this account and
 * obligation, before the retirement, with that digest; the retirement was
 * due by the logged headers under the auditor's window; it lists every
 * logged revision of the obligation not retired before. Only a retirement
 * without any finding retires what it lists. */
static int check_retirement(run *x, acct *a, int64_t ridx, adcp_error *err) {
  adcp_sql_param p[2] = {adcp_sql_text(x->account), adcp_sql_int64(ridx)};
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, x->conn,
                          "SELECT entry_document, entry_id FROM adcp_audit_log_leaves WHERE account_id = $1 AND "
                          "leaf_index = $2",
                          p, 2, err);
  if (rc) return rc;
  adcp_audit_retirement_doc doc;
  memset(&doc, 0, sizeof doc);
  char rid[256] = "";
  int parsed = 0;
  adcp_error e2 = {0};
  if ((rc = adcp_sql_next(r, err)) == 1) {
    size_t dl = 0;
    const char *d = adcp_sql_get_text(r, 0, &dl);
    snprintf(rid, sizeof rid, "%s", adcp_sql_get_text(r, 1, NULL));
    parsed = !adcp_audit_retirement_parse(&doc, d ? d : "", d ? dl : 0, &e2);
    rc = 0;
  }
  adcp_sql_rows_free(r);
  if (rc < 0) return rc;
  if (!parsed) {
    finding(x, "retirement_malformed", ridx, -1, rid, "retirement leaf %" PRId64 " does not prove anything: %s", ridx,
            e2.message);
    return 0;
  }
  size_t findings0 = (size_t)x->rep->findings;
  if (strcmp(doc.account_id, x->account))
    finding(x, "retirement_mismatch", ridx, -1, rid, "retirement leaf %" PRId64 " names another account", ridx);
  if (x->nrets == x->caprets) {
    size_t nc = x->caprets ? x->caprets * 2 : 16;
    retinfo *g = realloc(x->rets, nc * sizeof *g);
    if (!g) {
      adcp_audit_retirement_doc_free(&doc);
      return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    }
    x->rets = g, x->caprets = nc;
  }
  x->rets[x->nrets++] = (retinfo){ridx, doc.retired_at_us};
  int64_t due = doc.retired_at_us - x->window_days * 86400LL * 1000000LL;
  if (x->window_days <= 0)
    finding(x, "retirement_unchecked", ridx, -1, rid,
            "retirement leaf %" PRId64
            ": no retention window is configured on this host "
            "(retention.status_retention_days), so it cannot be shown due",
            ridx);
  adcp_json_doc hd;
  adcp_json_doc_init(&hd);
  for (size_t i = 0; !rc && i < doc.n_revisions; i++) {
    const adcp_audit_retired_revision *e = &doc.revisions[i];
    leafrow lr;
    int found = 0;
    revleaf *rl = e->leaf_index < (uint64_t)ridx ? find_leaf(a, (int64_t)e->leaf_index) : NULL;
    memset(&lr, 0, sizeof lr);
    if (rl && (rc = load_leaf(&lr, &found, x, rl->idx, 1, err))) break;
    if (!found || strcmp(lr.kind, "revision") || strcmp(lr.id, e->revision_id) || strcmp(lr.entry, e->header_sha256) ||
        strcmp(lr.obligation, doc.obligation_id)) {
      finding(x, "retirement_mismatch", ridx, -1, e->revision_id,
              "retirement leaf %" PRId64 " lists revision %.100s as leaf %" PRIu64
              ", which is not an earlier revision leaf of this obligation with that digest",
              ridx, e->revision_id, e->leaf_index);
      leafrow_free(&lr);
      continue;
    }
    if (rl->listed_by >= 0) {
      finding(x, "retirement_mismatch", ridx, -1, e->revision_id,
              "retirement leaf %" PRId64 " lists leaf %" PRId64 ", already retired by leaf %" PRId64, ridx, rl->idx,
              rl->listed_by);
      leafrow_free(&lr);
      continue;
    }
    rl->listed_by = ridx;
    /* The logged header: the leaf's document, bound by the leaf's digest. */
    int64_t rec = 0, pend = 0, pstart = 0;
    const char *why = logged_header(&hd, &rec, &pstart, &pend, &lr, x->account, &doc, e->revision_id);
    leafrow_free(&lr);
    if (why) {
      finding(x, "retirement_unchecked", ridx, -1, e->revision_id,
              "retirement leaf %" PRId64 ": the logged header of leaf %" PRId64
              " %s, so the retirement cannot be "
              "shown due",
              ridx, rl->idx, why);
      continue;
    }
    if (pend != doc.period_end_us || pstart != doc.period_start_us)
      finding(x, "retirement_mismatch", ridx, -1, e->revision_id,
              "retirement leaf %" PRId64 " names another period than the logged header of leaf %" PRId64, ridx, rl->idx);
    /* Due or not by the logged header, whatever period the document names. */
    if (x->window_days > 0 && (pend > due || rec > due))
      finding(x, "retirement_premature", ridx, -1, e->revision_id,
              "retirement leaf %" PRId64 " (%s) retired revision %.100s, whose logged header (leaf %" PRId64
              ") was not %" PRId64 " days past its period end and recorded_at yet",
              ridx, doc.retired_at, e->revision_id, rl->idx, x->window_days);
  }
  adcp_json_doc_free(&hd);
  /* Every logged revision of the obligation before it, not retired earlier. */
  uint64_t obh = adcp_audit__fnv(doc.obligation_id);
  size_t lo = 0, hi = a->n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (a->byob[mid].h < obh) lo = mid + 1;
    else hi = mid;
  }
  for (size_t k = lo; !rc && k < a->n && a->byob[k].h == obh && a->byob[k].idx < ridx; k++) {
    revleaf *rl = &a->rl[a->byob[k].pos];
    if (rl->listed_by >= 0) continue;
    leafrow lr;
    int found = 0;
    if ((rc = load_leaf(&lr, &found, x, rl->idx, 0, err))) break;
    if (found && !strcmp(lr.obligation, doc.obligation_id))
      finding(x, "retirement_unlisted", ridx, -1, lr.id,
              "retirement leaf %" PRId64 " of obligation %.100s omits its logged revision %.100s (leaf %" PRId64 ")",
              ridx, doc.obligation_id, lr.id, rl->idx);
  }
  if (!rc && x->rep->findings == findings0)
    for (size_t i = 0; i < doc.n_revisions; i++) {
      revleaf *rl = find_leaf(a, (int64_t)doc.revisions[i].leaf_index);
      if (rl && rl->listed_by == ridx) rl->retired_by = ridx;
    }
  adcp_audit_retirement_doc_free(&doc);
  return rc;
}

typedef struct member {
  size_t pos;
  leafrow lr;
} member;

static int cmp_member(const void *a, const void *b) {
  const member *x = a, *y = b;
  int c = strcmp(x->lr.id, y->lr.id);
  return c ? c : x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Whether a revision ID lives in another account (a leaf of ours naming it). */
static int foreign(int *yes, run *x, const char *id, adcp_error *err) {
  adcp_sql_param p = adcp_sql_text(id);
  char acc[256];
  int found = 0;
  int rc = adcp_sql_query_text(acc, sizeof acc, &found, x->conn,
                               "SELECT account_id FROM adcp_reporting_revisions WHERE revision_id = $1", &p, 1, err);
  *yes = !rc && found && strcmp(acc, x->account);
  return rc;
}

/* One exact group: the leaves of one revision ID, in leaf order. */
static int judge_group(run *x, acct *a, member *m, size_t k, adcp_error *err) {
  int rc = 0;
  for (size_t j = 0; !rc && j < k; j++) {
    const revleaf *l = &a->rl[m[j].pos], *next = j + 1 < k ? &a->rl[m[j + 1].pos] : NULL;
    const char *id = m[j].lr.id;
    int retired = l->retired_by >= 0 && (!next || l->retired_by < next->idx);
    if (retired && (l->status == RL_ABSENT || next)) {
      x->rep->retired++; /* gone, or an ID retired and committed again later */
    } else if (l->status == RL_ABSENT) {
      int other = 0;
      if ((rc = foreign(&other, x, id, err)) == 0 && other)
        finding(x, "leaf_foreign", l->idx, -1, id,
                "leaf %" PRId64 " names revision %.100s, which belongs to another account", l->idx, id);
      else if (!rc)
        finding(x, "revision_missing", l->idx, -1, id,
                "revision %.100s (leaf %" PRId64 ") is gone from the database and no retirement covers it", id, l->idx);
    } else if (!next && retired) {
      finding(x, "revision_unlogged", l->idx, -1, id,
              "revision %.100s is stored, but its leaf %" PRId64
              " was retired: it was inserted again around the "
              "commit path",
              id, l->idx);
    } else if (!retired && l->status == RL_EDITED) {
      char now[65] = "";
      adcp_error e2 = {0};
      adcp_audit_header_sha256(now, x->conn, id, &e2);
      finding(x, "header_edited", l->idx, -1, id,
              "revision %.100s no longer hashes to its leaf (stored header %.12s…, leaf %.12s…): a header field was "
              "edited or the revision was replaced",
              id, now, m[j].lr.entry);
    }
    if (!rc && next && !retired)
      finding(x, "leaf_duplicate", next->idx, -1, id,
              "leaf %" PRId64 " names revision %.100s again (already leaf %" PRId64 ", which no retirement covers)",
              next->idx, id, l->idx);
  }
  return rc;
}

static int judge_leaves(run *x, acct *a, adcp_error *err) {
  int rc = 0;
  member *m = NULL;
  size_t capm = 0;
  for (size_t i = 0; !rc && i < a->n;) {
    size_t j = i + 1;
    while (j < a->n && a->byid[j].h == a->byid[i].h) j++;
    const revleaf *l = &a->rl[a->byid[i].pos];
    if (j == i + 1 && l->status == RL_MATCH && l->retired_by < 0) { /* the common case: nothing to read */
      i = j;
      continue;
    }
    if (j - i > capm) {
      capm = j - i;
      member *g = realloc(m, capm * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      m = g;
    }
    size_t k = 0;
    for (size_t t = i; !rc && t < j; t++) {
      int found = 0;
      m[k].pos = a->byid[t].pos;
      if ((rc = load_leaf(&m[k].lr, &found, x, a->rl[m[k].pos].idx, 0, err)) == 0 && found) k++;
    }
    qsort(m, k, sizeof *m, cmp_member);
    for (size_t s0 = 0; !rc && s0 < k;) {
      size_t s1 = s0 + 1;
      while (s1 < k && !strcmp(m[s1].lr.id, m[s0].lr.id)) s1++;
      rc = judge_group(x, a, m + s0, s1 - s0, err);
      s0 = s1;
    }
    i = j;
  }
  free(m);
  /* Within an obligation, verified revision numbers rise with the leaf index. */
  for (size_t i = 1; !rc && i < a->n; i++) {
    const revleaf *p = &a->rl[a->byob[i - 1].pos], *q = &a->rl[a->byob[i].pos];
    if (p->obh == q->obh && p->status == RL_MATCH && q->status == RL_MATCH && p->retired_by < 0 && q->retired_by < 0 &&
        q->number <= p->number)
      finding(x, "order_broken", q->idx, -1, NULL,
              "leaf %" PRId64 " logs revision number %" PRId64 " after leaf %" PRId64 " logged number %" PRId64
              " of the same obligation",
              q->idx, q->number, p->idx, p->number);
  }
  return rc;
}

static int audit_account(run *x, adcp_error *err) {
  adcp_buf sql, scratch;
  adcp_buf_init(&sql);
  adcp_buf_init(&scratch);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_hash32 *leaves = NULL;
  size_t cap = 0;
  uint64_t n = 0;
  acct a;
  memset(&a, 0, sizeof a);
  x->nrets = 0;
  adcp_merkle_mem mem;
  memset(&mem, 0, sizeof mem);
  int rc = 0;
  /* A revision leaf names a revision of the leaf's own account only (issue 25
   * item 5): the headers are this account's. A revision leaf's document is
   * never read here (its header is rehashed from the stored columns), so it
   * is not shipped: it was two thirds of each row's width. */
  adcp_audit_hdrmap hm = {0};
  rc = adcp_audit__load_headers(&hm, x->conn, x->account, &scratch, &doc, err);
  if (!rc && (adcp_buf_append_str(&sql,
                                  "SELECT l.leaf_index, l.entry_kind, l.entry_id, l.entry_profile, "
                                  "l.entry_sha256, l.leaf_hash, CASE WHEN l.entry_kind = 'revision' THEN NULL "
                                  "ELSE l.entry_document END, coalesce(l.obligation_id, '') FROM "
                                  "adcp_audit_log_leaves l WHERE l.account_id = $1 ORDER BY l.leaf_index") ||
              adcp_buf_cstr(&sql)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text(x->account);
  adcp_sql_rows *r = NULL;
  /* PostgreSQL costs the primary key's index scan above a sort of the
   * account's leaves, and the sort returns nothing until it is done (it
   * spilled to disk at 20,000 leaves): in a transaction of its own the
   * leaves stream in index order as they are read. */
  int own_txn = 0;
  if (!rc && adcp_sql_dialect_of(x->conn) == ADCP_SQL_POSTGRES && !adcp_sql_in_transaction(x->conn)) {
    rc = adcp_sql_begin(x->conn, 0, err);
    if (!rc) own_txn = 1, rc = adcp_sql_exec(x->conn, "SET LOCAL enable_sort = off", NULL, 0, err);
  }
  if (!rc) rc = adcp_sql_query_stream(&r, x->conn, (const char *)sql.data, &p, 1, err);
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    rc = 0;
    int64_t idx = adcp_sql_get_int64(r, 0);
    const char *kind = adcp_sql_get_text(r, 1, NULL), *id = adcp_sql_get_text(r, 2, NULL);
    const char *profile = adcp_sql_get_text(r, 3, NULL), *entry = adcp_sql_get_text(r, 4, NULL);
    const char *lh = adcp_sql_get_text(r, 5, NULL);
    if (idx != (int64_t)n) {
      finding(x, "log_gap", (int64_t)n, idx, id, "leaf %" PRIu64 " is missing: the next stored leaf is %" PRId64, n, idx);
    }
    if (n == cap) {
      cap = cap ? cap * 2 : 1024;
      adcp_hash32 *g = realloc(leaves, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
        break;
      }
      leaves = g;
    }
    uint8_t dg[32];
    adcp_error e2 = {0};
    if (adcp_auditlog__hex32(dg, entry, &e2)) memset(dg, 0, 32);
    adcp_merkle_leaf_hash(leaves[n], dg, 32);
    char want[65];
    adcp_auditlog__to_hex(want, leaves[n]);
    if (!lh || strcmp(lh, want))
      finding(x, "leaf_corrupt", idx, -1, id, "stored leaf hash is not H(0x00 || entry digest)");
    x->rep->leaves++;
    if (!strcmp(kind, "revision")) {
      if (strcmp(profile, ADCP_AUDIT_HEADER_PROFILE))
        finding(x, "leaf_corrupt", idx, -1, id, "revision leaf with profile %.40s", profile);
      if (a.n == a.cap) {
        a.cap = a.cap ? a.cap * 2 : 1024;
        revleaf *g = realloc(a.rl, a.cap * sizeof *g);
        if (!g) {
          rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
          break;
        }
        a.rl = g;
      }
      revleaf *l = &a.rl[a.n++];
      *l = (revleaf){adcp_audit__fnv(id), adcp_audit__fnv(adcp_sql_get_text(r, 7, NULL)), idx, 0, -1, -1, RL_ABSENT};
      adcp_audit_hdr *h = adcp_audit__hdrmap_find(&hm, id, dg);
      if (h) {
        char hx[65];
        adcp_auditlog__to_hex(hx, h->digest);
        h->seen = 1;
        x->rep->headers++;
        l->status = strcmp(hx, entry) ? RL_EDITED : RL_MATCH;
        /* A verified header's obligation and number (the leaf's own columns are not hashed). */
        if (l->status == RL_MATCH) l->obh = h->obh, l->number = h->number;
      }
    } else {
      const char *docu = adcp_sql_get_text(r, 6, NULL);
      char h[65] = "";
      if (docu) adcp_sha256_hex(h, docu, strlen(docu), &e2);
      if (!docu || strcmp(h, entry) || strcmp(kind, "retirement")) {
        finding(x, "leaf_corrupt", idx, -1, id, "retirement record does not hash to its leaf");
      } else {
        if (a.nret == a.capret) {
          a.capret = a.capret ? a.capret * 2 : 16;
          int64_t *g = realloc(a.retidx, a.capret * sizeof *g);
          if (!g) {
            rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
            break;
          }
          a.retidx = g;
        }
        a.retidx[a.nret++] = idx;
      }
    }
    n++;
  }
  adcp_sql_rows_free(r);
  r = NULL;
  if (own_txn) {
    adcp_error e3 = {0};
    if (adcp_sql_rollback(x->conn, &e3) && (rc == 0 || rc == 1)) rc = adcp_error_set(err, e3.code, "%s", e3.message);
  }
  size_t unseen = 0;
  for (size_t i = 0; i < hm.cap; i++) unseen += hm.slot[i].used && !hm.slot[i].seen;
  adcp_audit__hdrmap_free(&hm);
  if (rc == 1) rc = 0;
  if (!rc && a.n && (!(a.byob = malloc(a.n * sizeof *a.byob)) || !(a.byid = malloc(a.n * sizeof *a.byid))))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc && a.n) {
    for (size_t i = 0; i < a.n; i++) {
      a.byob[i] = (ord){a.rl[i].obh, a.rl[i].idx, i};
      a.byid[i] = (ord){a.rl[i].idh, a.rl[i].idx, i};
    }
    qsort(a.byob, a.n, sizeof *a.byob, cmp_ord);
    qsort(a.byid, a.n, sizeof *a.byid, cmp_ord);
  }
  for (size_t i = 0; !rc && i < a.nret; i++) rc = check_retirement(x, &a, a.retidx[i], err);
  if (!rc) rc = judge_leaves(x, &a, err);
  /* Every stored revision has a leaf in its own account's log: compared as
   * sets on every run, never only when the counts differ (issue 25 item 3):
   * the headers above against the leaves, and only when some header had no
   * leaf does the anti-join run, for the findings in their order. */
  if (!rc && unseen) {
    rc = adcp_sql_query(&r, x->conn,
                        "SELECT r.revision_id FROM adcp_reporting_revisions r WHERE r.account_id = $1 AND NOT EXISTS "
                        "(SELECT 1 FROM adcp_audit_log_leaves l WHERE l.entry_kind = 'revision' AND l.entry_id = "
                        "r.revision_id AND l.account_id = r.account_id) ORDER BY r.recorded_at, r.revision_id",
                        &p, 1, err);
    while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
      rc = 0;
      const char *id = adcp_sql_get_text(r, 0, NULL);
      finding(x, "revision_unlogged", -1, -1, id,
              "revision %s has no leaf in the account's log (inserted around the commit path, or committed before "
              "migration 0009: see checkpoint --adopt-unlogged)",
              id);
    }
    adcp_sql_rows_free(r);
    if (rc == 1 || rc == 0) rc = 0;
  }
  /* Signed history of an account whose log is gone altogether. */
  if (!rc && n == 0) {
    char cnt[32] = "0";
    int found = 0;
    rc = adcp_sql_query_text(cnt, sizeof cnt, &found, x->conn,
                             "SELECT max(tree_size) FROM adcp_audit_checkpoints WHERE account_id = $1 AND tree_size > 0",
                             &p, 1, err);
    if (!rc && found && strcmp(cnt, "0") && cnt[0])
      finding(x, "log_missing", 0, -1, NULL,
              "stored checkpoints sign a log of up to %s leaves; the account has no leaf left", cnt);
  }
  if (!rc) rc = adcp_merkle_mem_build(&mem, leaves, n, err);
  if (!rc) rc = check_nodes(x, &mem, err);
  /* Without a pinned key no checkpoint can be trusted, so none is checked. */
  if (!rc && x->o->keys && x->o->keys->count) rc = check_checkpoints(x, &mem, n, err);
  adcp_merkle_mem_free(&mem);
  free(leaves);
  free(a.rl), free(a.byob), free(a.byid), free(a.retidx);
  adcp_json_doc_free(&doc);
  adcp_buf_free(&sql);
  adcp_buf_free(&scratch);
  return rc;
}

static int has_id(char **ids, size_t n, const char *id) {
  for (size_t i = 0; i < n; i++)
    if (!strcmp(ids[i], id)) return 1;
  return 0;
}

/* Accounts only stored checkpoints know (their log and revisions deleted). */
static int checkpoint_accounts(char ***out, size_t *count, adcp_sql_conn *conn, adcp_error *err) {
  *out = NULL, *count = 0;
  adcp_sql_rows *r;
  int rc = adcp_sql_query(&r, conn,
                          "SELECT DISTINCT c.account_id FROM adcp_audit_checkpoints c WHERE NOT EXISTS (SELECT 1 FROM "
                          "adcp_audit_log_leaves l WHERE l.account_id = c.account_id) ORDER BY 1",
                          NULL, 0, err);
  if (rc) return rc;
  while ((rc = adcp_sql_next(r, err)) == 1) {
    char **g = realloc(*out, (*count + 1) * sizeof *g);
    if (!g || !(g[*count] = strdup(adcp_sql_get_text(r, 0, NULL)))) {
      if (g) *out = g;
      rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
      break;
    }
    *out = g;
    (*count)++;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

int adcp_audit_run(adcp_audit_report *out, adcp_sql_conn *conn, const adcp_audit_options *o, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!o || (o->version < 1 || o->version > ADCP_AUDIT_OPTIONS_VERSION))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "audit: unknown options version");
  char **accounts = NULL, **only_cp = NULL;
  size_t na = 0, nc = 0;
  int rc = 0;
  if (o->account_id) {
    accounts = calloc(1, sizeof *accounts);
    if (!accounts || !(accounts[0] = strdup(o->account_id))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    else na = 1;
  } else {
    rc = adcp_audit_list_accounts(&accounts, &na, conn, err);
    if (!rc) rc = checkpoint_accounts(&only_cp, &nc, conn, err);
  }
  run x = {conn, o, out, "", o->version >= ADCP_AUDIT_OPTIONS_VERSION_RETENTION ? o->retention_days : 0, NULL, 0, 0, 0};
  for (size_t i = 0; o->version >= ADCP_AUDIT_OPTIONS_VERSION_RETENTION && i < o->n_problems; i++)
    finding(&x, "checkpoint_unreadable", -1, -1, o->problems[i].key, "checkpoint object %.300s: %s", o->problems[i].key,
            o->problems[i].detail);
  for (size_t i = 0; !rc && i < na; i++) {
    x.account = accounts[i];
    out->accounts++;
    rc = audit_account(&x, err);
  }
  for (size_t i = 0; !rc && i < nc; i++) {
    if (has_id(accounts, na, only_cp[i])) continue;
    x.account = only_cp[i];
    out->accounts++;
    rc = audit_account(&x, err);
  }
  /* Accounts only an outside checkpoint knows (the whole log was deleted). */
  for (size_t i = 0; !rc && !o->account_id && i < o->n_extra; i++) {
    int known = has_id(accounts, na, o->extra[i].account_id) || has_id(only_cp, nc, o->extra[i].account_id);
    for (size_t j = 0; j < i && !known; j++) known = !strcmp(o->extra[j].account_id, o->extra[i].account_id);
    if (known) continue;
    x.account = o->extra[i].account_id;
    out->accounts++;
    rc = audit_account(&x, err);
  }
  free(x.rets);
  out->mode = !o->keys || !o->keys->count ? ADCP_AUDIT_MODE_NO_KEY
              : out->outside_verified     ? ADCP_AUDIT_MODE_OUTSIDE
                                          : ADCP_AUDIT_MODE_PINNED;
  adcp_audit_ids_free(accounts, na);
  adcp_audit_ids_free(only_cp, nc);
  return rc;
}
