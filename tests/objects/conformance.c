/* tests/objects/conformance.c — the provider conformance suite (see conformance.h).
 * Every case talks to the provider only through the adcp_object_* port. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conformance.h"
#include "testutil.h"

#define CONCURRENT_WRITERS 20

typedef struct conf_state {
  const conformance_target *t;
  adcp_object_provider *p;
  char base[256]; /* "<prefix>/conformance/<run>" */
} conf_state;

static const char FIRST[] = "{\"a\":1}\n{\"b\":2}\n"; /* spec 02 §9.4 first body, 16 bytes */

static int conf_setup(void **state) {
  const conformance_target *t = *state;
  conf_state *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->t = t;
  adcp_error err;
  int rc = t->make(t->env, &s->p, t->prefix, &err);
  if (rc) fail_msg("make provider: %s", err.message);
  uint8_t rnd[8];
  char hex[17];
  static __thread uint64_t seq;
  uint64_t v = (uint64_t)adcp_object_now_ms() * 1000003u + (uint64_t)(++seq) * 7919u + (uint64_t)(uintptr_t)s;
  memcpy(rnd, &v, 8);
  adcp_hex_encode(hex, rnd, 8);
  snprintf(s->base, sizeof s->base, "%s/conformance/%s", t->prefix, hex);
  *state = s;
  return 0;
}

static int conf_teardown(void **state) {
  conf_state *s = *state;
  adcp_object_provider_free(s->p);
  *state = (void *)s->t;
  free(s);
  return 0;
}

static const char *key_of(conf_state *s, char *buf, size_t n, const char *rel) {
  snprintf(buf, n, "%s/%s", s->base, rel);
  return buf;
}

static int put(conf_state *s, adcp_object_put_result *r, const char *key, const void *b, size_t n, adcp_error *err) {
  adcp_object_put_input in = {key, b, n, "application/x-ndjson", NULL, 0};
  return adcp_object_put(s->p, r, &in, NULL, err);
}

static int get(conf_state *s, adcp_buf *out, const char *key, const char *ver, uint64_t max, adcp_error *err) {
  adcp_object_get_input in = {key, ver, 0, 0, 0, max};
  return adcp_object_get(s->p, out, &in, NULL, err);
}

static void expect_bytes(conf_state *s, const char *key, const char *ver, const void *b, size_t n) {
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_error err;
  int rc = get(s, &out, key, ver, 1 << 20, &err);
  if (rc) fail_msg("get %s: %s", key, err.message);
  assert_int_equal(out.len, n);
  if (n) assert_memory_equal(out.data, b, n);
  adcp_buf_free(&out);
}

/* ---- cases ---------------------------------------------------------------------- */

static void c_probe(void **state) {
  conf_state *s = *state;
  adcp_error err;
  int rc = adcp_object_probe(s->p, NULL, &err);
  if (rc) fail_msg("probe: %s", err.message);
  adcp_object_kv bad[] = {{"nonsense", "x"}};
  assert_int_equal(adcp_object_validate_location(s->p, bad, 1, &err), ADCP_EINVALID_INPUT);
}

static void c_create_adopt_conflict(void **state) {
  conf_state *s = *state;
  char key[512];
  key_of(s, key, sizeof key, "create/object.jsonl");
  adcp_object_put_result r1, r2, r3;
  adcp_error err;
  assert_int_equal(put(s, &r1, key, FIRST, 16, &err), 0);
  assert_int_equal(r1.outcome, ADCP_OBJECT_CREATED);
  assert_true(r1.native_version[0] != '\0');
  /* identical bytes: adopted, same version */
  assert_int_equal(put(s, &r2, key, FIRST, 16, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r1.native_version);
  /* different bytes (same length and different length): conflict, original untouched */
  assert_int_equal(put(s, &r3, key, "{\"a\":1}\n{\"b\":3}\n", 16, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(err.code, ADCP_ECONTENT_CONFLICT);
  if (r3.native_version[0]) assert_string_equal(r3.native_version, r1.native_version);
  assert_int_equal(put(s, &r3, key, "{\"c\":3}\n", 8, &err), ADCP_ECONTENT_CONFLICT);
  expect_bytes(s, key, r1.native_version, FIRST, 16);
  adcp_object_info info;
  if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
    assert_int_equal(adcp_object_head(s->p, &info, key, NULL, &err), 0);
    assert_int_equal(info.size, 16);
    assert_string_equal(info.native_version, r1.native_version);
  }
}

/* adcp_object_put_observed: a provider that reports a written version
 * before deciding reports it once, and whatever it decides, a reported
 * version that is not the result is gone; a failing callback stops the put
 * with the callback's own code and leaves nothing at the key. */
typedef struct seen_written {
  int calls, fail;
  char version[ADCP_OBJECT_VERSION_MAX + 1];
} seen_written;

static int on_written(void *ctx, const char *key, const char *native_version, adcp_error *err) {
  seen_written *w = ctx;
  (void)key;
  w->calls++;
  snprintf(w->version, sizeof w->version, "%s", native_version);
  return w->fail ? adcp_error_set(err, ADCP_ESTATE_UNAVAILABLE, "recording refused") : 0;
}

static int put_observed(conf_state *s, adcp_object_put_result *r, seen_written *w, const char *key, const void *b,
                        size_t n, adcp_error *err) {
  adcp_object_put_input in = {key, b, n, "application/x-ndjson", NULL, 0};
  memset(w->version, 0, sizeof w->version), w->calls = 0;
  return adcp_object_put_observed(s->p, r, &in, on_written, w, NULL, err);
}

static void expect_gone(conf_state *s, const char *key, const char *ver) {
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_error err;
  assert_int_equal(get(s, &out, key, ver, 1 << 20, &err), ADCP_ENOT_FOUND);
  adcp_buf_free(&out);
}

static void c_put_observed(void **state) {
  conf_state *s = *state;
  char key[512], key2[512];
  key_of(s, key, sizeof key, "observed/object.jsonl");
  key_of(s, key2, sizeof key2, "observed/refused.jsonl");
  adcp_object_put_result r1, r2;
  seen_written w = {0};
  adcp_error err;
  assert_int_equal(put_observed(s, &r1, &w, key, FIRST, 16, &err), 0);
  assert_int_equal(r1.outcome, ADCP_OBJECT_CREATED);
  assert_true(w.calls <= 1);
  if (w.calls) assert_string_equal(w.version, r1.native_version);
  int reports = w.calls;
  /* identical bytes: adopted; a reported version of ours was removed */
  assert_int_equal(put_observed(s, &r2, &w, key, FIRST, 16, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r1.native_version);
  assert_int_equal(w.calls, reports);
  if (w.calls) assert_string_not_equal(w.version, r1.native_version), expect_gone(s, key, w.version);
  /* different bytes: conflict, ours removed, the object untouched */
  assert_int_equal(put_observed(s, &r2, &w, key, "{\"a\":1}\n{\"b\":3}\n", 16, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(w.calls, reports);
  if (w.calls) expect_gone(s, key, w.version);
  expect_bytes(s, key, r1.native_version, FIRST, 16);
  /* the caller cannot record it: its code and message, nothing left */
  w.fail = 1;
  int rc = put_observed(s, &r2, &w, key2, FIRST, 16, &err);
  assert_int_equal(w.calls, reports);
  if (!w.calls) {
    assert_int_equal(rc, 0);
    return;
  }
  assert_int_equal(rc, ADCP_ESTATE_UNAVAILABLE);
  assert_string_equal(err.message, "recording refused");
  expect_gone(s, key2, w.version);
}

typedef struct racer {
  conf_state *s;
  pthread_barrier_t *bar;
  const char *key;
  char body[64];
  size_t len;
  int rc;
  adcp_object_put_result r;
} racer;

static void *race(void *arg) {
  racer *r = arg;
  adcp_error err;
  pthread_barrier_wait(r->bar);
  r->rc = put(r->s, &r->r, r->key, r->body, r->len, &err);
  return NULL;
}

static void run_race(conf_state *s, const char *key, int same_bytes, racer *rs) {
  pthread_t th[CONCURRENT_WRITERS];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, CONCURRENT_WRITERS);
  for (int i = 0; i < CONCURRENT_WRITERS; i++) {
    rs[i].s = s, rs[i].bar = &bar, rs[i].key = key;
    rs[i].len = (size_t)snprintf(rs[i].body, sizeof rs[i].body, "{\"writer\":%d}\n", same_bytes ? 0 : i);
    assert_int_equal(pthread_create(&th[i], NULL, race, &rs[i]), 0);
  }
  for (int i = 0; i < CONCURRENT_WRITERS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&bar);
}

static void c_concurrent_identical(void **state) {
  conf_state *s = *state;
  for (int round = 0; round < 3; round++) {
    char rel[64], key[512];
    snprintf(rel, sizeof rel, "race-same/%d.jsonl", round);
    key_of(s, key, sizeof key, rel);
    racer rs[CONCURRENT_WRITERS];
    memset(rs, 0, sizeof rs);
    run_race(s, key, 1, rs);
    int created = 0, adopted = 0;
    for (int i = 0; i < CONCURRENT_WRITERS; i++) {
      assert_int_equal(rs[i].rc, 0);
      created += rs[i].r.outcome == ADCP_OBJECT_CREATED;
      adopted += rs[i].r.outcome == ADCP_OBJECT_ADOPTED_IDENTICAL;
      assert_string_equal(rs[i].r.native_version, rs[0].r.native_version);
    }
    assert_int_equal(created, 1);
    assert_int_equal(adopted, CONCURRENT_WRITERS - 1);
    expect_bytes(s, key, rs[0].r.native_version, rs[0].body, rs[0].len);
  }
}

static void c_concurrent_different(void **state) {
  conf_state *s = *state;
  for (int round = 0; round < 3; round++) {
    char rel[64], key[512];
    snprintf(rel, sizeof rel, "race-diff/%d.jsonl", round);
    key_of(s, key, sizeof key, rel);
    racer rs[CONCURRENT_WRITERS];
    memset(rs, 0, sizeof rs);
    run_race(s, key, 0, rs);
    int created = 0, conflicts = 0, winner = -1;
    for (int i = 0; i < CONCURRENT_WRITERS; i++) {
      if (rs[i].rc == 0 && rs[i].r.outcome == ADCP_OBJECT_CREATED) created++, winner = i;
      else if (rs[i].rc == ADCP_ECONTENT_CONFLICT) conflicts++;
      else fail_msg("writer %d: rc %d outcome %d", i, rs[i].rc, rs[i].r.outcome);
    }
    assert_int_equal(created, 1);
    assert_int_equal(conflicts, CONCURRENT_WRITERS - 1);
    for (int i = 0; i < CONCURRENT_WRITERS; i++)
      if (i != winner && rs[i].r.native_version[0])
        assert_string_equal(rs[i].r.native_version, rs[winner].r.native_version);
    expect_bytes(s, key, rs[winner].r.native_version, rs[winner].body, rs[winner].len);
  }
}

static void c_pinned_get_and_limits(void **state) {
  conf_state *s = *state;
  char key[512], absent[512];
  key_of(s, key, sizeof key, "get/object.jsonl");
  key_of(s, absent, sizeof absent, "get/absent.jsonl");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put(s, &r, key, FIRST, 16, &err), 0);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(adcp_buf_append_str(&out, "keep"), 0);
  assert_int_equal(get(s, &out, key, "not-a-version", 1024, &err), ADCP_ENOT_FOUND);
  assert_int_equal(get(s, &out, absent, r.native_version, 1024, &err), ADCP_ENOT_FOUND);
  /* max_bytes: one byte short is refused (and out untouched); exact fits */
  assert_int_equal(get(s, &out, key, r.native_version, 15, &err), ADCP_EROWS_INTEGRITY_FAILED);
  assert_int_equal(get(s, &out, key, r.native_version, 0, &err), ADCP_EROWS_INTEGRITY_FAILED);
  assert_int_equal(out.len, 4);
  assert_int_equal(get(s, &out, key, r.native_version, 16, &err), 0);
  assert_int_equal(out.len, 20);
  assert_memory_equal(out.data, "keep", 4);
  assert_memory_equal(out.data + 4, FIRST, 16);
  adcp_buf_free(&out);
}

static void c_ranged_get(void **state) {
  conf_state *s = *state;
  if (!(s->p->capabilities & ADCP_OBJECT_CAP_RANGED_READS)) {
    skip();
    return;
  }
  char key[512];
  key_of(s, key, sizeof key, "range/object.jsonl");
  adcp_object_put_result r;
  adcp_error err;
  assert_int_equal(put(s, &r, key, FIRST, 16, &err), 0);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input in = {key, r.native_version, 1, 8, 8, 8};
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 8);
  assert_memory_equal(out.data, "{\"b\":2}\n", 8);
  adcp_buf_reset(&out);
  in.max_bytes = 7; /* the range itself exceeds the cap */
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  in.offset = 9, in.length = 8, in.max_bytes = 1024; /* beyond the object */
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  in.offset = 17, in.length = 0;
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  in.offset = 16, in.length = 0; /* zero-length range: existence and size only */
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), 0);
  assert_int_equal(out.len, 0);
  in.native_version = "not-a-version";
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), ADCP_ENOT_FOUND);
  in.native_version = r.native_version, in.offset = UINT64_MAX, in.length = 2;
  assert_int_equal(adcp_object_get(s->p, &out, &in, NULL, &err), ADCP_EROWS_INTEGRITY_FAILED);
  adcp_buf_free(&out);
}

static void c_pinned_delete(void **state) {
  conf_state *s = *state;
  char key[512], absent[512];
  key_of(s, key, sizeof key, "delete/object.jsonl");
  key_of(s, absent, sizeof absent, "delete/never.jsonl");
  adcp_object_put_result r;
  adcp_error err;
  int outcome;
  assert_int_equal(put(s, &r, key, FIRST, 16, &err), 0);
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, "not-a-version", NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_VERSION_MISMATCH);
  expect_bytes(s, key, r.native_version, FIRST, 16); /* not deleted */
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, "", NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_ABSENT); /* unusable version names nothing */
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r.native_version, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_DELETED);
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r.native_version, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_ABSENT);
  assert_int_equal(adcp_object_delete(s->p, &outcome, absent, r.native_version, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_ABSENT);
  adcp_buf out;
  adcp_buf_init(&out);
  assert_int_equal(get(s, &out, key, r.native_version, 1024, &err), ADCP_ENOT_FOUND);
  adcp_buf_free(&out);
}

static void c_write_unique_version(void **state) {
  conf_state *s = *state;
  char key[512];
  key_of(s, key, sizeof key, "unique/object.jsonl");
  adcp_object_put_result r1, r2;
  adcp_error err;
  int outcome;
  assert_int_equal(put(s, &r1, key, FIRST, 16, &err), 0);
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r1.native_version, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_DELETED);
  assert_int_equal(put(s, &r2, key, FIRST, 16, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_CREATED);
  assert_string_not_equal(r2.native_version, r1.native_version);
  /* a delayed delete of the stale version must not remove the re-creation */
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r1.native_version, NULL, &err), 0);
  assert_int_not_equal(outcome, ADCP_OBJECT_DELETED);
  expect_bytes(s, key, r2.native_version, FIRST, 16);
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r2.native_version, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_DELETED);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Pages through `prefix` with page_size 3; adds keys outside the prefix between pages. */
static size_t list_all(conf_state *s, const char *prefix, char **got, size_t max, int disturb) {
  adcp_error err;
  char *token = NULL;
  size_t n = 0;
  for (int page_no = 0;; page_no++) {
    adcp_object_list_page pg;
    int rc = adcp_object_list(s->p, &pg, prefix, token, 3, NULL, &err);
    if (rc) fail_msg("list: %s", err.message);
    assert_true(pg.n_entries <= 3);
    if (token) {
      /* The same token gives the same page again (stable). */
      adcp_object_list_page again;
      assert_int_equal(adcp_object_list(s->p, &again, prefix, token, 3, NULL, &err), 0);
      assert_int_equal(again.n_entries, pg.n_entries);
      for (size_t i = 0; i < pg.n_entries; i++) assert_string_equal(again.entries[i].key, pg.entries[i].key);
      adcp_object_list_page_free(&again);
    }
    for (size_t i = 0; i < pg.n_entries; i++) {
      assert_true(n < max);
      got[n++] = strdup(pg.entries[i].key);
      assert_true(pg.entries[i].native_version && pg.entries[i].native_version[0]);
    }
    free(token);
    token = pg.next_token ? strdup(pg.next_token) : NULL;
    if (pg.next_token) assert_int_equal(pg.n_entries, 3);
    adcp_object_list_page_free(&pg);
    if (disturb) {
      /* keys outside the listed prefix, some sorting inside its range by bytes */
      const char *rels[] = {"lisu", "list-x/y.jsonl", "lis/z.jsonl", "other/a.jsonl", "list0"};
      char rel[64], key[512];
      snprintf(rel, sizeof rel, "%s.%d", rels[page_no % 5], page_no);
      adcp_object_put_result r;
      assert_int_equal(put(s, &r, key_of(s, key, sizeof key, rel), "x\n", 2, &err), 0);
    }
    if (!token) break;
  }
  return n;
}

static void c_list_paging(void **state) {
  conf_state *s = *state;
  if (!(s->p->capabilities & ADCP_OBJECT_CAP_LIST)) {
    skip();
    return;
  }
  /* Names chosen to catch directory-order vs byte-order mistakes ('-' < '.' < '/' < '0'). */
  const char *rels[] = {"a-b", "a.b",     "a/b-c",      "a/b.d", "a/b/c", "a/b/c0", "a0",  "B",  "b/c/d/e", "b/c/d-e",
                        "b=1", "c.jsonl", "c.jsonl.gz", "d/0",   "d/1",   "d/10",   "d/2", "e_", "e-",      "z/z/z"};
  size_t n = sizeof rels / sizeof rels[0];
  char *want[32];
  adcp_error err;
  char prefix[512];
  snprintf(prefix, sizeof prefix, "%s/list/", s->base);
  for (size_t i = 0; i < n; i++) {
    char key[512], rel[64];
    snprintf(rel, sizeof rel, "list/%s", rels[i]);
    key_of(s, key, sizeof key, rel);
    adcp_object_put_result r;
    /* No key is also a "directory" of another key: a filesystem cannot hold both. */
    int rc = put(s, &r, key, rels[i], strlen(rels[i]), &err);
    if (rc) fail_msg("put %s: %s", key, err.message);
    want[i] = strdup(key);
  }
  qsort(want, n, sizeof *want, cmp_str);
  char *got[64];
  size_t g = list_all(s, prefix, got, 64, 1);
  assert_int_equal(g, n);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(got[i], want[i]);
    if (i) assert_true(strcmp(got[i - 1], got[i]) < 0); /* sorted, no duplicates */
  }
  /* One big page returns the same keys and no token; sizes and versions match head. */
  adcp_object_list_page pg;
  assert_int_equal(adcp_object_list(s->p, &pg, prefix, NULL, 1000, NULL, &err), 0);
  assert_int_equal(pg.n_entries, n);
  assert_null(pg.next_token);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(pg.entries[i].key, want[i]);
    if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
      adcp_object_info info;
      assert_int_equal(adcp_object_head(s->p, &info, want[i], NULL, &err), 0);
      assert_int_equal(info.size, pg.entries[i].size);
      assert_string_equal(info.native_version, pg.entries[i].native_version);
    }
  }
  adcp_object_list_page_free(&pg);
  /* A partial-segment string prefix ("…/list/a") and an empty listing. */
  char sub[600];
  snprintf(sub, sizeof sub, "%sa", prefix);
  assert_int_equal(adcp_object_list(s->p, &pg, sub, NULL, 1000, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 7); /* a-b a.b a/b-c a/b.d a/b/c a/b/c0 a0 */
  adcp_object_list_page_free(&pg);
  snprintf(sub, sizeof sub, "%s/nothing-here/", s->base);
  assert_int_equal(adcp_object_list(s->p, &pg, sub, NULL, 10, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 0);
  assert_null(pg.next_token);
  adcp_object_list_page_free(&pg);
  /* Outside the owned prefix is refused. */
  assert_int_equal(adcp_object_list(s->p, &pg, "elsewhere/", NULL, 10, NULL, &err), ADCP_EUNSAFE_BINDING);
  for (size_t i = 0; i < n; i++) free(want[i]), free(got[i]);
}

static void c_deadline_and_cancel(void **state) {
  conf_state *s = *state;
  char key[512];
  key_of(s, key, sizeof key, "deadline/object.jsonl");
  adcp_error err;
  adcp_object_put_result r;
  adcp_object_put_input in = {key, (const uint8_t *)FIRST, 16, "application/x-ndjson", NULL, 0};
  adcp_object_ctx expired = {adcp_object_now_ms() - 1, NULL};
  if (expired.deadline_ms == 0) expired.deadline_ms = 1;
  volatile int flag = 1;
  adcp_object_ctx cancelled = {0, &flag};
  adcp_object_ctx fine = {adcp_object_now_ms() + 60000, NULL};

  assert_int_equal(adcp_object_put(s->p, &r, &in, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_int_equal(err.code, ADCP_EDEADLINE_EXCEEDED);
  assert_int_not_equal(r.outcome, ADCP_OBJECT_CREATED); /* nothing claimed */
  assert_int_equal(adcp_object_put(s->p, &r, &in, &cancelled, &err), ADCP_EABORTED);
  if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
    adcp_object_info info;
    assert_int_equal(adcp_object_head(s->p, &info, key, NULL, &err), ADCP_ENOT_FOUND);
  }
  assert_int_equal(adcp_object_put(s->p, &r, &in, &fine, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);

  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input gin = {key, r.native_version, 0, 0, 0, 1024};
  assert_int_equal(adcp_object_get(s->p, &out, &gin, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_int_equal(adcp_object_get(s->p, &out, &gin, &cancelled, &err), ADCP_EABORTED);
  assert_int_equal(out.len, 0);
  int outcome;
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r.native_version, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r.native_version, &cancelled, &err), ADCP_EABORTED);
  assert_int_equal(adcp_object_get(s->p, &out, &gin, &fine, &err), 0); /* still there */
  assert_int_equal(adcp_object_probe(s->p, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_int_equal(adcp_object_probe(s->p, &cancelled, &err), ADCP_EABORTED);
  if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
    adcp_object_info info;
    assert_int_equal(adcp_object_head(s->p, &info, key, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  }
  if (s->p->capabilities & ADCP_OBJECT_CAP_LIST) {
    adcp_object_list_page pg;
    assert_int_equal(adcp_object_list(s->p, &pg, NULL, NULL, 10, &cancelled, &err), ADCP_EABORTED);
    assert_int_equal(adcp_object_list(s->p, &pg, NULL, NULL, 10, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  }
  adcp_buf_free(&out);
}

static void c_keys_outside_prefix(void **state) {
  conf_state *s = *state;
  adcp_error err;
  adcp_object_put_result r;
  char inside[600];
  snprintf(inside, sizeof inside, "%s/../escape.jsonl", s->base);
  const char *outside[] = {"elsewhere/x.jsonl", s->t->prefix};
  for (size_t i = 0; i < 2; i++) assert_int_equal(put(s, &r, outside[i], "x", 1, &err), ADCP_EUNSAFE_BINDING);
  const char *bad[] = {inside, "", "/abs/x", "a\\b", "a//b", "a/./b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(put(s, &r, bad[i], "x", 1, &err), ADCP_EINVALID_INPUT);
  char key[512];
  adcp_object_put_input in = {key_of(s, key, sizeof key, "ct.jsonl"), (const uint8_t *)"x", 1, "text/plain", NULL, 0};
  assert_int_equal(adcp_object_put(s->p, &r, &in, NULL, &err), ADCP_EINVALID_INPUT);
}

static void c_probe_refusals(void **state) {
  conf_state *s = *state;
  for (size_t i = 0; i < s->t->n_unsafe; i++) {
    const conformance_unsafe_case *c = &s->t->unsafe[i];
    adcp_object_provider *p = NULL;
    adcp_error err;
    int rc = c->make(s->t->env, &p, &err);
    if (rc) fail_msg("unsafe case %s: make: %s", c->name, err.message);
    rc = adcp_object_probe(p, NULL, &err);
    if (rc != ADCP_EUNSAFE_BINDING) fail_msg("unsafe case %s: probe returned %d (%s)", c->name, rc, err.message);
    if (!strstr(err.message, c->reason))
      fail_msg("unsafe case %s: reason \"%s\" lacks \"%s\"", c->name, err.message, c->reason);
    adcp_object_provider_free(p);
  }
}

/* ---- staged writes (optional part of the port) ------------------------------------ */

#define STAGE_WRITERS 8

/* Without staged writes the port must refuse stage_put outright (never hand
 * back a stage). Returns 1 when the provider stages and the case should run. */
static int stage_supported_or_refused(conf_state *s) {
  if (adcp_object_stage_supported(s->p)) return 1;
  static char sentinel;
  adcp_object_stage *st = (adcp_object_stage *)&sentinel; /* must be reset to NULL */
  adcp_error err;
  assert_int_equal(adcp_object_stage_put(s->p, &st, (const uint8_t *)FIRST, 16, NULL, &err), ADCP_EINVALID_INPUT);
  assert_null(st);
  return 0;
}

static adcp_object_stage *stage(conf_state *s, const void *b, size_t n) {
  adcp_object_stage *st = NULL;
  adcp_error err;
  int rc = adcp_object_stage_put(s->p, &st, b, n, NULL, &err);
  if (rc) fail_msg("stage_put: %s", err.message);
  assert_non_null(st);
  return st;
}

/* in->bytes and in->len are decoys: stage_link must ignore them and store the staged bytes. */
static int link_stage(conf_state *s, adcp_object_put_result *r, adcp_object_stage *st, const char *key, adcp_error *err) {
  adcp_object_put_input in = {key, (const uint8_t *)"decoy\n", 6, "application/x-ndjson", NULL, 0};
  return adcp_object_stage_link(s->p, r, st, &in, NULL, err);
}

/* Number of keys listed under the whole owned prefix (staging may live outside s->base). */
static size_t count_owned(conf_state *s, const char *must_have) {
  adcp_error err;
  char *token = NULL;
  size_t n = 0;
  int found = 0;
  for (;;) {
    adcp_object_list_page pg;
    int rc = adcp_object_list(s->p, &pg, NULL, token, 1000, NULL, &err);
    if (rc) fail_msg("list: %s", err.message);
    for (size_t i = 0; i < pg.n_entries; i++) found |= must_have && strcmp(pg.entries[i].key, must_have) == 0;
    n += pg.n_entries;
    free(token);
    token = pg.next_token ? strdup(pg.next_token) : NULL;
    adcp_object_list_page_free(&pg);
    if (!token) break;
  }
  if (must_have && !found) fail_msg("%s is not listed", must_have);
  return n;
}

static void c_stage_create_adopt_conflict(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  char key[512];
  key_of(s, key, sizeof key, "stage/object.jsonl");
  adcp_object_put_result r1, r2;
  adcp_error err;
  adcp_object_stage *a = stage(s, FIRST, 16);
  assert_int_equal(link_stage(s, &r1, a, key, &err), 0);
  assert_int_equal(r1.outcome, ADCP_OBJECT_CREATED);
  assert_true(r1.native_version[0] != '\0');
  expect_bytes(s, key, r1.native_version, FIRST, 16);
  /* a retry on the same handle converges (the first attempt may have been "unknown") */
  assert_int_equal(link_stage(s, &r2, a, key, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r1.native_version);
  /* a second stage of identical bytes: adopted, the first version */
  adcp_object_stage *b = stage(s, FIRST, 16);
  memset(&r2, 0, sizeof r2);
  assert_int_equal(link_stage(s, &r2, b, key, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r1.native_version);
  /* different bytes (same length, then different length): conflict, original untouched */
  adcp_object_stage *c = stage(s, "{\"a\":1}\n{\"b\":3}\n", 16), *d = stage(s, "{\"c\":3}\n", 8);
  assert_int_equal(link_stage(s, &r2, c, key, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(err.code, ADCP_ECONTENT_CONFLICT);
  assert_int_not_equal(r2.outcome, ADCP_OBJECT_CREATED);
  if (r2.native_version[0]) assert_string_equal(r2.native_version, r1.native_version);
  assert_int_equal(link_stage(s, &r2, d, key, &err), ADCP_ECONTENT_CONFLICT);
  if (r2.native_version[0]) assert_string_equal(r2.native_version, r1.native_version);
  expect_bytes(s, key, r1.native_version, FIRST, 16);
  if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
    adcp_object_info info;
    assert_int_equal(adcp_object_head(s->p, &info, key, NULL, &err), 0);
    assert_int_equal(info.size, 16);
    assert_string_equal(info.native_version, r1.native_version);
  }
  /* the conflicting stage still links where nothing is */
  char other[512];
  key_of(s, other, sizeof other, "stage/other.jsonl");
  assert_int_equal(link_stage(s, &r2, c, other, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_CREATED);
  expect_bytes(s, other, r2.native_version, "{\"a\":1}\n{\"b\":3}\n", 16);
  adcp_object_stage_drop(s->p, a);
  adcp_object_stage_drop(s->p, b);
  adcp_object_stage_drop(s->p, c);
  adcp_object_stage_drop(s->p, d);
  adcp_object_stage_drop(s->p, NULL); /* NULL is fine */
}

static void c_stage_outside_prefix(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  adcp_object_stage *st = stage(s, FIRST, 16);
  adcp_object_put_result r;
  adcp_error err;
  const char *outside[] = {"elsewhere/x.jsonl", s->t->prefix};
  for (size_t i = 0; i < 2; i++) {
    assert_int_equal(link_stage(s, &r, st, outside[i], &err), ADCP_EUNSAFE_BINDING);
    assert_int_not_equal(r.outcome, ADCP_OBJECT_CREATED);
  }
  char escape[600];
  snprintf(escape, sizeof escape, "%s/../escape.jsonl", s->base);
  const char *bad[] = {escape, "", "a//b"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(link_stage(s, &r, st, bad[i], &err), ADCP_EINVALID_INPUT);
  assert_int_equal(link_stage(s, &r, NULL, "elsewhere/x.jsonl", &err), ADCP_EINVALID_INPUT); /* no stage */
  /* the refusals consumed nothing: the stage still links inside the prefix */
  char key[512];
  key_of(s, key, sizeof key, "stage-outside/object.jsonl");
  assert_int_equal(link_stage(s, &r, st, key, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  expect_bytes(s, key, r.native_version, FIRST, 16);
  adcp_object_stage_drop(s->p, st);
}

static void c_stage_not_listed(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  if (!(s->p->capabilities & ADCP_OBJECT_CAP_LIST)) {
    skip();
    return;
  }
  char key[512], mine[600];
  key_of(s, key, sizeof key, "stage-list/object.jsonl");
  snprintf(mine, sizeof mine, "%s/", s->base);
  size_t before = count_owned(s, NULL);
  adcp_object_stage *a = stage(s, FIRST, 16), *b = stage(s, "x\n", 2);
  assert_int_equal(count_owned(s, NULL), before); /* temporaries are not keys */
  adcp_object_list_page pg;
  adcp_error err;
  assert_int_equal(adcp_object_list(s->p, &pg, mine, NULL, 1000, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 0);
  adcp_object_list_page_free(&pg);
  adcp_object_put_result r;
  assert_int_equal(link_stage(s, &r, a, key, &err), 0);
  assert_int_equal(count_owned(s, key), before + 1); /* the object, and only it */
  assert_int_equal(adcp_object_list(s->p, &pg, mine, NULL, 1000, NULL, &err), 0);
  assert_int_equal(pg.n_entries, 1);
  assert_string_equal(pg.entries[0].key, key);
  assert_string_equal(pg.entries[0].native_version, r.native_version);
  assert_int_equal(pg.entries[0].size, 16);
  adcp_object_list_page_free(&pg);
  adcp_object_stage_drop(s->p, a);
  adcp_object_stage_drop(s->p, b); /* never linked */
  assert_int_equal(count_owned(s, key), before + 1);
}

static void c_stage_drop_keeps_object(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  char key[512];
  key_of(s, key, sizeof key, "stage-drop/object.jsonl");
  adcp_object_put_result r;
  adcp_error err;
  adcp_object_stage *st = stage(s, FIRST, 16);
  assert_int_equal(link_stage(s, &r, st, key, &err), 0);
  adcp_object_stage_drop(s->p, st);
  expect_bytes(s, key, r.native_version, FIRST, 16);
  if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
    adcp_object_info info;
    assert_int_equal(adcp_object_head(s->p, &info, key, NULL, &err), 0);
    assert_string_equal(info.native_version, r.native_version); /* the drop did not touch it */
  }
  /* an ordinary object: plain put adopts it, a pinned delete removes it */
  adcp_object_put_result r2;
  assert_int_equal(put(s, &r2, key, FIRST, 16, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r.native_version);
  int outcome;
  assert_int_equal(adcp_object_delete(s->p, &outcome, key, r.native_version, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_DELETED);
}

typedef struct stage_racer {
  conf_state *s;
  pthread_barrier_t *bar;
  const char *key;
  int rc;
  adcp_object_put_result r;
} stage_racer;

static void *stage_race(void *arg) {
  stage_racer *r = arg;
  adcp_error err;
  adcp_object_stage *st = NULL;
  r->rc = adcp_object_stage_put(r->s->p, &st, (const uint8_t *)FIRST, 16, NULL, &err);
  pthread_barrier_wait(r->bar); /* stage first, then all links race */
  if (!r->rc) r->rc = link_stage(r->s, &r->r, st, r->key, &err);
  adcp_object_stage_drop(r->s->p, st);
  return NULL;
}

static void c_stage_concurrent_identical(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  for (int round = 0; round < 3; round++) {
    char rel[64], key[512];
    snprintf(rel, sizeof rel, "stage-race/%d.jsonl", round);
    key_of(s, key, sizeof key, rel);
    stage_racer rs[STAGE_WRITERS];
    pthread_t th[STAGE_WRITERS];
    pthread_barrier_t bar;
    memset(rs, 0, sizeof rs);
    pthread_barrier_init(&bar, NULL, STAGE_WRITERS);
    for (int i = 0; i < STAGE_WRITERS; i++) {
      rs[i].s = s, rs[i].bar = &bar, rs[i].key = key;
      assert_int_equal(pthread_create(&th[i], NULL, stage_race, &rs[i]), 0);
    }
    for (int i = 0; i < STAGE_WRITERS; i++) pthread_join(th[i], NULL);
    pthread_barrier_destroy(&bar);
    int created = 0, adopted = 0;
    for (int i = 0; i < STAGE_WRITERS; i++) {
      if (rs[i].rc) fail_msg("writer %d: rc %d", i, rs[i].rc);
      created += rs[i].r.outcome == ADCP_OBJECT_CREATED;
      adopted += rs[i].r.outcome == ADCP_OBJECT_ADOPTED_IDENTICAL;
      assert_string_equal(rs[i].r.native_version, rs[0].r.native_version);
    }
    assert_int_equal(created, 1);
    assert_int_equal(adopted, STAGE_WRITERS - 1);
    expect_bytes(s, key, rs[0].r.native_version, FIRST, 16); /* every stage was dropped */
  }
}

static void c_stage_zero_length(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  char key[512], full[512];
  key_of(s, key, sizeof key, "stage-empty/empty.jsonl");
  key_of(s, full, sizeof full, "stage-empty/full.jsonl");
  adcp_object_put_result r1, r2;
  adcp_error err;
  adcp_object_stage *a = stage(s, NULL, 0), *b = stage(s, "", 0), *c = stage(s, FIRST, 16);
  assert_int_equal(link_stage(s, &r1, a, key, &err), 0);
  assert_int_equal(r1.outcome, ADCP_OBJECT_CREATED);
  expect_bytes(s, key, r1.native_version, "", 0);
  assert_int_equal(link_stage(s, &r2, b, key, &err), 0);
  assert_int_equal(r2.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r2.native_version, r1.native_version);
  /* empty vs non-empty conflicts both ways */
  assert_int_equal(link_stage(s, &r2, c, key, &err), ADCP_ECONTENT_CONFLICT);
  assert_int_equal(put(s, &r2, full, FIRST, 16, &err), 0);
  assert_int_equal(link_stage(s, &r1, a, full, &err), ADCP_ECONTENT_CONFLICT);
  expect_bytes(s, full, r2.native_version, FIRST, 16);
  adcp_object_stage_drop(s->p, a);
  adcp_object_stage_drop(s->p, b);
  adcp_object_stage_drop(s->p, c);
}

static void c_stage_deadline_and_cancel(void **state) {
  conf_state *s = *state;
  if (!stage_supported_or_refused(s)) return;
  char key[512];
  key_of(s, key, sizeof key, "stage-deadline/object.jsonl");
  adcp_object_ctx expired = {adcp_object_now_ms() - 1, NULL};
  if (expired.deadline_ms == 0) expired.deadline_ms = 1;
  volatile int flag = 1;
  adcp_object_ctx cancelled = {0, &flag};
  adcp_object_stage *st = NULL;
  adcp_error err;
  assert_int_equal(adcp_object_stage_put(s->p, &st, (const uint8_t *)FIRST, 16, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_null(st);
  assert_int_equal(adcp_object_stage_put(s->p, &st, (const uint8_t *)FIRST, 16, &cancelled, &err), ADCP_EABORTED);
  assert_null(st);
  /* nothing to write is no excuse: the deadline is checked before the provider runs */
  assert_int_equal(adcp_object_stage_put(s->p, &st, NULL, 0, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_null(st);
  st = stage(s, FIRST, 16);
  adcp_object_put_result r;
  adcp_object_put_input in = {key, NULL, 0, "application/x-ndjson", NULL, 0};
  assert_int_equal(adcp_object_stage_link(s->p, &r, st, &in, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_int_not_equal(r.outcome, ADCP_OBJECT_CREATED);
  assert_int_equal(adcp_object_stage_link(s->p, &r, st, &in, &cancelled, &err), ADCP_EABORTED);
  if (s->p->capabilities & ADCP_OBJECT_CAP_HEAD) {
    adcp_object_info info;
    assert_int_equal(adcp_object_head(s->p, &info, key, NULL, &err), ADCP_ENOT_FOUND);
  }
  in.content_type = "text/plain"; /* the same input checks as put */
  assert_int_equal(adcp_object_stage_link(s->p, &r, st, &in, NULL, &err), ADCP_EINVALID_INPUT);
  in.content_type = "application/x-ndjson";
  assert_int_equal(adcp_object_stage_link(s->p, &r, st, &in, NULL, &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  expect_bytes(s, key, r.native_version, FIRST, 16);
  adcp_object_stage_drop(s->p, st);
}

int conformance_run(const conformance_target *t) {
  void *st = (void *)t;
#define CASE(f) cmocka_unit_test_prestate_setup_teardown(f, conf_setup, conf_teardown, st)
  const struct CMUnitTest tests[] = {
      CASE(c_probe),
      CASE(c_create_adopt_conflict),
      CASE(c_concurrent_identical),
      CASE(c_concurrent_different),
      CASE(c_pinned_get_and_limits),
      CASE(c_ranged_get),
      CASE(c_pinned_delete),
      CASE(c_write_unique_version),
      CASE(c_list_paging),
      CASE(c_deadline_and_cancel),
      CASE(c_keys_outside_prefix),
      CASE(c_probe_refusals),
      CASE(c_stage_create_adopt_conflict),
      CASE(c_stage_outside_prefix),
      CASE(c_stage_not_listed),
      CASE(c_stage_drop_keeps_object),
      CASE(c_stage_concurrent_identical),
      CASE(c_stage_zero_length),
      CASE(c_stage_deadline_and_cancel),
      CASE(c_put_observed),
  };
#undef CASE
  return _cmocka_run_group_tests(t->name, tests, sizeof tests / sizeof tests[0], NULL, NULL);
}
