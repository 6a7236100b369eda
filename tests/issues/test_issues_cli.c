/* tests/issues/test_issues_cli.c — `adcp-ledger issue` and `issue-events` on
 * SQLite and PostgreSQL through the real binary: the lifecycle commands and
 * each refusal, claim/complete/release/prune with a stale lease, `deliver
 * --exec` with a command that fails twice then succeeds and with one that
 * hangs past the lease, a tampered body found by `verify` opening exactly
 * one issue and one `opened` event (a clean verify resolves it), and an
 * unmigrated database (0008 absent) refused as not ready. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "../ledger/ledger_fixture.h"
#include "adcp/issues.h"
#include "support/support_cli.h"

typedef struct cx {
  fixture *f;
  char *dir;
} cx;

static int run(cx *x, adcp_buf *out, adcp_buf *err_b, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int run(cx *x, adcp_buf *out, adcp_buf *err_b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int rc = tu_cli_dbv(x->dir, x->f->url, NULL, NULL, out, err_b, fmt, ap);
  va_end(ap);
  return rc;
}

static int run_in(cx *x, const char *in, adcp_buf *out, adcp_buf *err_b, const char *args) {
  char full[8192];
  snprintf(full, sizeof full, "--db '%s' %s", x->f->url, args);
  int rc = tu_cli(x->dir, full, in, out, err_b);
  adcp_buf_cstr(out);
  return rc;
}

static const char *txt(adcp_buf *b) { return b->data ? (const char *)b->data : ""; }

static int64_t q1(cx *x, const char *sql) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, x->f->url, &err));
  char out[64];
  int found = 0;
  OK(adcp_sql_query_text(out, sizeof out, &found, c, sql, NULL, 0, &err));
  adcp_sql_close(c);
  return found ? strtoll(out, NULL, 10) : -1;
}

/* One JSON document on stdout. */
static void one_doc(adcp_buf *out) {
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  if (adcp_json_parse(&d, txt(out), out->len, NULL, &err)) fail_msg("not one JSON document: %s", txt(out));
  adcp_json_doc_free(&d);
}

static int cx_setup(void **state) {
  setup(state);
  cx *x = calloc(1, sizeof *x);
  x->f = *state;
  x->dir = tu_mkdtemp();
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  if (run(x, &out, &e, "migrate") != 0) fail_msg("migrate: %s", txt(&e));
  adcp_buf_free(&out), adcp_buf_free(&e);
  *state = x;
  return 0;
}

static int cx_teardown(void **state) {
  cx *x = *state;
  tu_rmtree(x->dir);
  free(x->dir);
  *state = x->f;
  free(x);
  return teardown(state);
}

static void issue_commands(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(x, &out, &e, "issue --help"), 0);
  assert_non_null(strstr(txt(&out), "usage: adcp-ledger"));
  assert_int_equal(run(x, &out, &e, "issue-events --help"), 0);
  assert_int_equal(run(x, &out, &e, "issue"), 1);
  assert_int_equal(run(x, &out, &e, "issue frob"), 1);
  assert_int_equal(run(x, &out, &e, "issue open --account a"), 1);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key k --bogus 1"), 1);
  assert_int_equal(run(x, &out, &e, "issue resolve --account a --key k --consumer c"), 1);

  assert_int_equal(run(x, &out, &e, "issue open --account a --key 'cond:1' --consumer buyer-1 --json"), 0);
  one_doc(&out);
  assert_non_null(strstr(txt(&out), "\"changed\":true,\"recorded\":true"));
  assert_non_null(strstr(txt(&out), "\"consumer_id\":\"buyer-1\""));
  assert_int_equal(run(x, &out, &e, "issue open --account a --key 'cond:1' --json"), 0);
  assert_non_null(strstr(txt(&out), "\"changed\":false,\"recorded\":false"));
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key 'cond:1' --external-ref T-1 --json"), 0);
  assert_non_null(strstr(txt(&out), "\"recorded\":true"));
  assert_non_null(strstr(txt(&out), "\"external_ref\":\"T-1\""));
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key 'cond:1' --external-ref T-2 --json"), 0);
  assert_non_null(strstr(txt(&out), "\"changed\":true,\"recorded\":false"));
  assert_int_equal(run(x, &out, &e, "issue waive --account a --key 'cond:1'"), 0);
  assert_non_null(strstr(txt(&out), "recorded waived"));
  /* Refusals, each exit 2 with its code; --json still prints one document. */
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key 'cond:1' --json"), 2);
  one_doc(&out);
  assert_non_null(strstr(txt(&e), "ISSUE_STATE_TRANSITION_INVALID"));
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key 'none'"), 2);
  assert_non_null(strstr(txt(&e), "ISSUE_NOT_OPEN"));
  assert_int_equal(run(x, &out, &e, "issue open --account b --key 'cond:1'"), 2);
  assert_non_null(strstr(txt(&e), "CONFLICT"));
  assert_int_equal(run(x, &out, &e, "issue open --account a --key 'bad\001'"), 2);
  assert_non_null(strstr(txt(&e), "INVALID_INPUT"));
  /* An instant option is checked by the option table before the store is opened. */
  assert_int_equal(run(x, &out, &e, "issue open --account a --key k2 --observed-at yesterday"), 1);
  assert_non_null(strstr(txt(&e), "--observed-at must be an RFC 3339 instant"));
  assert_int_equal(run(x, &out, &e, "issue resolve --account a --key 'cond:1' --json"), 0);
  assert_non_null(strstr(txt(&out), "\"changed\":false")); /* waived is not retirable */
  assert_int_equal(run(x, &out, &e, "issue open --account a --key k2"), 0);
  assert_int_equal(run(x, &out, &e, "issue resolve --account a --key k2"), 0);
  assert_int_equal(run(x, &out, &e, "issue list --json"), 0);
  one_doc(&out);
  assert_non_null(strstr(txt(&out), "cond:1"));
  assert_null(strstr(txt(&out), "\"k2\""));
  assert_non_null(strstr(txt(&out), "\"pending\":5"));
  assert_int_equal(run(x, &out, &e, "issue list --all --account a"), 0);
  assert_non_null(strstr(txt(&out), "resolved"));
  assert_int_equal(run(x, &out, &e, "issue list --limit 0"), 1);
  assert_int_equal(run(x, &out, &e, "issue show --account a --key k2 --json"), 0);
  assert_non_null(strstr(txt(&out), "\"issue_state\":\"resolved\""));
  assert_int_equal(run(x, &out, &e, "issue show --account a --key nope --json"), 5);
  one_doc(&out);
  assert_int_equal(run(x, &out, &e, "issue show --account b --key k2"), 5);
  assert_int_equal(run(x, &out, &e, "issue show --account a"), 1);

  /* The outbox: one event per occurrence per claim, stale leases refused. */
  assert_int_equal(run(x, &out, &e, "issue-events claim --limit 0"), 1);
  assert_int_equal(run(x, &out, &e, "issue-events claim --lease 0"), 1);
  assert_int_equal(run(x, &out, &e, "issue-events claim --once"), 1);
  assert_int_equal(run(x, &out, &e, "issue-events claim --limit 10 --lease 60 --json"), 0);
  one_doc(&out);
  adcp_json_doc d;
  adcp_json_doc_init(&d);
  adcp_error err = {0};
  OK(adcp_json_parse(&d, txt(&out), out.len, NULL, &err));
  uint32_t arr = adcp_json_get(&d, 0, "events");
  assert_int_equal(adcp_json_at(&d, arr)->count, 2); /* cond:1 and k2, each its opened event */
  uint32_t ev = adcp_json_first(&d, arr);
  size_t n1, n2;
  char eid[64], tok[64];
  const char *s1 = adcp_json_str(&d, adcp_json_get(&d, ev, "event_id"), &n1);
  const char *s2 = adcp_json_str(&d, adcp_json_get(&d, ev, "lease_token"), &n2);
  snprintf(eid, sizeof eid, "%.*s", (int)n1, s1);
  snprintf(tok, sizeof tok, "%.*s", (int)n2, s2);
  assert_true(adcp_json_str_eq(&d, adcp_json_get(&d, ev, "kind"), "opened"));
  adcp_json_doc_free(&d);
  assert_int_equal(
      run(x, &out, &e, "issue-events complete --event %s --token 0123456789abcdef0123456789abcdef --json", eid), 2);
  one_doc(&out);
  assert_non_null(strstr(txt(&e), "CONFLICT"));
  assert_int_equal(run(x, &out, &e, "issue-events complete --event %s", eid), 1);
  assert_int_equal(run(x, &out, &e, "issue-events release --event %s --token %s --retry-after x", eid, tok), 1);
  assert_int_equal(run(x, &out, &e, "issue-events release --event %s --token %s --retry-after 0 --json", eid, tok), 0);
  assert_non_null(strstr(txt(&out), "\"released\":true"));
  assert_int_equal(run(x, &out, &e, "issue-events release --event %s --token %s", eid, tok), 2);
  assert_int_equal(run(x, &out, &e, "issue-events prune"), 1);
  assert_int_equal(run(x, &out, &e, "issue-events prune --older-than 0 --json"), 0);
  assert_non_null(strstr(txt(&out), "\"deleted\":0"));
  assert_int_equal(run(x, &out, &e, "issue-events deliver"), 1);
  assert_int_equal(run(x, &out, &e, "issue-events frob"), 1);
  adcp_buf_free(&out), adcp_buf_free(&e);
}

/* deliver --exec: a command that fails twice then succeeds = three attempts,
 * one completion; every event of both occurrences arrives, in order. */
static void deliver_fail_twice(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key only"), 0);
  char cmd[3000];
  snprintf(cmd, sizeof cmd,
           "issue-events deliver --once --backoff 0.05 --max-attempts 5 --json --exec "
           "'cat >> \"%s/log\"; n=$(wc -l < \"%s/log\"); [ \"$n\" -ge 3 ] && [ \"$ADCP_ISSUE_EVENT_ATTEMPT\" = 3 ]'",
           x->dir, x->dir);
  assert_int_equal(run(x, &out, &e, "%s", cmd), 0);
  one_doc(&out);
  assert_non_null(strstr(txt(&out), "\"delivered\":1,\"failed_attempts\":2,\"killed\":0,\"dead_lettered\":0"));
  assert_int_equal(q1(x, "SELECT attempts FROM reporting_issue_events"), 3);
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_events WHERE completed_at IS NOT NULL"), 1);
  char path[4200];
  snprintf(path, sizeof path, "%s/log", x->dir);
  size_t n;
  char *log = (char *)tu_read_file(path, &n);
  assert_non_null(strstr(log, "\"kind\":\"opened\""));
  assert_null(strstr(log, "lease_token"));
  free(log);
  adcp_buf_free(&out), adcp_buf_free(&e);
}

/* The line of the delivery log holding the event (key, kind), or NULL. */
static char *event_line(char *log, const char *key, const char *kind, char *line, size_t cap) {
  char k[600], d[64];
  snprintf(k, sizeof k, "\"issue_key\":\"%s\"", key);
  snprintf(d, sizeof d, "\"kind\":\"%s\"", kind);
  for (char *p = log; p && *p;) {
    char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    snprintf(line, cap, "%.*s", (int)n, p);
    if (strstr(line, k) && strstr(line, d)) return line;
    p = nl ? nl + 1 : NULL;
  }
  return NULL;
}

/* issue 33: `issue ack --external-ref JIRA-42` — the acknowledged event and
 * every later one carry it; it is kept without a new value and replaced by
 * one (spec 07 §2). */
static void events_carry_external_ref(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  char deliver[3000], path[4200], line[4096];
  snprintf(deliver, sizeof deliver, "issue-events deliver --once --json --exec 'cat >> \"%s/log\"; echo >> \"%s/log\"'",
           x->dir, x->dir);
  snprintf(path, sizeof path, "%s/log", x->dir);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key ref:1"), 0);
  assert_int_equal(run(x, &out, &e, "%s", deliver), 0);
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key ref:1 --external-ref JIRA-42"), 0);
  assert_int_equal(run(x, &out, &e, "%s", deliver), 0);
  assert_int_equal(run(x, &out, &e, "issue waive --account a --key ref:1"), 0);
  assert_int_equal(run(x, &out, &e, "%s", deliver), 0);
  assert_non_null(strstr(txt(&out), "\"delivered\":1"));
  /* A second occurrence: the reference is replaced by a new value. */
  assert_int_equal(run(x, &out, &e, "issue open --account a --key ref:2"), 0);
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key ref:2 --external-ref A-1"), 0);
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key ref:2 --external-ref A-2"), 0);
  assert_int_equal(run(x, &out, &e, "issue resolve --account a --key ref:2"), 0);
  assert_int_equal(run(x, &out, &e, "%s", deliver), 0);
  assert_non_null(strstr(txt(&out), "\"delivered\":3"));
  size_t n;
  char *log = (char *)tu_read_file(path, &n);
  assert_non_null(event_line(log, "ref:1", "opened", line, sizeof line));
  assert_non_null(strstr(line, "\"external_ref\":null")); /* delivered before any reference was given */
  assert_non_null(event_line(log, "ref:1", "acknowledged", line, sizeof line));
  assert_non_null(strstr(line, "\"external_ref\":\"JIRA-42\""));
  assert_non_null(event_line(log, "ref:1", "waived", line, sizeof line));
  assert_non_null(strstr(line, "\"external_ref\":\"JIRA-42\"")); /* kept: waive gave none */
  assert_non_null(event_line(log, "ref:2", "resolved", line, sizeof line));
  assert_non_null(strstr(line, "\"external_ref\":\"A-2\""));
  assert_null(strstr(log, "A-1"));
  free(log);
  /* claim --json carries it too. */
  assert_int_equal(run(x, &out, &e, "issue open --account a --key ref:3"), 0);
  assert_int_equal(run(x, &out, &e, "issue ack --account a --key ref:3 --external-ref T-3"), 0);
  assert_int_equal(run(x, &out, &e, "issue-events claim --json"), 0);
  one_doc(&out);
  assert_non_null(strstr(txt(&out), "\"external_ref\":\"T-3\""));
  adcp_buf_free(&out), adcp_buf_free(&e);
}

/* The hook never inherits the database URL or object-store credentials. */
static void deliver_env_scrubbed(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key envcheck"), 0);
  setenv("ADCP_DATABASE_URL", x->f->url, 1);
  setenv("AWS_SECRET_ACCESS_KEY", "hook-must-not-see-this", 1);
  /* Issue 27 item 4: the old scrub list missed these (the docs' own
   * credentialRef example among them); an allowlist misses none. */
  static const char *const missed[] = {"ADCP_AZURE_CONN",     "PGSSLKEY",
                                       "PGSERVICEFILE",       "AWS_SHARED_CREDENTIALS_FILE",
                                       "AZURE_CLIENT_SECRET", "SOME_FUTURE_SECRET"};
  for (size_t i = 0; i < 6; i++) setenv(missed[i], "hook-must-not-see-this-either", 1);
  setenv("LC_ALL", "C", 1), setenv("TZ", "UTC", 1), setenv("HOOK_WANTS_THIS", "passed-on", 1);
  char cmd[3000];
  snprintf(cmd, sizeof cmd,
           "issue-events deliver --once --json --pass-env HOOK_WANTS_THIS --pass-env NOT_SET_ANYWHERE --exec "
           "'cat >/dev/null; env > \"%s/env\"'",
           x->dir);
  int rc = run(x, &out, &e, "%s", cmd);
  unsetenv("ADCP_DATABASE_URL");
  unsetenv("AWS_SECRET_ACCESS_KEY");
  for (size_t i = 0; i < 6; i++) unsetenv(missed[i]);
  unsetenv("HOOK_WANTS_THIS");
  assert_int_equal(rc, 0);
  char path[4200];
  snprintf(path, sizeof path, "%s/env", x->dir);
  size_t n;
  char *env = (char *)tu_read_file(path, &n);
  assert_non_null(env);
  assert_non_null(strstr(env, "ADCP_ISSUE_EVENT_ID="));
  assert_null(strstr(env, "ADCP_DATABASE_URL"));
  assert_null(strstr(env, "hook-must-not-see-this"));
  assert_non_null(strstr(env, "HOOK_WANTS_THIS=passed-on"));
  assert_non_null(strstr(env, "LC_ALL=C"));
  assert_non_null(strstr(env, "TZ=UTC"));
  assert_non_null(strstr(env, "PATH="));
  /* Nothing outside the allowlist: every line's name is one of these. */
  for (char *line = env; *line;) {
    char *nl = strchr(line, '\n');
    size_t nn = strcspn(line, "=");
    static const char *const ok[] = {"PATH",
                                     "HOME",
                                     "LANG",
                                     "TZ",
                                     "TMPDIR",
                                     "HOOK_WANTS_THIS",
                                     "ADCP_ISSUE_EVENT_ID",
                                     "ADCP_ISSUE_EVENT_KIND",
                                     "ADCP_ISSUE_EVENT_ATTEMPT",
                                     /* set by /bin/sh itself */ "PWD",
                                     "SHLVL",
                                     "_",
                                     "OLDPWD",
                                     NULL};
    int good = nn > 3 && !strncmp(line, "LC_", 3);
    for (size_t i = 0; !good && ok[i]; i++) good = strlen(ok[i]) == nn && !strncmp(line, ok[i], nn);
    if (!good) fail_msg("hook saw %.*s", (int)nn, line);
    if (!nl) break;
    line = nl + 1;
  }
  free(env);
  /* Refusals of --pass-env (exit 1, naming the option). */
  assert_int_equal(run(x, &out, &e, "issue-events deliver --once --pass-env 1BAD --exec true"), 1);
  assert_non_null(strstr(txt(&e), "--pass-env"));
  assert_int_equal(run(x, &out, &e, "issue-events deliver --once --pass-env 'A=B' --exec true"), 1);
  assert_non_null(strstr(txt(&e), "--pass-env"));
  assert_int_equal(run(x, &out, &e, "issue-events deliver --once --exec true --pass-env"), 1);
  assert_int_equal(run(x, &out, &e, "issue-events deliver --once --exec true --pass-env ''"), 1);
  assert_non_null(strstr(txt(&e), "--pass-env"));
  adcp_buf_free(&out), adcp_buf_free(&e);
}

static double mono(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The wall-time bound of a deliver whose 3 s lease kills a 300 s hook: the
 * lease, the kill grace, and a CLI run of this build on this machine (measured
 * just before, so sanitized or loaded runs get room) several times over, never
 * near the 300 s that waiting for the hook would take. */
static double kill_bound(cx *x) {
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  double t0 = mono();
  assert_int_equal(run(x, &out, &e, "issue list --json"), 0);
  double ref = mono() - t0, bound = 3.0 + 2.0 + 5.0 + 6.0 * ref;
  adcp_buf_free(&out), adcp_buf_free(&e);
  return bound < 120.0 ? bound : 120.0;
}

/* A command that hangs past the lease is killed in bounded time; the last
 * attempt dead-letters the event, visible in `issue list`. */
static void deliver_hanging(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key hangs"), 0);
  double bound = kill_bound(x), t0 = mono();
  assert_int_equal(run(x, &out, &e, "issue-events deliver --once --lease 3 --max-attempts 1 --json --exec 'sleep 300'"), 0);
  double took = mono() - t0;
  if (took >= bound) fail_msg("deliver took %.1f s, bound %.1f s: the hook was not killed at the lease", took, bound);
  assert_non_null(strstr(txt(&out), "\"killed\":1,\"dead_lettered\":1,\"stale_leases\":0"));
  assert_non_null(strstr(txt(&e), "killed at the lease deadline"));
  assert_int_equal(run(x, &out, &e, "issue list --json"), 0);
  assert_non_null(strstr(txt(&out), "\"dead_letters\":1"));
  assert_non_null(strstr(txt(&out), "\"dead_lettered\":1"));
  /* Dead letters are never claimed again. */
  assert_int_equal(run(x, &out, &e, "issue-events claim --json"), 0);
  assert_string_equal(txt(&out), "{\"events\":[]}\n");
  adcp_buf_free(&out), adcp_buf_free(&e);
}

/* A process the test can see (not a zombie). */
static int alive(pid_t pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *rp = strrchr(buf, ')');
  return rp && rp[1] == ' ' && rp[2] != 'Z';
}

static pid_t read_pid(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  size_t n;
  char *t = (char *)tu_read_file(path, &n);
  if (!t) return -1;
  pid_t p = (pid_t)strtol(t, NULL, 10);
  free(t);
  return p;
}

static int wait_file(const char *dir, const char *name, double secs) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  for (double t0 = mono(); mono() - t0 < secs;) {
    if (access(path, F_OK) == 0) return 1;
    struct timespec ts = {0, 20 * 1000000L};
    nanosleep(&ts, NULL);
  }
  return 0;
}

/* Issue 27 item 4: SIGTERM to deliver while its hook runs used to wait for the
 * hook (up to the lease: a day with --lease 86400). Now the hook's group and
 * whatever it started are ended (TERM, KILL after the grace), the event is
 * released and deliver exits promptly. */
static void deliver_sigterm(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key sig"), 0);
  char cmd[9000], outp[4200];
  snprintf(outp, sizeof outp, "%s/deliver.out", x->dir);
  char leaver[3000];
  snprintf(leaver, sizeof leaver,
           "'cat >/dev/null; sleep 300 & echo $! > \"%s/bg\"; setsid sleep 300 & echo $! > \"%s/sid\"; "
           "trap \"\" TERM; echo up > \"%s/ready\"; sleep 300'",
           x->dir, x->dir, x->dir);
  snprintf(cmd, sizeof cmd, "--db '%s' issue-events deliver --lease 86400 --json --exec %s", x->f->url, leaver);
  pid_t d = fork();
  assert_true(d >= 0);
  if (d == 0) {
    int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 1);
    char sh[9400];
    snprintf(sh, sizeof sh, "exec '%s' %s", ADCP_CLI_PATH, cmd);
    execl("/bin/sh", "sh", "-c", sh, (char *)NULL);
    _exit(127);
  }
  assert_true(wait_file(x->dir, "ready", 20));
  pid_t bg = read_pid(x->dir, "bg"), sid = read_pid(x->dir, "sid");
  assert_true(bg > 0 && sid > 0);
  assert_true(alive(bg) && alive(sid));
  double t0 = mono();
  kill(d, SIGTERM);
  int st = 0;
  assert_int_equal(waitpid(d, &st, 0), d);
  double took = mono() - t0;
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  assert_true(took < 6.0); /* grace 2 s, then SIGKILL */
  assert_false(alive(bg));
  assert_false(alive(sid));
  size_t n;
  char *o = (char *)tu_read_file(outp, &n);
  assert_non_null(o);
  assert_non_null(strstr(o, "\"interrupted\":true"));
  assert_non_null(strstr(o, "\"failed_attempts\":0"));
  free(o);
  /* Released, not failed: claimable again at once, not completed. */
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_events WHERE completed_at IS NOT NULL"), 0);
  assert_int_equal(run(x, &out, &e, "issue-events claim --json"), 0);
  assert_non_null(strstr(txt(&out), "\"kind\":\"opened\""));
  adcp_buf_free(&out), adcp_buf_free(&e);
}

/* At the lease deadline the whole tree goes, the setsid child included; and a
 * hook that exits 0 leaves nothing running behind it either. */
static void deliver_kills_children(void **state) {
  cx *x = *state;
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(x, &out, &e, "issue open --account a --key kids"), 0);
  char cmd[4000];
  snprintf(cmd, sizeof cmd,
           "issue-events deliver --once --lease 3 --max-attempts 1 --json --exec "
           "'cat >/dev/null; sleep 300 & echo $! > \"%s/bg\"; setsid sleep 300 & echo $! > \"%s/sid\"; sleep 300'",
           x->dir, x->dir);
  double bound = kill_bound(x), t0 = mono();
  assert_int_equal(run(x, &out, &e, "%s", cmd), 0);
  if (mono() - t0 >= bound) fail_msg("deliver took %.1f s, bound %.1f s", mono() - t0, bound);
  if (!strstr(txt(&out), "\"killed\":1")) fail_msg("deliver did not kill the hook: %s / %s", txt(&out), txt(&e));
  pid_t bg = read_pid(x->dir, "bg"), sid = read_pid(x->dir, "sid");
  assert_true(bg > 0 && sid > 0);
  assert_false(alive(bg));
  assert_false(alive(sid));
  /* A hook that succeeds and leaves a setsid daemon behind. */
  assert_int_equal(run(x, &out, &e, "issue open --account a --key kids2"), 0);
  snprintf(cmd, sizeof cmd,
           "issue-events deliver --once --json --exec "
           "'cat >/dev/null; setsid sleep 300 & echo $! > \"%s/left\"; exit 0'",
           x->dir);
  assert_int_equal(run(x, &out, &e, "%s", cmd), 0);
  assert_non_null(strstr(txt(&out), "\"delivered\":1"));
  pid_t left = read_pid(x->dir, "left");
  assert_true(left > 0);
  assert_false(alive(left));
  adcp_buf_free(&out), adcp_buf_free(&e);
}

/* A tampered body found by verify opens exactly one issue and one `opened`
 * event (repeated verify and read add nothing); the restored bytes verify
 * clean and resolve it. */
static void verify_tamper_opens_issue(void **state) {
  cx *x = *state;
  int pg = x->f->dialect == ADCP_SQL_POSTGRES;
  adcp_buf out, e, rows;
  adcp_buf_init(&out), adcp_buf_init(&e), adcp_buf_init(&rows);
  for (int i = 0; i < 700; i++) adcp_buf_printf(&rows, "{\"i\":%d,\"spend\":\"%d.50\"}\n", i, i);
  adcp_buf_cstr(&rows);
  assert_int_equal(run_in(x, (const char *)rows.data, &out, &e,
                          "commit --account acct_1 --obligation ob_1 --period-start 2026-10-01T00:00:00Z "
                          "--period-end 2026-11-01T00:00:00Z --revision rrev_1 --finality snapshot"),
                   0);
  assert_int_equal(run(x, &out, &e, "verify --all"), 0);
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_events"), 0);
  adcp_sql_conn *c;
  adcp_error err = {0};
  OK(adcp_sql_connect(&c, x->f->url, &err));
  OK(adcp_sql_exec_script(c,
                          pg ? "CREATE TABLE saved AS SELECT sha256, body FROM adcp_reporting_chunk_bodies;"
                               "ALTER TABLE adcp_reporting_chunk_bodies DROP CONSTRAINT adcp_reporting_chunk_bodies_check;"
                               "ALTER TABLE adcp_reporting_chunk_bodies DISABLE TRIGGER USER;"
                               "UPDATE adcp_reporting_chunk_bodies SET body = overlay(body PLACING '\\x58'::bytea "
                               "FROM 100 FOR 1)"
                             : "CREATE TABLE saved AS SELECT sha256, body FROM adcp_reporting_chunk_bodies;"
                               "PRAGMA ignore_check_constraints = 1;"
                               "DROP TRIGGER adcp_reporting_chunk_bodies_immutable;"
                               "UPDATE adcp_reporting_chunk_bodies SET body = CAST(substr(body, 1, 99) || 'X' || "
                               "substr(body, 101) AS BLOB)",
                          &err));
  adcp_sql_close(c);
  assert_int_equal(run(x, &out, &e, "verify --all"), 3);
  assert_non_null(strstr(txt(&out), "ROWS_INTEGRITY_FAILED"));
  assert_int_equal(run(x, &out, &e, "verify --revision rrev_1 --json"), 3);
  one_doc(&out);
  assert_int_equal(run(x, &out, &e, "read --account acct_1 --revision rrev_1"), 3);
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_lifecycle"), 1);
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_events"), 1);
  assert_int_equal(q1(x,
                      "SELECT count(*) FROM reporting_issue_events WHERE kind = 'opened' AND "
                      "issue_key = 'revision_unreadable:rrev_1' AND account_id = 'acct_1'"),
                   1);
  assert_int_equal(run(x, &out, &e, "issue list --json"), 0);
  assert_non_null(strstr(txt(&out), "\"issue_key\":\"revision_unreadable:rrev_1\""));
  /* Restore the bytes: a clean verify resolves the issue. */
  OK(adcp_sql_connect(&c, x->f->url, &err));
  OK(adcp_sql_exec_script(c,
                          "UPDATE adcp_reporting_chunk_bodies SET body = (SELECT s.body FROM saved s WHERE "
                          "s.sha256 = adcp_reporting_chunk_bodies.sha256)",
                          &err));
  adcp_sql_close(c);
  /* Exit 4: the editor's dropped guard is schema drift; the bytes verify. */
  assert_int_equal(run(x, &out, &e, "verify --all"), 4);
  assert_non_null(strstr(txt(&out), "checked 1: 1 verified, 0 failed"));
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_lifecycle WHERE issue_state = 'resolved'"), 1);
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_events"), 2);
  assert_int_equal(run(x, &out, &e, "verify --all"), 4);
  assert_int_equal(q1(x, "SELECT count(*) FROM reporting_issue_events"), 2);
  adcp_buf_free(&out), adcp_buf_free(&e), adcp_buf_free(&rows);
}

/* A database without 0008: not ready, refused with exit 4 and nothing made. */
static void unmigrated_refused(void **state) {
  fixture *f = *state;
  adcp_error err = {0};
  adcp_storage *st;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&st, f->url, &o, &err));
  adcp_migration_set partial = *adcp_storage_migrations(st);
  while (partial.count && strcmp(partial.items[partial.count - 1].version, "0008") >= 0) partial.count--;
  OK(adcp_migrate_apply(NULL, adcp_storage_sql(st), &partial, NULL, &err));
  adcp_storage_close(st);
  cx x = {.f = f, .dir = tu_mkdtemp()};
  adcp_buf out, e;
  adcp_buf_init(&out), adcp_buf_init(&e);
  assert_int_equal(run(&x, &out, &e, "issue list --json"), 4);
  one_doc(&out);
  assert_non_null(strstr(txt(&e), "REPORTING_SCHEMA_BEHIND"));
  assert_non_null(strstr(txt(&e), "0008"));
  assert_int_equal(run(&x, &out, &e, "issue open --account a --key k"), 4);
  assert_int_equal(run(&x, &out, &e, "issue-events claim"), 4);
  assert_int_equal(
      q1(&x, f->dialect == ADCP_SQL_SQLITE ? "SELECT count(*) FROM sqlite_master WHERE name LIKE 'reporting_issue%'"
                                           : "SELECT count(*) FROM pg_class WHERE relname LIKE 'reporting_issue%'"),
      0);
  tu_rmtree(x.dir);
  free(x.dir);
  adcp_buf_free(&out), adcp_buf_free(&e);
}

#define BOTHX(fn) \
  {"sqlite/" #fn, fn, cx_setup, cx_teardown, &SQLITE}, { "postgres/" #fn, fn, cx_setup, cx_teardown, &POSTGRES }

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTHX(issue_commands),       BOTHX(events_carry_external_ref), BOTHX(deliver_fail_twice),
      BOTHX(deliver_env_scrubbed), BOTHX(deliver_hanging),           BOTHX(verify_tamper_opens_issue),
      BOTHX(deliver_sigterm),      BOTHX(deliver_kills_children),    BOTH(unmigrated_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
