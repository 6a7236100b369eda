/* collector/collect.c — collect_orphaned_row_objects (spec 04 §3-§5): option
 * checks (all before listing), then per selected binding the E1 checks, the
 * fence, and the listing loop one page at a time: E2 key grammar, E3 age,
 * E4 batched reference pre-check, E5 locked re-check + version-pinned delete,
 * E6 budget and fence cadence. Nothing is retried within a run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/json.h"
#include "adcp/objects.h"
#include "adcp/sql.h"
#include "collector/internal.h"
#include "ledger/collector_support.h"

#define CURSOR_TAG "adcp-oc1:"

typedef struct run {
  adcp_ledger *l;
  adcp_sql_conn *c;
  int pg;
  adcp_collector_options o;
  char ns[65];
  char **lock_ids; /* every object binding of the database, sorted: the lock set of E5 */
  size_t n_lock_ids;
  size_t keys_reported;
  int64_t cutoff_ms; /* database now - min_age */
  int versions;      /* this binding is listed by version: references pin (key, version) */
  adcp_buf sql;
  adcp_buf lk;
} run;

/* One entry of a page that reached E4. */
typedef struct cand {
  const adcp_object_entry *e;
  adcp_collector_key k;
  int referenced;
} cand;

static int oom(adcp_error *err) { return adcp_error_set(err, ADCP_ENOMEM, "out of memory"); }

static void note_failure(adcp_collector_binding_report *b, int rc, const adcp_error *e) {
  if (b->failure[0]) return;
  snprintf(b->failure, sizeof b->failure, "%s: %.200s", adcp_error_code_name(rc), e && e->message[0] ? e->message : "");
}

static void free_ids(char **ids, size_t n) {
  for (size_t i = 0; ids && i < n; i++) free(ids[i]);
  free(ids);
}

/* ---- cursors: CURSOR_TAG namespace ':' hex(binding) ':' hex(token) -------------- */

static int cursor_make(char **out, const char *ns, const char *binding, const char *token) {
  size_t bl = strlen(binding), tl = strlen(token);
  char *s = malloc(strlen(CURSOR_TAG) + 64 + 2 + 2 * bl + 2 * tl + 1);
  if (!s) return ADCP_ENOMEM;
  char *p = s + sprintf(s, "%s%s:", CURSOR_TAG, ns);
  adcp_hex_encode(p, (const uint8_t *)binding, bl), p += 2 * bl;
  *p++ = ':';
  adcp_hex_encode(p, (const uint8_t *)token, tl), p += 2 * tl;
  *p = 0;
  *out = s;
  return 0;
}

/* Decodes a cursor of namespace ns; *binding and *token are malloc'd. */
static int cursor_parse(char **binding, char **token, const char *cur, const char *ns, adcp_error *err) {
  *binding = *token = NULL;
  size_t tl = strlen(CURSOR_TAG);
  if (strncmp(cur, CURSOR_TAG, tl) || strlen(cur) < tl + 66 || cur[tl + 64] != ':')
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor is not a collector cursor");
  if (memcmp(cur + tl, ns, 64)) return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor belongs to another namespace");
  const char *b = cur + tl + 65, *sep = strchr(b, ':');
  if (!sep || (sep - b) % 2 || strlen(sep + 1) % 2 || sep == b || !sep[1] || strlen(sep + 1) > 4096)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor is malformed");
  size_t bn = (size_t)(sep - b) / 2, tn = strlen(sep + 1) / 2;
  *binding = calloc(1, bn + 1), *token = calloc(1, tn + 1);
  if (!*binding || !*token) return oom(err);
  if (adcp_hex_decode((uint8_t *)*binding, b, bn, NULL) || adcp_hex_decode((uint8_t *)*token, sep + 1, tn, NULL) ||
      strlen(*binding) != bn || strlen(*token) != tn)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor is malformed");
  return 0;
}

/* ---- SQL helpers ------------------------------------------------------------------ */

static int load_lock_ids(run *r, adcp_error *err) {
  free_ids(r->lock_ids, r->n_lock_ids);
  r->lock_ids = NULL, r->n_lock_ids = 0;
  adcp_sql_rows *rows;
  int rc = adcp_sql_query(&rows, r->c,
                          "SELECT row_binding_id FROM adcp_reporting_row_bindings WHERE kind = 'object' ORDER BY "
                          "row_binding_id",
                          NULL, 0, err);
  if (rc) return rc;
  size_t cap = 0;
  while ((rc = adcp_sql_next(rows, err)) == 1) {
    if (r->n_lock_ids == cap) {
      size_t nc = cap ? cap * 2 : 8;
      char **g = realloc(r->lock_ids, nc * sizeof *g);
      if (!g) {
        rc = oom(err);
        break;
      }
      r->lock_ids = g, cap = nc;
    }
    if (!(r->lock_ids[r->n_lock_ids] = strdup(adcp_sql_get_text(rows, 0, NULL)))) {
      rc = oom(err);
      break;
    }
    r->n_lock_ids++;
  }
  adcp_sql_rows_free(rows);
  if (rc > 0) rc = 0;
  /* Byte order whatever the engine's collation: every collector takes them alike. */
  for (size_t i = 1; !rc && i < r->n_lock_ids; i++)
    for (size_t j = i; j > 0 && strcmp(r->lock_ids[j - 1], r->lock_ids[j]) > 0; j--) {
      char *t = r->lock_ids[j];
      r->lock_ids[j] = r->lock_ids[j - 1], r->lock_ids[j - 1] = t;
    }
  return rc;
}

static int refresh_cutoff(run *r, adcp_error *err) {
  char now[32];
  int rc = adcp_sql_now(r->c, now, err);
  if (rc) return rc;
  int64_t ms = adcp_object_time_parse_ms(now);
  if (ms < 0) return adcp_error_set(err, ADCP_ESTORAGE, "database clock is unreadable");
  r->cutoff_ms = ms + (r->o.testing_clock_offset_seconds - r->o.min_age_seconds) * 1000;
  return 0;
}

static int in_list(adcp_buf *b, size_t first, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (adcp_buf_printf(b, "%s$%zu", i ? ", " : "", first + i)) return ADCP_ENOMEM;
  return adcp_buf_append_byte(b, ')');
}

static const char *ver_of(const adcp_object_entry *e) { return e->native_version ? e->native_version : ""; }

static int cand_cmp(const void *a, const void *b) {
  const adcp_object_entry *x = ((const cand *)a)->e, *y = ((const cand *)b)->e;
  int c = strcmp(x->key, y->key);
  return c ? c : strcmp(ver_of(x), ver_of(y));
}

/* Marks the candidates a reference to (key, version) protects: every entry
 * of the key when the binding is listed by key or the reference names no
 * version (it cannot be ruled out), else only the version it pins. */
static void mark_named(cand *cs, size_t n, int versions, const char *key, const char *version) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (strcmp(cs[mid].e->key, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < n && !strcmp(cs[lo].e->key, key); lo++)
    if (!versions || !version || !*version || !strcmp(ver_of(cs[lo].e), version)) cs[lo].referenced = 1;
}

#define SQL_CREATED_KEY_PG "coalesce(e->>'objectKey', e->>'object_key')"
#define SQL_CREATED_KEY_SQ "coalesce(json_extract(e.value, '$.objectKey'), json_extract(e.value, '$.object_key'))"
#define SQL_CREATED_VER_PG "coalesce(e->>'nativeVersion', e->>'native_version')"
#define SQL_CREATED_VER_SQ \
  "coalesce(json_extract(e.value, '$.nativeVersion'), json_extract(e.value, '$.native_version'))"

/* Marks candidates an intent protects by content (and revision_key when the
 * template has one). rows: row_set_id, content_sha256. */
static int mark_intent_content(cand *cs, size_t n, adcp_sql_rows *rows, int single, adcp_error *err) {
  int rc;
  while ((rc = adcp_sql_next(rows, err)) == 1) {
    const char *rs = adcp_sql_get_text(rows, 0, NULL), *content = adcp_sql_get_text(rows, 1, NULL);
    char rk[65] = "";
    int have_rk = 0;
    for (size_t i = 0; i < n; i++) {
      if (cs[i].referenced || strcmp(cs[i].k.content_sha256, content)) continue;
      if (cs[i].k.revision_key[0]) {
        if (!have_rk) {
          adcp_error e2 = {0};
          /* An unreadable row_set_id cannot be ruled out: protect. */
          if (adcp_object_revision_key(rk, rs, &e2)) rk[0] = 0, have_rk = -1;
          else have_rk = 1;
        }
        if (have_rk == 1 && strcmp(rk, cs[i].k.revision_key)) continue;
      }
      cs[i].referenced = 1;
      if (single) break;
    }
  }
  return rc < 0 ? rc : 0;
}

/* E4 (pre-check over n candidates, one statement per rule) and, with n == 1
 * inside the locked transaction, E5. */
#define REF_BATCH 500 /* the SQL port binds at most 999 parameters */

static int references(run *r, cand *cs, size_t n, adcp_error *err) {
  if (!n) return 0;
  if (n > REF_BATCH) {
    int rc = references(r, cs, REF_BATCH, err);
    return rc ? rc : references(r, cs + REF_BATCH, n - REF_BATCH, err);
  }
  adcp_sql_param *p = calloc(n, sizeof *p);
  if (!p) return oom(err);
  int rc = 0;
  /* Chunks of row sets that are not pruned, any version. */
  adcp_buf_reset(&r->sql);
  /* Driven by the chunk object index (a join would let SQLite scan row sets first). */
  if (adcp_buf_append_str(&r->sql,
                          "SELECT DISTINCT c.object_key, c.native_version FROM adcp_reporting_row_chunks c "
                          "WHERE c.object_key IS "
                          "NOT NULL AND EXISTS (SELECT 1 FROM adcp_reporting_row_sets s WHERE s.row_set_id = "
                          "c.row_set_id AND s.rows_state <> 'pruned') AND c.object_key IN (") ||
      in_list(&r->sql, 1, n) || adcp_buf_cstr(&r->sql))
    rc = oom(err);
  for (size_t i = 0; i < n; i++) p[i] = adcp_sql_text(cs[i].e->key);
  for (int pass = 0; pass < 2 && !rc; pass++) {
    if (pass == 1) {
      /* Keys an intent (any binding, any state, expired or not) recorded as created. */
      adcp_buf_reset(&r->sql);
      if (adcp_buf_printf(&r->sql, "SELECT DISTINCT %s, %s FROM adcp_reporting_row_write_intents i, %s e WHERE %s IN (",
                          r->pg ? SQL_CREATED_KEY_PG : SQL_CREATED_KEY_SQ, r->pg ? SQL_CREATED_VER_PG : SQL_CREATED_VER_SQ,
                          r->pg ? "jsonb_array_elements(i.created_objects)" : "json_each(i.created_objects)",
                          r->pg ? SQL_CREATED_KEY_PG : SQL_CREATED_KEY_SQ) ||
          in_list(&r->sql, 1, n) || adcp_buf_cstr(&r->sql)) {
        rc = oom(err);
        break;
      }
    }
    adcp_sql_rows *rows;
    if ((rc = adcp_sql_query(&rows, r->c, (const char *)r->sql.data, p, n, err))) break;
    while ((rc = adcp_sql_next(rows, err)) == 1)
      mark_named(cs, n, r->versions, adcp_sql_get_text(rows, 0, NULL), adcp_sql_get_text(rows, 1, NULL));
    adcp_sql_rows_free(rows);
    if (rc > 0) rc = 0;
  }
  /* Intents whose content (and revision) a candidate's key carries: a retrying
   * writer may be about to adopt the object. */
  size_t nc = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    int dup = 0;
    for (size_t j = 0; j < nc && !dup; j++) dup = !strcmp((const char *)p[j].data, cs[i].k.content_sha256);
    if (!dup) p[nc++] = adcp_sql_text(cs[i].k.content_sha256);
  }
  if (!rc) {
    adcp_buf_reset(&r->sql);
    if (adcp_buf_append_str(&r->sql,
                            "SELECT row_set_id, content_sha256 FROM adcp_reporting_row_write_intents WHERE "
                            "content_sha256 IN (") ||
        in_list(&r->sql, 1, nc) || adcp_buf_cstr(&r->sql))
      rc = oom(err);
  }
  if (!rc) {
    adcp_sql_rows *rows;
    if (!(rc = adcp_sql_query(&rows, r->c, (const char *)r->sql.data, p, nc, err))) {
      rc = mark_intent_content(cs, n, rows, n == 1, err);
      adcp_sql_rows_free(rows);
    }
  }
  free(p);
  return rc;
}

/* ---- E5: the locked re-check and the version-pinned delete ------------------------ */

enum { DEL_DELETED = 1, DEL_ABSENT, DEL_RECHECKED };

static int locked_delete(int *outcome, run *r, const adcp_ledger_object_binding *b, cand *c, adcp_error *err) {
  *outcome = 0;
  int rc = adcp_sql_begin(r->c, 1, err);
  /* A commit holds its object lock across its puts and transaction B; wait
   * for it, but not forever. */
  if (!rc && r->pg) rc = adcp_sql_exec(r->c, "SET LOCAL lock_timeout = '30s'", NULL, 0, err);
  for (size_t i = 0; !rc && i < r->n_lock_ids; i++) {
    if (adcp_ledger_collector_lock_key(&r->lk, r->lock_ids[i], c->e->key)) rc = oom(err);
    else rc = adcp_sql_advisory_xact_lock(r->c, (const char *)r->lk.data, err);
  }
  if (!rc) {
    c->referenced = 0;
    rc = references(r, c, 1, err);
  }
  if (!rc && c->referenced) *outcome = DEL_RECHECKED;
  if (!rc && !c->referenced) {
    adcp_object_ctx ctx = {adcp_object_now_ms() + adcp_ledger_collector_deadline_ms(r->l), NULL};
    int o = 0;
    rc = adcp_object_delete(b->client, &o, c->e->key, c->e->native_version, &ctx, err);
    if (!rc) *outcome = o == ADCP_OBJECT_DELETED ? DEL_DELETED : o == ADCP_OBJECT_ABSENT ? DEL_ABSENT : DEL_RECHECKED;
  }
  if (!rc) rc = adcp_sql_commit(r->c, err);
  if (rc) adcp_sql_rollback(r->c, NULL);
  return rc;
}

/* ---- one binding ------------------------------------------------------------------ */

static int fence_check(run *r, col_fence *f, adcp_collector_binding_report *br, int acquire, const char *id, int *stop) {
  char cause[32] = "";
  adcp_error e = {0};
  int rc = acquire ? adcp_collector__fence_acquire(f, cause, r->l, id, &e)
                   : adcp_collector__fence_recheck(f, cause, r->l, &e);
  if (rc) {
    note_failure(br, rc, &e);
    snprintf(br->status, sizeof br->status, "failed");
    *stop = 1;
  } else if (cause[0]) {
    snprintf(br->refusal, sizeof br->refusal, "%s", cause);
    snprintf(br->status, sizeof br->status, "fenced");
    *stop = 1;
  } else if (f->epoch > br->fence_epoch) {
    br->fence_epoch = f->epoch;
  }
  return 0;
}

static int hook(run *r, int step, const char *id, const char *key) {
  return r->o.hook ? r->o.hook(r->o.hook_ctx, step, id, key) : 0;
}

static int add_young_key(run *r, adcp_collector_binding_report *br, const char *key, int64_t last_modified_ms) {
  if (r->keys_reported >= ADCP_COLLECTOR_DRY_RUN_CAP) return 0;
  char **g = realloc(br->young_keys, (br->n_young_keys + 1) * sizeof *g);
  if (!g) return ADCP_ENOMEM;
  br->young_keys = g;
  int64_t *a = realloc(br->young_age_s, (br->n_young_keys + 1) * sizeof *a);
  if (!a) return ADCP_ENOMEM;
  br->young_age_s = a;
  if (!(g[br->n_young_keys] = strdup(key))) return ADCP_ENOMEM;
  int64_t now_ms = r->cutoff_ms + r->o.min_age_seconds * 1000;
  a[br->n_young_keys] = last_modified_ms < 0 ? -1 : (now_ms - last_modified_ms) / 1000;
  br->n_young_keys++, r->keys_reported++;
  return 0;
}

static int add_candidate_key(run *r, adcp_collector_binding_report *br, const char *key) {
  if (r->keys_reported >= ADCP_COLLECTOR_DRY_RUN_CAP) return 0;
  char **g = realloc(br->candidate_keys, (br->n_candidate_keys + 1) * sizeof *g);
  if (!g) return ADCP_ENOMEM;
  br->candidate_keys = g;
  if (!(g[br->n_candidate_keys] = strdup(key))) return ADCP_ENOMEM;
  br->n_candidate_keys++, r->keys_reported++;
  return 0;
}

static int collect_binding(run *r, const adcp_ledger_object_binding *b, const char *start_token,
                           adcp_collector_binding_report *br) {
  snprintf(br->row_binding_id, sizeof br->row_binding_id, "%s", b->id);
  adcp_error e = {0};
  char state[16];
  int found = 0;
  int rc = adcp_ledger_collector_binding_check(state, &found, r->l, b->id, &e);
  if (rc || !found) {
    /* E1: a foreign identity or namespace, or no row (nothing was ever written through it here). */
    if (!rc) rc = adcp_error_set(&e, ADCP_ESTATE_UNAVAILABLE, "binding %s is not registered in this database", b->id);
    note_failure(br, rc, &e);
    snprintf(br->status, sizeof br->status, "failed");
    return 0;
  }
  if (!strcmp(state, "retired")) return snprintf(br->status, sizeof br->status, "skipped_retired"), 0;
  if (!strcmp(state, "read_only") && !r->o.include_read_only)
    return snprintf(br->status, sizeof br->status, "skipped_read_only"), 0;
  if (strcmp(state, "active") && strcmp(state, "read_only"))
    return snprintf(br->status, sizeof br->status, "skipped_retired"), 0;
  if (!b->client || !b->client->list || !(b->client->capabilities & ADCP_OBJECT_CAP_LIST))
    return snprintf(br->status, sizeof br->status, "unsupported"), 0;
  /* A store that can list versions is listed by version: a non-current
   * version at a pinned key is an orphan too (docs/collector.md). */
  r->versions = adcp_object_has_list_versions(b->client);
  snprintf(br->status, sizeof br->status, "collected");

  col_fence f = {0};
  int stop = 0;
  if (!r->o.dry_run) fence_check(r, &f, br, 1, b->id, &stop);

  adcp_buf pfx;
  adcp_buf_init(&pfx);
  char **seen = NULL; /* every token used in this run: a repeat would loop */
  size_t nseen = 0;
  char *token = start_token ? strdup(start_token) : NULL;
  cand *cs = calloc(r->o.page_size, sizeof *cs);
  uint64_t deletes = 0;
  if (adcp_buf_printf(&pfx, "%s/%s/", b->prefix, r->ns) || adcp_buf_cstr(&pfx) || !cs || (start_token && !token)) {
    rc = oom(&e);
    goto out;
  }
  while (!stop) {
    if (br->c.pages >= r->o.page_cap) {
      br->truncated = 1;
      break;
    }
    if (f.held && br->c.pages > 0) {
      fence_check(r, &f, br, 0, b->id, &stop);
      if (stop) break;
    }
    if ((rc = refresh_cutoff(r, &e)) || (rc = load_lock_ids(r, &e))) goto out;
    adcp_object_list_page pg;
    adcp_object_ctx ctx = {adcp_object_now_ms() + adcp_ledger_collector_deadline_ms(r->l), NULL};
    int lr = (r->versions ? adcp_object_list_versions : adcp_object_list)(b->client, &pg, (const char *)pfx.data, token,
                                                                          r->o.page_size, &ctx, &e);
    if (lr) {
      note_failure(br, lr, &e);
      snprintf(br->status, sizeof br->status, "failed");
      break;
    }
    br->c.pages++;
    int fault = 0;
    if (pg.n_entries > r->o.page_size) {
      fault = adcp_error_set(&e, ADCP_EPROVIDER_UNAVAILABLE, "listing page holds %zu entries, more than the %zu asked",
                             pg.n_entries, r->o.page_size);
    } else if (pg.next_token) {
      int rep = token && !strcmp(token, pg.next_token);
      for (size_t i = 0; i < nseen && !rep; i++) rep = !strcmp(seen[i], pg.next_token);
      if (rep) fault = adcp_error_set(&e, ADCP_EPROVIDER_UNAVAILABLE, "listing repeated a continuation token");
    }
    if (!fault && hook(r, ADCP_COLLECTOR_STEP_PAGE, b->id, NULL))
      fault = adcp_error_set(&e, ADCP_EABORTED, "stopped by the test hook");
    if (fault) {
      /* None of this page is acted on. */
      br->c.failed++;
      note_failure(br, fault, &e);
      snprintf(br->status, sizeof br->status, "failed");
      adcp_object_list_page_free(&pg);
      break;
    }
    /* E2 + E3, then the batched E4 over what is left. */
    size_t n = 0;
    for (size_t i = 0; i < pg.n_entries; i++) {
      const adcp_object_entry *en = &pg.entries[i];
      /* Fence objects: never candidates, not foreign, not counted. */
      if (!strncmp(en->key, (const char *)pfx.data, pfx.len) && !strncmp(en->key + pfx.len, "_collector-fence/", 17))
        continue;
      br->c.listed++;
      cand *c = &cs[n];
      if (!adcp_collector_key_parse(&c->k, en->key, b->key_template, b->prefix, r->ns)) {
        br->c.skipped_foreign++;
        continue;
      }
      if (en->last_modified < 0 || en->last_modified > r->cutoff_ms) {
        br->c.skipped_young++;
        if (r->o.dry_run && add_young_key(r, br, en->key, en->last_modified)) {
          rc = oom(&e);
          adcp_object_list_page_free(&pg);
          goto out;
        }
        continue;
      }
      c->e = en, c->referenced = 0;
      n++;
    }
    qsort(cs, n, sizeof *cs, cand_cmp);
    /* A key (by version: a version) listed twice in one page is a provider fault too: act on none. */
    for (size_t i = 1; i < n && !fault; i++)
      if (r->versions ? !cand_cmp(&cs[i - 1], &cs[i]) : !strcmp(cs[i - 1].e->key, cs[i].e->key))
        fault = adcp_error_set(&e, ADCP_EPROVIDER_UNAVAILABLE,
                               r->versions ? "listing returned a version twice" : "listing returned a key twice");
    if (!fault && (rc = references(r, cs, n, &e))) {
      adcp_object_list_page_free(&pg);
      goto out;
    }
    if (fault) {
      br->c.failed++;
      note_failure(br, fault, &e);
      snprintf(br->status, sizeof br->status, "failed");
      adcp_object_list_page_free(&pg);
      break;
    }
    int limit_hit = 0;
    for (size_t i = 0; i < n && !stop; i++) {
      cand *c = &cs[i];
      if (c->referenced) {
        br->c.skipped_referenced++;
        continue;
      }
      br->c.candidates++;
      if (r->o.dry_run) {
        if (add_candidate_key(r, br, c->e->key)) {
          rc = oom(&e);
          adcp_object_list_page_free(&pg);
          goto out;
        }
        continue;
      }
      if (deletes >= r->o.limit) {
        limit_hit = 1;
        continue;
      }
      if (hook(r, ADCP_COLLECTOR_STEP_LOCK, b->id, c->e->key)) {
        br->c.failed++;
        continue;
      }
      int outcome = 0;
      adcp_error de = {0};
      int dr = locked_delete(&outcome, r, b, c, &de);
      if (dr) {
        br->c.failed++;
        note_failure(br, dr, &de);
        continue;
      }
      if (outcome == DEL_RECHECKED) {
        br->c.skipped_rechecked++;
        continue;
      }
      deletes++;
      if (outcome == DEL_DELETED) br->c.deleted++;
      else br->c.absent++;
      hook(r, ADCP_COLLECTOR_STEP_DELETED, b->id, c->e->key);
      if (deletes % ADCP_COLLECTOR_RECHECK_EVERY == 0) fence_check(r, &f, br, 0, b->id, &stop);
    }
    char *next = pg.next_token;
    pg.next_token = NULL;
    adcp_object_list_page_free(&pg);
    if (stop || limit_hit) {
      /* Resume at this page again: what was deleted is gone, the rest is re-examined. */
      free(next);
      if (limit_hit) br->truncated = 1;
      break;
    }
    if (!next) {
      br->complete = 1;
      free(token);
      token = NULL;
      break;
    }
    if (token) {
      char **g = realloc(seen, (nseen + 1) * sizeof *g);
      if (!g) {
        free(next);
        rc = oom(&e);
        goto out;
      }
      seen = g, seen[nseen++] = token;
    }
    token = next;
  }
  if (token && !br->complete && cursor_make(&br->cursor, r->ns, b->id, token)) rc = oom(&e);
  if (!rc && r->o.use_stored_state && !r->o.dry_run) {
    const char *outcome = br->complete                    ? "complete"
                          : !strcmp(br->status, "fenced") ? "fenced"
                          : !strcmp(br->status, "failed") ? "failed"
                                                          : "truncated";
    adcp_error se = {0};
    int sr = adcp_collector__state_save(r->l, b->id, r->ns, br->complete ? NULL : token, outcome,
                                        br->refusal[0] ? br->refusal : NULL, &se);
    if (sr) note_failure(br, sr, &se);
  }
out:
  if (rc) {
    note_failure(br, rc, &e);
    snprintf(br->status, sizeof br->status, "failed");
  }
  adcp_collector__fence_release(&f);
  free_ids(seen, nseen);
  free(token);
  free(cs);
  adcp_buf_free(&pfx);
  return 0;
}

/* ---- entry point ------------------------------------------------------------------ */

static int in_strv(const char *const *v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (v[i] && !strcmp(v[i], s)) return 1;
  return 0;
}

static int find_binding(adcp_ledger *l, const char *id, adcp_ledger_object_binding *out) {
  size_t n = adcp_ledger_collector_binding_count(l);
  for (size_t i = 0; i < n; i++) {
    adcp_ledger_collector_binding(out, l, i);
    if (!strcmp(out->id, id)) return 1;
  }
  return 0;
}

static int check_list(adcp_ledger *l, const char *const *v, size_t n, const char *what, adcp_error *err) {
  adcp_ledger_object_binding b;
  for (size_t i = 0; i < n; i++) {
    if (!v[i]) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s holds an empty binding ID", what);
    if (!strcmp(v[i], ADCP_LEDGER_POSTGRES_BINDING))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: the postgres binding holds no objects", what);
    if (!find_binding(l, v[i], &b))
      return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s: binding %.128s is not a configured object binding", what, v[i]);
    for (size_t j = 0; j < i; j++)
      if (!strcmp(v[i], v[j])) return adcp_error_set(err, ADCP_EINVALID_INPUT, "%s names %.128s twice", what, v[i]);
  }
  return 0;
}

static int check_options(adcp_collector_options *o, adcp_error *err) {
  if (o->version < 1 || o->version > ADCP_COLLECTOR_OPTIONS_VERSION)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "collector options version %d is not supported", o->version);
  if (o->version < ADCP_COLLECTOR_OPTIONS_VERSION_CLOCK_OFFSET) o->testing_clock_offset_seconds = 0;
  if (o->testing_clock_offset_seconds < 0 || o->testing_clock_offset_seconds > ADCP_COLLECTOR_MIN_AGE_DEFAULT_S)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "testing clock offset must be 0..%d seconds",
                          ADCP_COLLECTOR_MIN_AGE_DEFAULT_S);
  if (!o->dry_run && !o->acknowledge_exclusive_namespace)
    return adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "a deleting collector run needs acknowledge_exclusive_namespace: only this installation may "
                          "write under the bindings' {prefix}/{namespace_key}/ (run a dry run first)");
  if (!o->limit) o->limit = ADCP_COLLECTOR_LIMIT_DEFAULT;
  if (o->limit > ADCP_COLLECTOR_LIMIT_MAX)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "limit must be 1..%d", ADCP_COLLECTOR_LIMIT_MAX);
  if (!o->min_age_seconds) o->min_age_seconds = ADCP_COLLECTOR_MIN_AGE_DEFAULT_S;
  if (o->min_age_seconds < ADCP_COLLECTOR_MIN_AGE_MIN_S || o->min_age_seconds > 100LL * 365 * 86400)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "min_age_seconds must be at least %d (one day)",
                          ADCP_COLLECTOR_MIN_AGE_MIN_S);
  if (!o->page_size) o->page_size = ADCP_COLLECTOR_PAGE_SIZE_DEFAULT;
  if (o->page_size > 1000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "page size must be 1..1000");
  if (!o->page_cap) o->page_cap = ADCP_COLLECTOR_PAGE_CAP_DEFAULT;
  if (o->page_cap > 10000) return adcp_error_set(err, ADCP_EINVALID_INPUT, "page cap must be 1..10000");
  return 0;
}

int adcp_collector_collect_orphaned_row_objects(adcp_collector_report *out, adcp_ledger *l,
                                                const adcp_collector_options *opts, adcp_error *err) {
  memset(out, 0, sizeof *out);
  if (!opts || !l) return adcp_error_set(err, ADCP_EINVALID_INPUT, "collector options are required");
  run r;
  memset(&r, 0, sizeof r);
  r.l = l, r.c = adcp_ledger_conn(l), r.o = *opts;
  r.pg = adcp_sql_dialect_of(r.c) == ADCP_SQL_POSTGRES;
  adcp_buf_init(&r.sql), adcp_buf_init(&r.lk);
  out->dry_run = opts->dry_run != 0;
  int rc = check_options(&r.o, err);
  if (!rc) rc = check_list(l, r.o.bindings, r.o.n_bindings, "bindings", err);
  if (!rc) rc = check_list(l, r.o.skip_bindings, r.o.n_skip_bindings, "skip_bindings", err);
  for (size_t i = 0; !rc && i < r.o.n_bindings; i++)
    if (in_strv(r.o.skip_bindings, r.o.n_skip_bindings, r.o.bindings[i]))
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "binding %.128s is in both bindings and skip_bindings",
                          r.o.bindings[i]);
  if (!rc) rc = adcp_ledger_collector_namespace_key(r.ns, l, err);
  /* Selected bindings, in configuration order. */
  size_t nb = adcp_ledger_collector_binding_count(l);
  adcp_ledger_object_binding *sel = calloc(nb + 1, sizeof *sel);
  char **start = calloc(nb + 1, sizeof *start);
  size_t ns = 0;
  if (!rc && (!sel || !start)) rc = oom(err);
  for (size_t i = 0; !rc && i < nb; i++) {
    adcp_ledger_object_binding b;
    adcp_ledger_collector_binding(&b, l, i);
    if (r.o.n_bindings && !in_strv(r.o.bindings, r.o.n_bindings, b.id)) continue;
    if (in_strv(r.o.skip_bindings, r.o.n_skip_bindings, b.id)) continue;
    sel[ns++] = b;
  }
  /* Cursors: each names one selected binding of this namespace, at most once. */
  for (size_t i = 0; !rc && i < r.o.n_cursors; i++) {
    char *bid = NULL, *tok = NULL;
    if (!r.o.cursors[i]) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "empty cursor");
    if (!rc) rc = cursor_parse(&bid, &tok, r.o.cursors[i], r.ns, err);
    size_t k = ns;
    for (size_t j = 0; !rc && j < ns; j++)
      if (!strcmp(sel[j].id, bid)) k = j;
    if (!rc && k == ns) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "cursor belongs to a binding outside this run");
    if (!rc && start[k]) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "two cursors for binding %.128s", bid);
    if (!rc) start[k] = tok, tok = NULL;
    free(bid), free(tok);
  }
  if (!rc && !(out->bindings = calloc(ns + 1, sizeof *out->bindings))) rc = oom(err);
  for (size_t i = 0; !rc && i < ns; i++) {
    if (!start[i] && r.o.use_stored_state && (rc = adcp_collector__state_cursor(&start[i], l, sel[i].id, r.ns, err)))
      break;
    adcp_collector_binding_report *br = &out->bindings[out->n_bindings++];
    collect_binding(&r, &sel[i], start[i], br);
    adcp_collector_counters *t = &out->totals;
    const adcp_collector_counters *c = &br->c;
    t->listed += c->listed, t->pages += c->pages, t->candidates += c->candidates, t->deleted += c->deleted;
    t->absent += c->absent, t->skipped_foreign += c->skipped_foreign, t->skipped_young += c->skipped_young;
    t->skipped_referenced += c->skipped_referenced, t->skipped_rechecked += c->skipped_rechecked;
    t->failed += c->failed;
    if (!strcmp(br->status, "fenced")) out->fenced++;
    if (!strcmp(br->status, "unsupported")) out->unsupported++;
    if (!strcmp(br->status, "failed")) out->failed_bindings++;
    if (br->cursor) out->truncated++;
    if (br->fence_epoch > out->fence_epoch) out->fence_epoch = br->fence_epoch;
  }
  for (size_t i = 0; start && i < nb; i++) free(start[i]);
  free(start);
  free(sel);
  free_ids(r.lock_ids, r.n_lock_ids);
  adcp_buf_free(&r.sql), adcp_buf_free(&r.lk);
  return rc;
}

void adcp_collector_report_free(adcp_collector_report *r) {
  if (!r) return;
  for (size_t i = 0; i < r->n_bindings; i++) {
    adcp_collector_binding_report *b = &r->bindings[i];
    free(b->cursor);
    free_ids(b->candidate_keys, b->n_candidate_keys);
    free_ids(b->young_keys, b->n_young_keys);
    free(b->young_age_s);
  }
  free(r->bindings);
  memset(r, 0, sizeof *r);
}

static int counters_json(adcp_buf *o, const adcp_collector_counters *c) {
  return adcp_buf_printf(o,
                         "\"listed\":%llu,\"pages\":%llu,\"candidates\":%llu,\"deleted\":%llu,\"absent\":%llu,"
                         "\"skipped_foreign\":%llu,\"skipped_young\":%llu,\"skipped_referenced\":%llu,"
                         "\"skipped_rechecked\":%llu,\"failed\":%llu",
                         (unsigned long long)c->listed, (unsigned long long)c->pages, (unsigned long long)c->candidates,
                         (unsigned long long)c->deleted, (unsigned long long)c->absent,
                         (unsigned long long)c->skipped_foreign, (unsigned long long)c->skipped_young,
                         (unsigned long long)c->skipped_referenced, (unsigned long long)c->skipped_rechecked,
                         (unsigned long long)c->failed);
}

static int str_or_null(adcp_buf *o, const char *s) {
  return s && *s ? adcp_json_write_ascii_string(o, s) : adcp_buf_append_str(o, "null");
}

int adcp_collector_report_json(adcp_buf *o, const adcp_collector_report *r) {
  adcp_buf_reset(o);
  int e = adcp_buf_printf(o, "{\"dry_run\":%s,\"bindings\":[", r->dry_run ? "true" : "false");
  for (size_t i = 0; !e && i < r->n_bindings; i++) {
    const adcp_collector_binding_report *b = &r->bindings[i];
    e = adcp_buf_append_str(o, i ? ",{\"row_binding_id\":" : "{\"row_binding_id\":");
    if (!e) e = adcp_json_write_ascii_string(o, b->row_binding_id);
    if (!e) e = adcp_buf_printf(o, ",\"status\":\"%s\",", b->status);
    if (!e) e = counters_json(o, &b->c);
    if (!e)
      e = adcp_buf_printf(
          o, ",\"truncated\":%s,\"complete\":%s,\"fence_epoch\":%llu,\"cursor\":", b->truncated ? "true" : "false",
          b->complete ? "true" : "false", (unsigned long long)b->fence_epoch);
    if (!e) e = str_or_null(o, b->cursor);
    if (!e) e = adcp_buf_append_str(o, ",\"refusal\":");
    if (!e) e = str_or_null(o, b->refusal);
    if (!e) e = adcp_buf_append_str(o, ",\"failure\":");
    if (!e) e = str_or_null(o, b->failure);
    if (!e && r->dry_run) {
      e = adcp_buf_append_str(o, ",\"candidate_keys\":[");
      for (size_t k = 0; !e && k < b->n_candidate_keys; k++) {
        if (k) e = adcp_buf_append_byte(o, ',');
        if (!e) e = adcp_json_write_ascii_string(o, b->candidate_keys[k]);
      }
      if (!e) e = adcp_buf_append_str(o, "],\"young\":[");
      for (size_t k = 0; !e && k < b->n_young_keys; k++) {
        e = adcp_buf_append_str(o, k ? ",{\"key\":" : "{\"key\":");
        if (!e) e = adcp_json_write_ascii_string(o, b->young_keys[k]);
        if (!e) e = adcp_buf_printf(o, ",\"age_seconds\":%lld}", (long long)b->young_age_s[k]);
      }
      if (!e) e = adcp_buf_append_byte(o, ']');
    }
    if (!e) e = adcp_buf_append_byte(o, '}');
  }
  if (!e) e = adcp_buf_append_str(o, "],\"totals\":{");
  if (!e) e = counters_json(o, &r->totals);
  if (!e)
    e = adcp_buf_printf(o,
                        "},\"fenced\":%llu,\"unsupported\":%llu,\"failed_bindings\":%llu,\"truncated\":%llu,"
                        "\"fence_epoch\":%llu}",
                        (unsigned long long)r->fenced, (unsigned long long)r->unsupported,
                        (unsigned long long)r->failed_bindings, (unsigned long long)r->truncated,
                        (unsigned long long)r->fence_epoch);
  if (!e) e = adcp_buf_cstr(o);
  return e ? ADCP_ENOMEM : 0;
}
