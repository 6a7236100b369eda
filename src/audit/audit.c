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

typedef struct run {
  adcp_sql_conn *conn;
  const adcp_audit_options *o;
  adcp_audit_report *rep;
  const char *account;
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

#define PG_TS(c) "to_char(" c " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"

typedef struct missing {
  char id[256];
  char obligation[256];
  int64_t leaf;
  int edited;          /* 1: present but no longer hashing to the leaf */
  char now[65], entry[65];
} missing;

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
    rc = adcp_sql_query(&r, x->conn, "SELECT document FROM adcp_audit_checkpoints WHERE account_id = $1 ORDER BY "
                        "tree_size, signed_at", &p, 1, err);
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
  qsort(cps, nt, sizeof *cps, cmp_cp);
  x->rep->checkpoints += nt;
  uint64_t good = 0; /* largest size whose checkpoint matched */
  for (size_t i = 0; !rc && i < nt; i++) {
    const adcp_audit_checkpoint *c = &cps[i];
    if (c->tree_size > n) {
      finding(x, "checkpoint_beyond_log", (int64_t)n, (int64_t)c->tree_size, NULL,
              "checkpoint of %s signed a log of %" PRIu64 " leaves; the log now has %" PRIu64
              ": leaves %" PRIu64 "..%" PRIu64 " were removed",
              c->timestamp, c->tree_size, n, n, c->tree_size - 1);
      continue;
    }
    uint8_t root[32];
    char hex[65];
    if ((rc = adcp_merkle_root(root, c->tree_size, adcp_merkle_mem_subtree, (void *)mem, err))) break;
    audit_to_hex(hex, root);
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
    if (audit_hex32(ra, a->root_hash, err) || audit_hex32(rb, b->root_hash, err)) continue;
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
      finding(x, "node_mismatch", -1, -1, NULL, "stored node level %" PRId64 " index %" PRId64 " lies outside the log", lv, ix);
      continue;
    }
    seen++;
    audit_to_hex(want, mem->levels[lv][ix]);
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

static int audit_account(run *x, adcp_error *err) {
  adcp_sql_dialect d = adcp_sql_dialect_of(x->conn);
  adcp_buf sql, scratch;
  adcp_buf_init(&sql);
  adcp_buf_init(&scratch);
  adcp_json_doc doc;
  adcp_json_doc_init(&doc);
  adcp_hash32 *leaves = NULL;
  size_t cap = 0;
  uint64_t n = 0;
  missing *miss = NULL;
  size_t nmiss = 0, capmiss = 0;
  adcp_merkle_mem mem;
  memset(&mem, 0, sizeof mem);
  int rc = 0;
  if (adcp_buf_printf(&sql,
                      "SELECT l.leaf_index, l.entry_kind, l.entry_id, l.entry_profile, l.entry_sha256, l.leaf_hash, "
                      "l.entry_document, coalesce(l.obligation_id, ''), r.revision_id IS NOT NULL, %s "
                      "FROM adcp_audit_log_leaves l LEFT JOIN adcp_reporting_revisions r ON l.entry_kind = 'revision' "
                      "AND r.revision_id = l.entry_id LEFT JOIN adcp_reporting_obligations o ON o.obligation_id = "
                      "r.obligation_id LEFT JOIN adcp_reporting_row_sets s ON s.row_set_id = r.row_set_id LEFT JOIN "
                      "adcp_reporting_row_sets s2 ON s2.row_set_id = r.revision_id WHERE l.account_id = $1 ORDER BY "
                      "l.leaf_index",
                      audit_header_cols(d)) ||
      adcp_buf_cstr(&sql))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  adcp_sql_param p = adcp_sql_text(x->account);
  adcp_sql_rows *r = NULL;
  uint64_t headers0 = x->rep->headers;
  if (!rc) rc = adcp_sql_query(&r, x->conn, (const char *)sql.data, &p, 1, err);
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
    if (audit_hex32(dg, entry, &e2)) memset(dg, 0, 32);
    adcp_merkle_leaf_hash(leaves[n], dg, 32);
    char want[65];
    audit_to_hex(want, leaves[n]);
    if (!lh || strcmp(lh, want))
      finding(x, "leaf_corrupt", idx, -1, id, "stored leaf hash is not H(0x00 || entry digest)");
    x->rep->leaves++;
    if (!strcmp(kind, "revision")) {
      if (strcmp(profile, ADCP_AUDIT_HEADER_PROFILE))
        finding(x, "leaf_corrupt", idx, -1, id, "revision leaf with profile %.40s", profile);
      if (adcp_sql_get_int64(r, 8)) {
        char now[65];
        if ((rc = audit_header_digest(now, &scratch, r, 9, &doc, err))) break;
        x->rep->headers++;
        if (strcmp(now, entry)) {
          /* Resolved after the scan (no query while rows stream): an older
           * leaf of a revision ID retired and committed again is retired. */
          if (nmiss == capmiss) {
            capmiss = capmiss ? capmiss * 2 : 16;
            missing *g = realloc(miss, capmiss * sizeof *g);
            if (!g) {
              rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
              break;
            }
            miss = g;
          }
          missing *m = &miss[nmiss++];
          snprintf(m->id, sizeof m->id, "%s", id);
          snprintf(m->obligation, sizeof m->obligation, "%s", adcp_sql_get_text(r, 7, NULL));
          m->leaf = idx;
          m->edited = 1;
          memcpy(m->now, now, 65);
          snprintf(m->entry, sizeof m->entry, "%s", entry);
        }
      } else {
        if (nmiss == capmiss) {
          capmiss = capmiss ? capmiss * 2 : 16;
          missing *g = realloc(miss, capmiss * sizeof *g);
          if (!g) {
            rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
            break;
          }
          miss = g;
        }
        snprintf(miss[nmiss].id, sizeof miss[nmiss].id, "%s", id);
        snprintf(miss[nmiss].obligation, sizeof miss[nmiss].obligation, "%s", adcp_sql_get_text(r, 7, NULL));
        miss[nmiss].edited = 0;
        snprintf(miss[nmiss].entry, sizeof miss[nmiss].entry, "%s", entry);
        miss[nmiss++].leaf = idx;
      }
    } else {
      const char *docu = adcp_sql_get_text(r, 6, NULL);
      char h[65] = "";
      if (docu) adcp_sha256_hex(h, docu, strlen(docu), &e2);
      if (!docu || strcmp(h, entry))
        finding(x, "leaf_corrupt", idx, -1, id, "retirement record does not hash to its leaf");
    }
    n++;
  }
  adcp_sql_rows_free(r);
  r = NULL;
  if (rc == 1) rc = 0;
  for (size_t i = 0; !rc && i < nmiss; i++) {
    int retired = 0;
    /* Retired only when a hashed retirement leaf lists this leaf's exact
     * digest (a reused ID's old leaf, too); never on a tombstone alone. */
    if ((rc = adcp_audit_revision_retired(&retired, x->conn, x->account, miss[i].id, miss[i].entry,
                                          miss[i].obligation, err)))
      break;
    if (retired) x->rep->retired++;
    else if (miss[i].edited)
      finding(x, "header_edited", miss[i].leaf, -1, miss[i].id,
              "revision %s no longer hashes to its leaf (stored header %.12s…, leaf %.12s…): a header field was "
              "edited or the revision was replaced",
              miss[i].id, miss[i].now, miss[i].entry);
    else
      finding(x, "revision_missing", miss[i].leaf, -1, miss[i].id,
              "revision %s (leaf %" PRId64 ") is gone from the database and no retirement covers it", miss[i].id,
              miss[i].leaf);
  }
  /* Revisions the log never saw: inserted around the commit path. Only
   * looked for when the account has more revisions than logged ones found. */
  int64_t nrev = 0;
  if (!rc) {
    adcp_sql_rows *cr = NULL;
    rc = adcp_sql_query(&cr, x->conn, "SELECT count(*) FROM adcp_reporting_revisions WHERE account_id = $1", &p, 1, err);
    if (!rc && (rc = adcp_sql_next(cr, err)) == 1) nrev = adcp_sql_get_int64(cr, 0), rc = 0;
    adcp_sql_rows_free(cr);
  }
  if (!rc && (uint64_t)nrev != x->rep->headers - headers0) {
    rc = adcp_sql_query(&r, x->conn,
                        "SELECT r.revision_id FROM adcp_reporting_revisions r WHERE r.account_id = $1 AND NOT EXISTS "
                        "(SELECT 1 FROM adcp_audit_log_leaves l WHERE l.entry_kind = 'revision' AND l.entry_id = "
                        "r.revision_id AND l.account_id = r.account_id) ORDER BY r.recorded_at, r.revision_id",
                        &p, 1, err);
    while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
      const char *id = adcp_sql_get_text(r, 0, NULL);
      finding(x, "revision_unlogged", -1, -1, id,
              "revision %s has no leaf in the account's log (inserted around the commit path, or committed before "
              "migration 0009: see checkpoint --adopt-unlogged)",
              id);
    }
    adcp_sql_rows_free(r);
    if (rc == 1 || rc == 0) rc = 0;
  }
  if (!rc) rc = adcp_merkle_mem_build(&mem, leaves, n, err);
  if (!rc) rc = check_nodes(x, &mem, err);
  /* Without a pinned key no checkpoint can be trusted, so none is checked. */
  if (!rc && x->o->keys && x->o->keys->count) rc = check_checkpoints(x, &mem, n, err);
  adcp_merkle_mem_free(&mem);
  free(leaves);
  free(miss);
  adcp_json_doc_free(&doc);
  adcp_buf_free(&sql);
  adcp_buf_free(&scratch);
  return rc;
}

int adcp_audit_run(adcp_audit_report *out, adcp_sql_conn *conn, const adcp_audit_options *o, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!o || o->version != 1) return adcp_error_set(err, ADCP_EINVALID_INPUT, "audit: unknown options version");
  char **accounts = NULL;
  size_t na = 0;
  int rc = 0;
  if (o->account_id) {
    accounts = calloc(1, sizeof *accounts);
    if (!accounts || !(accounts[0] = strdup(o->account_id))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
    else na = 1;
  } else {
    rc = adcp_audit_list_accounts(&accounts, &na, conn, err);
  }
  /* Accounts only an outside checkpoint knows (the whole log was deleted). */
  run x = {conn, o, out, NULL};
  for (size_t i = 0; !rc && i < na; i++) {
    x.account = accounts[i];
    out->accounts++;
    rc = audit_account(&x, err);
  }
  for (size_t i = 0; !rc && !o->account_id && i < o->n_extra; i++) {
    int known = 0;
    for (size_t j = 0; j < na && !known; j++) known = !strcmp(accounts[j], o->extra[i].account_id);
    for (size_t j = 0; j < i && !known; j++) known = !strcmp(o->extra[j].account_id, o->extra[i].account_id);
    if (known) continue;
    x.account = o->extra[i].account_id;
    out->accounts++;
    rc = audit_account(&x, err);
  }
  adcp_audit_ids_free(accounts, na);
  return rc;
}
