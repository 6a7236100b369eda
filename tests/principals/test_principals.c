/* tests/principals/test_principals.c — the principal store and the
 * subscription-state store on SQLite and PostgreSQL: CAS under 8 concurrent
 * writers, the grant journal gapless under concurrent appends and immutable
 * in the database (raw SQL), exceptions and snapshots with CAS, keyset
 * paging stable while rows are inserted, the facade's components and its
 * durability and schema refusals. */
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

#include "adcp/inline.h"

#include "adcp/principals.h"
#include "ledger/ledger_fixture.h"

static adcp_principal_put put_of(const char *id, int64_t expected) {
  adcp_principal_put p = {.version = ADCP_PRINCIPAL_PUT_VERSION,
                          .principal_id = id,
                          .account_scope = "acct_1",
                          .display_name = "Buyer One",
                          .attributes_json = "{\"b\":2, \"a\":[1,2]}",
                          .expected_version = expected};
  return p;
}

static void principal_lifecycle(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  OK(adcp_storage_principals(&ps, s, &err));
  adcp_principal_store *again;
  OK(adcp_storage_principals(&again, s, &err));
  assert_ptr_equal(ps, again);
  assert_true(adcp_principals_is_durable(ps));

  adcp_principal p;
  adcp_principal_put in = put_of("buyer:one", 0);
  OK(adcp_principal_upsert(&p, ps, &in, &err));
  assert_int_equal(p.version, 1);
  assert_string_equal(p.status, "active");
  assert_string_equal(p.attributes_json, "{\"a\":[1,2],\"b\":2}"); /* stored canonical */
  assert_int_equal(strlen(p.created_at), 27);
  adcp_principal_clear(&p);
  /* Create again: CONFLICT, nothing written. */
  assert_int_equal(adcp_principal_upsert(&p, ps, &in, &err), ADCP_ECONFLICT);
  /* Replace with the current version; a stale one is CONFLICT. */
  in.expected_version = 1;
  in.display_name = "Buyer 1";
  OK(adcp_principal_upsert(&p, ps, &in, &err));
  assert_int_equal(p.version, 2);
  adcp_principal_clear(&p);
  assert_int_equal(adcp_principal_upsert(&p, ps, &in, &err), ADCP_ECONFLICT);
  assert_non_null(strstr(err.message, "version 2"));
  OK(adcp_principal_get(&p, ps, "buyer:one", &err));
  assert_string_equal(p.display_name, "Buyer 1");
  assert_int_equal(p.version, 2);
  adcp_principal_clear(&p);
  /* Unknown principals. */
  adcp_principal_put ghost = put_of("ghost", 3);
  assert_int_equal(adcp_principal_upsert(NULL, ps, &ghost, &err), ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_principal_get(&p, ps, "ghost", &err), ADCP_EREFERENCE_NOT_FOUND);
  /* Disable: CAS variant and the idempotent one. */
  assert_int_equal(adcp_principal_disable(&p, ps, "buyer:one", 1, &err), ADCP_ECONFLICT);
  OK(adcp_principal_disable(&p, ps, "buyer:one", 2, &err));
  assert_string_equal(p.status, "disabled");
  assert_int_equal(p.version, 3);
  adcp_principal_clear(&p);
  OK(adcp_principal_disable(&p, ps, "buyer:one", 0, &err));
  assert_int_equal(p.version, 3);
  adcp_principal_clear(&p);
  assert_int_equal(adcp_principal_disable(&p, ps, "ghost", 0, &err), ADCP_EREFERENCE_NOT_FOUND);
  /* An update keeps the status unless told; "active" re-enables. */
  in.expected_version = 3;
  OK(adcp_principal_upsert(&p, ps, &in, &err));
  assert_string_equal(p.status, "disabled");
  adcp_principal_clear(&p);
  in.expected_version = 4;
  in.status = "active";
  OK(adcp_principal_upsert(&p, ps, &in, &err));
  assert_string_equal(p.status, "active");
  adcp_principal_clear(&p);

  /* Refusals before any database work: identifiers like the ledger's, JSON. */
  const char *bad_ids[] = {"", "a\nb", "\xff\xfe", NULL};
  for (int i = 0; bad_ids[i]; i++) {
    adcp_principal_put b = put_of(bad_ids[i], 0);
    assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
    assert_non_null(strstr(err.message, "principal_id"));
  }
  char longid[300];
  memset(longid, 'x', 256);
  longid[256] = 0;
  adcp_principal_put b = put_of(longid, 0);
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  b = put_of("ok", 0);
  b.attributes_json = "[1]";
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  b.attributes_json = "{\"a\":1,\"a\":2}";
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  b.attributes_json = "{";
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  b.attributes_json = NULL;
  b.status = "paused";
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  b.status = NULL;
  b.account_scope = "";
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  b.account_scope = "acct";
  b.expected_version = -1;
  assert_int_equal(adcp_principal_upsert(NULL, ps, &b, &err), ADCP_EINVALID_INPUT);
  /* Listing: limits and cursors. */
  adcp_principal_page pg;
  assert_int_equal(adcp_principal_list(&pg, ps, 1001, NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_principal_list(&pg, ps, 10, "zz", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_principal_list(&pg, ps, 10, "e1.41", &err), ADCP_EINVALID_INPUT); /* another listing's */
  OK(adcp_principal_list(&pg, ps, 0, NULL, &err));
  assert_int_equal(pg.count, 1);
  assert_null(pg.next_cursor);
  adcp_principal_page_free(&pg);
  adcp_storage_close(s);
}

/* ---- CAS under 8 concurrent writers -------------------------------------- */

#define WRITERS 8
#define ROUNDS 12

typedef struct cas_shared {
  const char *url;
  pthread_barrier_t barrier;
  int wins[ROUNDS], conflicts[ROUNDS], other_errors;
  int64_t retry_version[WRITERS];
} cas_shared;

typedef struct cas_arg {
  cas_shared *sh;
  int idx;
} cas_arg;

static void *cas_writer(void *p) {
  cas_arg *a = p;
  cas_shared *sh = a->sh;
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_principal_store *ps = NULL;
  adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
  if (adcp_storage_open(&s, sh->url, &o, &err) || adcp_storage_principals(&ps, s, &err)) {
    __atomic_add_fetch(&sh->other_errors, 1, __ATOMIC_SEQ_CST);
    for (int r = 0; r < 2 * ROUNDS + 1; r++) pthread_barrier_wait(&sh->barrier);
    adcp_storage_close(s);
    return NULL;
  }
  char name[32];
  snprintf(name, sizeof name, "writer %d", a->idx);
  for (int r = 0; r < ROUNDS; r++) {
    /* Everyone reads the same version, then everyone writes at once. */
    adcp_principal cur;
    int rc = adcp_principal_get(&cur, ps, "shared", &err);
    pthread_barrier_wait(&sh->barrier);
    if (!rc) {
      adcp_principal_put in = put_of("shared", cur.version);
      in.display_name = name;
      rc = adcp_principal_upsert(NULL, ps, &in, &err);
      if (!rc) __atomic_add_fetch(&sh->wins[r], 1, __ATOMIC_SEQ_CST);
      else if (rc == ADCP_ECONFLICT) __atomic_add_fetch(&sh->conflicts[r], 1, __ATOMIC_SEQ_CST);
    }
    if (rc && rc != ADCP_ECONFLICT) __atomic_add_fetch(&sh->other_errors, 1, __ATOMIC_SEQ_CST);
    adcp_principal_clear(&cur);
    pthread_barrier_wait(&sh->barrier);
  }
  /* Losers retry with the new version until they win: everyone succeeds. */
  pthread_barrier_wait(&sh->barrier);
  for (int tries = 0; tries < 1000; tries++) {
    adcp_principal cur, got;
    int rc = adcp_principal_get(&cur, ps, "shared", &err);
    if (!rc) {
      adcp_principal_put in = put_of("shared", cur.version);
      in.display_name = name;
      rc = adcp_principal_upsert(&got, ps, &in, &err);
      if (!rc) sh->retry_version[a->idx] = got.version;
      adcp_principal_clear(&got);
    }
    adcp_principal_clear(&cur);
    if (!rc) break;
    if (rc != ADCP_ECONFLICT) {
      __atomic_add_fetch(&sh->other_errors, 1, __ATOMIC_SEQ_CST);
      break;
    }
  }
  adcp_storage_close(s);
  return NULL;
}

static void cas_eight_writers(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  OK(adcp_storage_principals(&ps, s, &err));
  adcp_principal_put in = put_of("shared", 0);
  OK(adcp_principal_upsert(NULL, ps, &in, &err));
  cas_shared sh;
  memset(&sh, 0, sizeof sh);
  sh.url = f->url;
  pthread_barrier_init(&sh.barrier, NULL, WRITERS);
  pthread_t th[WRITERS];
  cas_arg args[WRITERS];
  for (int i = 0; i < WRITERS; i++) {
    args[i] = (cas_arg){&sh, i};
    assert_int_equal(pthread_create(&th[i], NULL, cas_writer, &args[i]), 0);
  }
  for (int i = 0; i < WRITERS; i++) pthread_join(th[i], NULL);
  pthread_barrier_destroy(&sh.barrier);
  assert_int_equal(sh.other_errors, 0);
  for (int r = 0; r < ROUNDS; r++) {
    assert_int_equal(sh.wins[r], 1);                /* exactly one wins each version */
    assert_int_equal(sh.conflicts[r], WRITERS - 1); /* every loser: CONFLICT */
  }
  /* The retries: 8 distinct new versions after the rounds. */
  int seen[WRITERS] = {0};
  for (int i = 0; i < WRITERS; i++) {
    int64_t v = sh.retry_version[i] - (1 + ROUNDS) - 1;
    assert_true(v >= 0 && v < WRITERS);
    assert_int_equal(seen[v]++, 0);
  }
  adcp_principal p;
  OK(adcp_principal_get(&p, ps, "shared", &err));
  assert_int_equal(p.version, 1 + ROUNDS + WRITERS);
  adcp_principal_clear(&p);
  adcp_storage_close(s);
}

/* ---- the grant journal ------------------------------------------------------ */

#define APPENDS 25

typedef struct journal_arg {
  const char *url;
  int idx, errors;
  int64_t seqs[APPENDS];
} journal_arg;

static void *journal_writer(void *p) {
  journal_arg *a = p;
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_subscription_store *st = NULL;
  adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
  if (adcp_storage_open(&s, a->url, &o, &err) || adcp_storage_subscriptions(&st, s, &err)) {
    a->errors++;
    adcp_storage_close(s);
    return NULL;
  }
  for (int i = 0; i < APPENDS; i++) {
    char subject[32];
    snprintf(subject, sizeof subject, "report_%d_%d", a->idx, i);
    adcp_grant_entry e;
    if (adcp_subscription_append(&e, st, "subscriber", i % 3 ? ADCP_GRANT : ADCP_REVOKE, subject, "acct_1", &err))
      a->errors++;
    else a->seqs[i] = e.seq;
  }
  adcp_storage_close(s);
  return NULL;
}

static void journal_gapless_concurrent(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  adcp_subscription_store *st;
  OK(adcp_storage_principals(&ps, s, &err));
  OK(adcp_storage_subscriptions(&st, s, &err));
  adcp_principal_put in = put_of("subscriber", 0);
  OK(adcp_principal_upsert(NULL, ps, &in, &err));
  assert_int_equal(adcp_subscription_append(NULL, st, "nobody", ADCP_GRANT, "r", "a", &err), ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_subscription_append(NULL, st, "subscriber", ADCP_GRANT, "", "a", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_subscription_append(NULL, st, "subscriber", (adcp_grant_action)7, "r", "a", &err),
                   ADCP_EINVALID_INPUT);
  pthread_t th[WRITERS];
  journal_arg args[WRITERS];
  memset(args, 0, sizeof args);
  for (int i = 0; i < WRITERS; i++) {
    args[i].url = f->url, args[i].idx = i;
    assert_int_equal(pthread_create(&th[i], NULL, journal_writer, &args[i]), 0);
  }
  for (int i = 0; i < WRITERS; i++) pthread_join(th[i], NULL);
  static int seen[WRITERS * APPENDS + 1];
  memset(seen, 0, sizeof seen);
  for (int i = 0; i < WRITERS; i++) {
    assert_int_equal(args[i].errors, 0);
    for (int k = 0; k < APPENDS; k++) {
      assert_true(args[i].seqs[k] >= 1 && args[i].seqs[k] <= WRITERS * APPENDS);
      assert_int_equal(seen[args[i].seqs[k]]++, 0);
      if (k) assert_true(args[i].seqs[k] > args[i].seqs[k - 1]); /* one writer's entries keep its order */
    }
  }
  /* Read back in pages: 1..200 with no gap. */
  int64_t after = 0, expect = 1;
  for (;;) {
    adcp_grant_page pg;
    OK(adcp_subscription_journal(&pg, st, "subscriber", after, 33, &err));
    assert_int_equal(pg.head, WRITERS * APPENDS);
    for (size_t i = 0; i < pg.count; i++) assert_int_equal(pg.items[i].seq, expect++);
    size_t n = pg.count;
    if (n) after = pg.items[n - 1].seq;
    adcp_grant_page_free(&pg);
    if (!n) break;
  }
  assert_int_equal(expect, WRITERS * APPENDS + 1);
  adcp_grant_page pg;
  assert_int_equal(adcp_subscription_journal(&pg, st, "nobody", 0, 10, &err), ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_subscription_journal(&pg, st, "subscriber", -1, 10, &err), ADCP_EINVALID_INPUT);
  adcp_storage_close(s);
}

static void journal_immutable_in_database(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  adcp_subscription_store *st;
  OK(adcp_storage_principals(&ps, s, &err));
  OK(adcp_storage_subscriptions(&st, s, &err));
  adcp_principal_put in = put_of("p1", 0);
  OK(adcp_principal_upsert(NULL, ps, &in, &err));
  adcp_grant_entry e;
  OK(adcp_subscription_append(&e, st, "p1", ADCP_GRANT, "report_a", "acct_1", &err));
  assert_int_equal(e.seq, 1);
  assert_string_equal(e.subject, "report_a");
  OK(adcp_subscription_append(&e, st, "p1", ADCP_REVOKE, "report_a", "acct_1", &err));
  assert_int_equal(e.seq, 2);
  /* Raw SQL, bypassing the store: the database itself refuses. */
  adcp_sql_conn *c = adcp_storage_sql(s);
  const char *refused[] = {"UPDATE adcp_subscription_grants SET subject = 'report_b' WHERE seq = 1",
                           "UPDATE adcp_subscription_grants SET seq = seq + 10",
                           "DELETE FROM adcp_subscription_grants WHERE seq = 2", "DELETE FROM adcp_subscription_grants",
                           /* A gap, a duplicate and a rewind are refused as well. */
                           "INSERT INTO adcp_subscription_grants (principal_id, seq, action, subject, scope) "
                           "VALUES ('p1', 4, 'grant', 'x', 'y')",
                           "INSERT INTO adcp_subscription_grants (principal_id, seq, action, subject, scope) "
                           "VALUES ('p1', 2, 'grant', 'x', 'y')",
                           "INSERT INTO adcp_subscription_grants (principal_id, seq, action, subject, scope) "
                           "VALUES ('p1', 1, 'grant', 'x', 'y')",
                           NULL};
  for (int i = 0; refused[i]; i++) {
    int rc = adcp_sql_exec(c, refused[i], NULL, 0, &err);
    if (!rc) fail_msg("the database accepted: %s", refused[i]);
    assert_true(adcp_sql_last_failure(c) == ADCP_SQL_FAIL_CHECK || adcp_sql_last_failure(c) == ADCP_SQL_FAIL_UNIQUE);
  }
  if (f->dialect == ADCP_SQL_POSTGRES) {
    assert_int_not_equal(adcp_sql_exec(c, "TRUNCATE adcp_subscription_grants", NULL, 0, &err), 0);
    assert_string_equal(adcp_sql_last_sqlstate(c), "23514");
  }
  /* The next sequence (3) is still accepted from raw SQL: gapless, not frozen. */
  OK(adcp_sql_exec(c,
                   "INSERT INTO adcp_subscription_grants (principal_id, seq, action, subject, scope) "
                   "VALUES ('p1', 3, 'grant', 'x', 'y')",
                   NULL, 0, &err));
  adcp_grant_page pg;
  OK(adcp_subscription_journal(&pg, st, "p1", 0, 0, &err));
  assert_int_equal(pg.count, 3);
  assert_string_equal(pg.items[0].subject, "report_a");
  assert_int_equal(pg.items[1].action, ADCP_REVOKE);
  adcp_grant_page_free(&pg);
  /* Snapshots only move forward, even through raw SQL. */
  adcp_subscription_snapshot snap;
  OK(adcp_subscription_snapshot_put(&snap, st, "p1", 0, 2, "{\"grants\":[]}", &err));
  adcp_subscription_snapshot_clear(&snap);
  assert_int_not_equal(adcp_sql_exec(c, "UPDATE adcp_subscription_snapshots SET version = 1", NULL, 0, &err), 0);
  assert_int_not_equal(
      adcp_sql_exec(c, "UPDATE adcp_subscription_snapshots SET version = 2, journal_seq = 1", NULL, 0, &err), 0);
  adcp_storage_close(s);
}

static void exceptions_and_snapshots(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  adcp_subscription_store *st;
  OK(adcp_storage_principals(&ps, s, &err));
  OK(adcp_storage_subscriptions(&st, s, &err));
  assert_true(adcp_subscriptions_is_durable(st));
  adcp_principal_put in = put_of("p1", 0);
  OK(adcp_principal_upsert(NULL, ps, &in, &err));

  adcp_subscription_exception ex;
  OK(adcp_subscription_exception_put(&ex, st, "p1", "report_z", "open", "delivery failing", 0, &err));
  assert_int_equal(ex.version, 1);
  assert_string_equal(ex.state, "open");
  adcp_subscription_exception_clear(&ex);
  assert_int_equal(adcp_subscription_exception_put(&ex, st, "p1", "report_z", "open", NULL, 0, &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_subscription_exception_put(&ex, st, "p1", "report_z", "cleared", NULL, 5, &err), ADCP_ECONFLICT);
  OK(adcp_subscription_exception_put(&ex, st, "p1", "report_z", "cleared", NULL, 1, &err));
  assert_int_equal(ex.version, 2);
  assert_string_equal(ex.state, "cleared");
  adcp_subscription_exception_clear(&ex);
  assert_int_equal(adcp_subscription_exception_put(&ex, st, "p1", "report_q", "cleared", NULL, 1, &err),
                   ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_subscription_exception_put(&ex, st, "ghost", "report_q", "open", NULL, 0, &err),
                   ADCP_EREFERENCE_NOT_FOUND);
  assert_int_equal(adcp_subscription_exception_put(&ex, st, "p1", "report_q", "closed", NULL, 0, &err),
                   ADCP_EINVALID_INPUT);
  for (int i = 0; i < 5; i++) {
    char subj[16];
    snprintf(subj, sizeof subj, "report_%c", 'a' + i);
    OK(adcp_subscription_exception_put(NULL, st, "p1", subj, "open", NULL, 0, &err));
  }
  adcp_exception_list l;
  OK(adcp_subscription_exceptions(&l, st, "p1", 4, NULL, &err));
  assert_int_equal(l.count, 4);
  assert_string_equal(l.items[0].subject, "report_a");
  assert_non_null(l.next_cursor);
  char *cur = strdup(l.next_cursor);
  adcp_exception_list_free(&l);
  OK(adcp_subscription_exceptions(&l, st, "p1", 4, cur, &err));
  free(cur);
  assert_int_equal(l.count, 2);
  assert_string_equal(l.items[0].subject, "report_e");
  assert_string_equal(l.items[1].subject, "report_z");
  assert_null(l.next_cursor);
  adcp_exception_list_free(&l);
  assert_int_equal(adcp_subscription_exceptions(&l, st, "ghost", 4, NULL, &err), ADCP_EREFERENCE_NOT_FOUND);

  /* Snapshots: version grows by one, CAS, stale journal position refused. */
  adcp_subscription_snapshot snap;
  int found = 1;
  OK(adcp_subscription_snapshot_get(&snap, &found, st, "p1", &err));
  assert_int_equal(found, 0);
  OK(adcp_subscription_append(NULL, st, "p1", ADCP_GRANT, "report_a", "acct_1", &err));
  OK(adcp_subscription_append(NULL, st, "p1", ADCP_GRANT, "report_b", "acct_1", &err));
  assert_int_equal(adcp_subscription_snapshot_put(&snap, st, "p1", 0, 3, "{}", &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "beyond the journal head"));
  assert_int_equal(adcp_subscription_snapshot_put(&snap, st, "p1", 0, 1, "[]", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_subscription_snapshot_put(&snap, st, "p1", 1, 1, "{}", &err), ADCP_EREFERENCE_NOT_FOUND);
  OK(adcp_subscription_snapshot_put(&snap, st, "p1", 0, 1, "{\"z\":1,\"a\":[\"report_a\"]}", &err));
  assert_int_equal(snap.version, 1);
  assert_string_equal(snap.state_json, "{\"a\":[\"report_a\"],\"z\":1}");
  adcp_subscription_snapshot_clear(&snap);
  assert_int_equal(adcp_subscription_snapshot_put(&snap, st, "p1", 0, 1, "{}", &err), ADCP_ECONFLICT);
  OK(adcp_subscription_snapshot_put(&snap, st, "p1", 1, 2, "{\"a\":[\"report_a\",\"report_b\"]}", &err));
  assert_int_equal(snap.version, 2);
  assert_int_equal(snap.journal_seq, 2);
  adcp_subscription_snapshot_clear(&snap);
  /* Stale writers: an old version, or the current version but less of the journal. */
  assert_int_equal(adcp_subscription_snapshot_put(&snap, st, "p1", 1, 2, "{}", &err), ADCP_ECONFLICT);
  assert_int_equal(adcp_subscription_snapshot_put(&snap, st, "p1", 2, 1, "{}", &err), ADCP_ECONFLICT);
  assert_non_null(strstr(err.message, "stale"));
  OK(adcp_subscription_snapshot_get(&snap, &found, st, "p1", &err));
  assert_int_equal(found, 1);
  assert_int_equal(snap.version, 2);
  assert_string_equal(snap.state_json, "{\"a\":[\"report_a\",\"report_b\"]}");
  adcp_subscription_snapshot_clear(&snap);
  assert_int_equal(adcp_subscription_snapshot_get(&snap, &found, st, "ghost", &err), ADCP_EREFERENCE_NOT_FOUND);
  adcp_storage_close(s);
}

/* ---- paging stability while rows are inserted ------------------------------ */

typedef struct inserter {
  const char *url;
  volatile int stop;
  int inserted, errors;
} inserter;

static void *insert_loop(void *p) {
  inserter *in = p;
  adcp_error err = {0};
  adcp_storage *s = NULL;
  adcp_principal_store *ps = NULL;
  adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
  if (adcp_storage_open(&s, in->url, &o, &err) || adcp_storage_principals(&ps, s, &err)) {
    in->errors++;
    adcp_storage_close(s);
    return NULL;
  }
  /* New IDs land before, between and after the existing ones. */
  for (int i = 0; !__atomic_load_n(&in->stop, __ATOMIC_SEQ_CST) && i < 5000; i++) {
    char id[32];
    snprintf(id, sizeof id, "%c_new_%05d", "aimz"[i % 4], i);
    adcp_principal_put put = put_of(id, 0);
    if (adcp_principal_upsert(NULL, ps, &put, &err)) in->errors++;
    else in->inserted++;
  }
  adcp_storage_close(s);
  return NULL;
}

static void paging_stable_while_inserting(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  OK(adcp_storage_principals(&ps, s, &err));
  enum { ORIGINAL = 300 };
  for (int i = 0; i < ORIGINAL; i++) {
    char id[32];
    snprintf(id, sizeof id, "m_orig_%04d", i);
    adcp_principal_put put = put_of(id, 0);
    OK(adcp_principal_upsert(NULL, ps, &put, &err));
  }
  inserter in = {.url = f->url};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, insert_loop, &in), 0);
  int seen[ORIGINAL] = {0};
  char last[ADCP_PRINCIPAL_ID_MAX] = "";
  char *cursor = NULL;
  size_t pages = 0;
  do {
    adcp_principal_page pg;
    OK(adcp_principal_list(&pg, ps, 7, cursor, &err));
    free(cursor);
    cursor = pg.next_cursor ? strdup(pg.next_cursor) : NULL;
    for (size_t i = 0; i < pg.count; i++) {
      assert_true(strcmp(pg.items[i].principal_id, last) > 0); /* strictly ascending: no repeat */
      snprintf(last, sizeof last, "%s", pg.items[i].principal_id);
      int k;
      if (sscanf(last, "m_orig_%d", &k) == 1) seen[k]++;
    }
    adcp_principal_page_free(&pg);
    pages++;
    usleep(500);
  } while (cursor);
  __atomic_store_n(&in.stop, 1, __ATOMIC_SEQ_CST);
  pthread_join(th, NULL);
  assert_int_equal(in.errors, 0);
  assert_true(in.inserted > 0);
  for (int i = 0; i < ORIGINAL; i++) assert_int_equal(seen[i], 1); /* every original row exactly once */
  assert_true(pages >= ORIGINAL / 7);
  adcp_storage_close(s);
}

/* ---- the facade ------------------------------------------------------------------ */

static void facade_components_and_schema_check(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_storage_component comp[8];
  size_t n = adcp_storage_components(comp, 8, s);
  assert_int_equal(n, 4);
  const char *names[] = {"ledger", "inline", "principals", "subscription_state"};
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(comp[i].name, names[i]);
    assert_true(comp[i].is_durable);
  }
  assert_true(adcp_storage_is_durable(s));
  /* Every component from the one handle, over the one connection; one close. */
  adcp_ledger *l, *l2;
  adcp_inline_store *is;
  adcp_principal_store *ps;
  adcp_subscription_store *st;
  OK(adcp_storage_ledger(&l, s, &err));
  OK(adcp_storage_ledger(&l2, s, &err));
  assert_ptr_equal(l, l2);
  assert_ptr_equal(adcp_ledger_conn(l), adcp_storage_sql(s));
  OK(adcp_storage_inline(&is, s, &err));
  OK(adcp_storage_principals(&ps, s, &err));
  OK(adcp_storage_subscriptions(&st, s, &err));
  OK(adcp_storage_check_ready(NULL, s, &err));
  /* Forget 0007 in the history: the startup check names it. */
  OK(adcp_sql_exec(adcp_storage_sql(s), "DELETE FROM adcp_schema_migrations WHERE version = '0007'", NULL, 0, &err));
  adcp_storage_close(s);
  adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
  assert_int_equal(adcp_storage_open(&s, f->url, &o, &err), ADCP_EREPORTING_SCHEMA_BEHIND);
  assert_non_null(strstr(err.message, "0007"));
  assert_non_null(strstr(err.message, "adcp-ledger migrate"));
}

static void durability_refusal_names_components(void **state) {
  (void)state;
  adcp_error err = {0};
  adcp_storage *s = NULL;
  const char *prod[] = {"production", "PROD", "Production", NULL};
  for (int i = 0; prod[i]; i++) {
    /* Production refuses even when the caller would accept memory storage. */
    for (int allow = 0; allow < 2; allow++) {
      adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .env = prod[i], .allow_non_durable = allow};
      assert_int_equal(adcp_storage_open(&s, "sqlite::memory:", &o, &err), ADCP_EREPORTING_STORAGE_NOT_DURABLE);
      assert_null(s);
      const char *want[] = {"ledger",      "inline",        "principals",           "subscription_state",
                            "sqlite:PATH", "postgresql://", "ADCP_ENV=development", NULL};
      for (int k = 0; want[k]; k++)
        if (!strstr(err.message, want[k])) fail_msg("message lacks %s: %s", want[k], err.message);
    }
  }
  /* Outside production the caller's opt-in and the development escape hatch work. */
  adcp_storage_options dev = {.version = ADCP_STORAGE_OPTIONS_VERSION, .env = "development"};
  OK(adcp_storage_open(&s, "sqlite::memory:", &dev, &err));
  assert_false(adcp_storage_is_durable(s));
  adcp_storage_component comp[4];
  assert_int_equal(adcp_storage_components(comp, 4, s), 4);
  for (int i = 0; i < 4; i++) assert_false(comp[i].is_durable);
  adcp_principal_store *ps;
  OK(adcp_storage_principals(&ps, s, &err));
  assert_false(adcp_principals_is_durable(ps));
  adcp_subscription_store *st;
  OK(adcp_storage_subscriptions(&st, s, &err));
  assert_false(adcp_subscriptions_is_durable(st));
  adcp_principal_put in = put_of("mem", 0);
  OK(adcp_principal_upsert(NULL, ps, &in, &err)); /* migrated on open */
  adcp_storage_close(s);
  adcp_storage_options allow = {.version = ADCP_STORAGE_OPTIONS_VERSION, .env = "staging", .allow_non_durable = 1};
  OK(adcp_storage_open(&s, "sqlite::memory:", &allow, &err));
  adcp_storage_close(s);
}

/* A fresh process sees what an earlier one stored (SQLite file and PostgreSQL). */
static void restart_persistence(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  adcp_principal_store *ps;
  adcp_subscription_store *st;
  OK(adcp_storage_principals(&ps, s, &err));
  OK(adcp_storage_subscriptions(&st, s, &err));
  adcp_principal_put in = put_of("persisted", 0);
  OK(adcp_principal_upsert(NULL, ps, &in, &err));
  OK(adcp_subscription_append(NULL, st, "persisted", ADCP_GRANT, "report_a", "acct_1", &err));
  OK(adcp_subscription_snapshot_put(NULL, st, "persisted", 0, 1, "{\"n\":1}", &err));
  /* The writer is killed without closing anything: committed means kept. */
  pid_t pid = fork();
  if (pid == 0) {
    adcp_storage *cs = NULL;
    adcp_principal_store *cps = NULL;
    adcp_subscription_store *cst = NULL;
    adcp_storage_options o = ADCP_STORAGE_OPTIONS_INIT;
    if (adcp_storage_open(&cs, f->url, &o, &err) || adcp_storage_principals(&cps, cs, &err) ||
        adcp_storage_subscriptions(&cst, cs, &err))
      _exit(2);
    adcp_principal_put ci = put_of("persisted", 1);
    ci.display_name = "from the child";
    if (adcp_principal_upsert(NULL, cps, &ci, &err) ||
        adcp_subscription_append(NULL, cst, "persisted", ADCP_REVOKE, "report_a", "acct_1", &err))
      _exit(3);
    kill(getpid(), SIGKILL);
    _exit(4);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  adcp_storage_close(s);
  /* A fresh process (the CLI) reads it back. */
  char *scratch = tu_mkdtemp();
  char args[1200];
  adcp_buf out;
  adcp_buf_init(&out);
  snprintf(args, sizeof args, "--db '%s' principal get persisted", f->url);
  assert_int_equal(tu_cli(scratch, args, NULL, &out, NULL), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"display_name\":\"from the child\""));
  assert_non_null(strstr((char *)out.data, "\"version\":2"));
  snprintf(args, sizeof args, "--db '%s' subscription-state journal persisted", f->url);
  assert_int_equal(tu_cli(scratch, args, NULL, &out, NULL), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"head\":2"));
  assert_non_null(strstr((char *)out.data, "\"action\":\"revoke\""));
  snprintf(args, sizeof args, "--db '%s' subscription-state snapshot persisted", f->url);
  assert_int_equal(tu_cli(scratch, args, NULL, &out, NULL), 0);
  adcp_buf_cstr(&out);
  assert_non_null(strstr((char *)out.data, "\"state\":{\"n\":1}"));
  adcp_buf_free(&out);
  tu_rmtree(scratch);
  free(scratch);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(principal_lifecycle),
      BOTH(cas_eight_writers),
      BOTH(journal_gapless_concurrent),
      BOTH(journal_immutable_in_database),
      BOTH(exceptions_and_snapshots),
      BOTH(paging_stable_while_inserting),
      BOTH(facade_components_and_schema_check),
      BOTH(restart_persistence),
      cmocka_unit_test(durability_refusal_names_components),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
