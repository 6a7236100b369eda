/* cli/cmd_issue_events.c — the issue-event outbox from the command line
 * (spec 07 §8, docs/issues.md): `issue-events claim|complete|release|prune`
 * and `deliver --exec CMD`, which turns the outbox into a pager script or a
 * webhook sender: each claimed event goes to CMD (/bin/sh -c) as one JSON
 * object on stdin; exit 0 completes it, anything else releases it with
 * exponential backoff, and after --max-attempts it is dead-lettered. A
 * command still running at 90% of the lease is killed (its process group and
 * everything reparented to deliver, a child subreaper), so the release lands
 * while the lease still holds; SIGINT/SIGTERM end the command the same way
 * (TERM, then KILL) and release its event. The hook's environment is an
 * allowlist. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adcp/issues.h"
#include "cli/cli.h"
#include "cli/opt.h"

#define PASS_ENV_MAX 64

/* An environment variable name the hook may be given: [A-Za-z_][A-Za-z0-9_]*. */
static int env_name_ok(const char *n) {
  if (!*n || (*n >= '0' && *n <= '9') || strlen(n) > 128) return 0;
  for (const char *c = n; *c; c++)
    if (!((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_')) return 0;
  return 1;
}

/* Seconds with up to 3 decimals into milliseconds, 0 .. max_s. */
static int parse_seconds(int64_t *ms, const char *s, int64_t max_s) {
  if (!s || !*s) return -1;
  int64_t whole = 0, frac = 0, scale = 100;
  const char *p = s;
  for (; *p >= '0' && *p <= '9'; p++)
    if ((whole = whole * 10 + (*p - '0')) > max_s) return -1;
  if (p == s) return -1;
  if (*p == '.') {
    if (!*++p) return -1;
    for (; *p >= '0' && *p <= '9'; p++, scale /= 10) {
      if (!scale) return -1;
      frac += (*p - '0') * scale;
    }
  }
  if (*p) return -1;
  *ms = whole * 1000 + frac;
  return *ms <= max_s * 1000 ? 0 : -1;
}

static int open_store(adcp_storage **st, adcp_issues **s, const adcp_cli_globals *g, adcp_error *err) {
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .must_exist = 1};
  int rc = adcp_storage_open(st, g->db_url, &o, err);
  if (!rc && (rc = adcp_issues_open(s, adcp_storage_sql(*st), err))) adcp_storage_close(*st);
  return rc;
}

/* ---- claim / complete / release / prune ---------------------------------------------- */

static int claim_cmd(adcp_issues *s, const adcp_cli_args *a, const int64_t *secs, adcp_error *err) {
  adcp_issue_event *v;
  size_t n;
  int rc = adcp_issues_claim_events(&v, &n, s, (size_t)adcp_cli_arg_int(a, "--limit", 10), secs[0], err);
  if (rc) return rc;
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"events\":[");
    for (size_t i = 0; i < n; i++) {
      if (i) adcp_buf_append_byte(&b, ',');
      adcp_issue_event_write_json(&b, &v[i], 1);
    }
    adcp_buf_append_str(&b, "]}\n");
    adcp_cli_json_emit(&b);
  } else {
    char k[4 * ADCP_ISSUE_KEY_MAX + 8];
    for (size_t i = 0; i < n; i++)
      printf("%s %" PRId64 " %-12s %s %s token %s expires %s attempt %" PRId64 "\n", v[i].event_id, v[i].seq, v[i].kind,
             v[i].issue_id, adcp_cli_escape(k, sizeof k, v[i].issue_key), v[i].lease_token, v[i].lease_expires_at,
             v[i].attempts);
    if (!n) printf("no events to claim\n");
  }
  free(v);
  return 0;
}

static int settle_cmd(adcp_issues *s, const adcp_cli_args *a, const int64_t *secs, adcp_error *err) {
  const char *sub = strrchr(a->spec->name, ' ') + 1;
  const char *event = adcp_cli_arg_str(a, "--event"), *token = adcp_cli_arg_str(a, "--token");
  int ok = 0, rc;
  if (!strcmp(sub, "complete")) rc = adcp_issues_complete_event(&ok, s, event, token, err);
  else rc = adcp_issues_release_event(&ok, s, event, token, secs[0], err);
  if (rc) return rc;
  if (!ok)
    return adcp_error_set(err, ADCP_ECONFLICT, "the lease is stale (expired, reclaimed, or the event is already complete)");
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b, "{\"ok\":true,\"%s\":true}\n", !strcmp(sub, "complete") ? "completed" : "released");
    adcp_cli_json_emit(&b);
  } else {
    printf("%s\n", !strcmp(sub, "complete") ? "completed" : "released");
  }
  return 0;
}

static int prune_cmd(adcp_issues *s, const adcp_cli_args *a, const int64_t *secs, adcp_error *err) {
  int64_t deleted = 0;
  int rc = adcp_issues_prune_events(&deleted, s, secs[0], (size_t)adcp_cli_arg_int(a, "--limit", 10000), err);
  if (rc) return rc;
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b, "{\"ok\":true,\"deleted\":%" PRId64 "}\n", deleted);
    adcp_cli_json_emit(&b);
  } else {
    printf("deleted %" PRId64 " completed events\n", deleted);
  }
  return 0;
}

/* ---- deliver --exec -------------------------------------------------------------------- */

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { (void)sig, stop_requested = 1; }

static void sleep_ms(int64_t ms) {
  struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR && !stop_requested) {
  }
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

extern char **environ;

/* The hook's environment, built before fork: an allowlist of the caller's
 * (never "everything minus a list": a new secret variable would leak), the
 * --pass-env names, and the event's three variables. NULL when out of memory. */
static char **hook_env(const adcp_cli_args *a, const adcp_issue_event *e) {
  size_t n = 0;
  for (char **v = environ; *v; v++) n++;
  char **env = calloc(n + 4, sizeof *env);
  if (!env) return NULL;
  size_t k = 0;
  static const char *const keep[] = {"PATH", "HOME", "LANG", "TZ", "TMPDIR", NULL};
  for (char **v = environ; *v; v++) {
    const char *eq = strchr(*v, '=');
    if (!eq) continue;
    size_t nl = (size_t)(eq - *v);
    int ok = nl > 3 && !strncmp(*v, "LC_", 3);
    for (size_t i = 0; !ok && keep[i]; i++) ok = strlen(keep[i]) == nl && !strncmp(*v, keep[i], nl);
    int it = 0;
    for (const char *p; !ok && (p = adcp_cli_arg_next(a, "--pass-env", &it));)
      ok = strlen(p) == nl && !strncmp(*v, p, nl);
    if (ok && nl >= 16 && !strncmp(*v, "ADCP_ISSUE_EVENT", 16)) ok = 0; /* ours below */
    if (ok) env[k++] = *v;
  }
  char attempt[24];
  snprintf(attempt, sizeof attempt, "%" PRId64, e->attempts);
  const char *names[3] = {"ADCP_ISSUE_EVENT_ID=", "ADCP_ISSUE_EVENT_KIND=", "ADCP_ISSUE_EVENT_ATTEMPT="};
  const char *vals[3] = {e->event_id, e->kind, attempt};
  for (int i = 0; i < 3; i++) {
    size_t len = strlen(names[i]) + strlen(vals[i]) + 1;
    char *x = malloc(len);
    if (!x) {
      for (size_t j = k - (size_t)i; j < k; j++) free(env[j]);
      free(env);
      return NULL;
    }
    snprintf(x, len, "%s%s", names[i], vals[i]);
    env[k++] = x;
  }
  env[k] = NULL;
  return env;
}

static void hook_env_free(char **env) {
  if (!env) return;
  size_t k = 0;
  while (env[k]) k++;
  for (size_t j = k >= 3 ? k - 3 : 0; j < k; j++) free(env[j]); /* the three we allocated */
  free(env);
}

/* Sends sig to the hook's group and to every process reparented to deliver
 * (it is a child subreaper): what the hook forked and then left, even into
 * its own session with setsid, is a child of ours once its parent is gone.
 * Returns how many of our children were found still there. */
static int signal_hook_tree(pid_t pgid, int sig) {
  kill(-pgid, sig);
  int found = 0;
  pid_t self = getpid();
  DIR *d = opendir("/proc");
  if (!d) return 0;
  for (struct dirent *de; (de = readdir(d));) {
    if (de->d_name[0] < '1' || de->d_name[0] > '9') continue;
    char path[300], buf[512];
    snprintf(path, sizeof path, "/proc/%.32s/stat", de->d_name);
    FILE *f = fopen(path, "re");
    if (!f) continue;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *rp = strrchr(buf, ')'); /* the command name may hold spaces or ')' */
    char st = 0;
    long ppid = 0;
    if (!rp || sscanf(rp + 1, " %c %ld", &st, &ppid) != 2 || ppid != (long)self) continue;
    pid_t c = (pid_t)strtol(de->d_name, NULL, 10);
    found++;
    if (st != 'Z') kill(c, sig), kill(-c, sig);
  }
  closedir(d);
  return found;
}

static void reap_children(void) {
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

#define HOOK_GRACE_MS 2000

/* Ends everything the hook started: SIGTERM first when term is set (then
 * SIGKILL after HOOK_GRACE_MS), SIGKILL at once otherwise; bounded. */
static void end_hook_tree(pid_t pgid, int term) {
  int64_t kill_at = mono_ms() + (term ? HOOK_GRACE_MS : 0);
  for (int round = 0; round < 1000; round++) {
    int sig = mono_ms() >= kill_at ? SIGKILL : SIGTERM;
    int left = signal_hook_tree(pgid, sig);
    reap_children();
    if (!left && kill(-pgid, 0) != 0) return;
    struct timespec ts = {0, 5 * 1000000L};
    nanosleep(&ts, NULL);
  }
}

/* Runs cmd with the event on stdin. 0 = exit 0; 1 = failed; 2 = killed at
 * the deadline; 3 = interrupted by SIGINT/SIGTERM to deliver; -1 = could not
 * start. Nothing the command started outlives the call. */
static int run_one(const char *cmd, const adcp_cli_args *a, const adcp_issue_event *e, int64_t budget_ms) {
  adcp_buf in;
  adcp_buf_init(&in);
  adcp_issue_event_write_json(&in, e, 0);
  adcp_buf_append_byte(&in, '\n');
  char **env = hook_env(a, e);
  int fd[2];
  if (!env || pipe(fd)) {
    hook_env_free(env);
    adcp_buf_free(&in);
    return -1;
  }
  fflush(stdout), fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]), close(fd[1]);
    hook_env_free(env);
    adcp_buf_free(&in);
    return -1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    dup2(fd[0], 0);
    dup2(2, 1); /* deliver's stdout carries its own JSON document only */
    close(fd[0]), close(fd[1]);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execle("/bin/sh", "sh", "-c", cmd, (char *)NULL, env);
    _exit(127);
  }
  setpgid(pid, pid); /* both sides, so the kill below never misses the group */
  close(fd[0]);
  hook_env_free(env);
  /* Small documents fit the pipe buffer; a command that never reads stdin
   * gets EPIPE once it exits, which is ignored. */
  size_t off = 0;
  while (off < in.len && !stop_requested) {
    ssize_t w = write(fd[1], in.data + off, in.len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) break;
    off += (size_t)w;
  }
  close(fd[1]);
  adcp_buf_free(&in);
  int64_t deadline = mono_ms() + budget_ms;
  int status = 0, out = -1;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      out = WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
      break;
    }
    if (r < 0 && errno != EINTR) {
      out = 1;
      break;
    }
    if (stop_requested) {
      out = 3;
      break;
    }
    if (mono_ms() >= deadline) {
      out = 2;
      break;
    }
    sleep_ms(10);
  }
  /* The group and whatever escaped it: gently when asked to stop or after a
   * normal end, at once at the lease deadline. */
  end_hook_tree(pid, out != 2);
  return out;
}

static int deliver_cmd(adcp_issues *s, const adcp_cli_args *a, const int64_t *secs, adcp_error *err) {
  int64_t lease = secs[0], backoff = secs[1];
  uint64_t max_attempts = (uint64_t)adcp_cli_arg_int(a, "--max-attempts", 5);
  const char *exec = adcp_cli_arg_str(a, "--exec");
  int once = adcp_cli_arg_has(a, "--once");
  signal(SIGPIPE, SIG_IGN);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  int64_t delivered = 0, failures = 0, killed = 0, dead = 0, stale = 0;
  int interrupted = 0;
  /* Orphans the hook leaves become our children, so none outlives it. */
  prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L);
  /* The command gets 90% of the lease (at least 50 ms less): its outcome is
   * recorded while the lease still holds. */
  int64_t margin = lease / 10 > 50 ? lease / 10 : 50;
  int rc = 0;
  while (!stop_requested) {
    adcp_issue_event *v;
    size_t n;
    if ((rc = adcp_issues_claim_events(&v, &n, s, 1, lease, err))) break;
    if (!n) {
      free(v);
      if (once) {
        adcp_issue_event_stats es;
        if ((rc = adcp_issues_event_stats(&es, s, err))) break;
        if (!es.pending) break;
        sleep_ms(50); /* waiting out a backoff or another claimer's lease */
      } else {
        sleep_ms(500);
      }
      continue;
    }
    adcp_issue_event *e = &v[0];
    int out = run_one(exec, a, e, lease - margin);
    int ok = 0;
    if (out == 0) {
      if ((rc = adcp_issues_complete_event(&ok, s, e->event_id, e->lease_token, err))) {
        free(v);
        break;
      }
      delivered += ok, stale += !ok;
    } else if (out == 3) {
      /* Asked to stop: the event was not the hook's failure; it is claimable again at once. */
      interrupted = 1;
      rc = adcp_issues_release_event(&ok, s, e->event_id, e->lease_token, 0, err);
      stale += !ok;
      char m[ADCP_CLI_ESC_ID];
      fprintf(stderr, "adcp-ledger issue-events: deliver: %s attempt %" PRId64 " interrupted; released\n",
              adcp_cli_escape(m, sizeof m, e->event_id), e->attempts);
    } else {
      failures++, killed += out == 2;
      if ((uint64_t)e->attempts >= max_attempts) {
        rc = adcp_issues_dead_letter_event(&ok, s, e->event_id, e->lease_token, err);
        dead += ok;
      } else {
        int64_t wait = backoff;
        for (int64_t k = 1; k < e->attempts && wait < 300000; k++) wait *= 2;
        if (wait > 300000) wait = 300000;
        rc = adcp_issues_release_event(&ok, s, e->event_id, e->lease_token, wait, err);
      }
      stale += !ok;
      char m[ADCP_CLI_ESC_ID];
      fprintf(stderr, "adcp-ledger issue-events: deliver: %s attempt %" PRId64 " %s%s\n",
              adcp_cli_escape(m, sizeof m, e->event_id), e->attempts,
              out == 2  ? "killed at the lease deadline"
              : out < 0 ? "could not start the command"
                        : "failed",
              (uint64_t)e->attempts >= max_attempts ? "; dead-lettered" : "; released for a retry");
    }
    free(v);
    if (rc) break;
  }
  if (rc) return rc;
  if (a->json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_printf(&b,
                    "{\"ok\":true,\"delivered\":%" PRId64 ",\"failed_attempts\":%" PRId64 ",\"killed\":%" PRId64
                    ",\"dead_lettered\":%" PRId64 ",\"stale_leases\":%" PRId64 ",\"interrupted\":%s}\n",
                    delivered, failures, killed, dead, stale, interrupted ? "true" : "false");
    adcp_cli_json_emit(&b);
  } else {
    printf("delivered %" PRId64 ", failed attempts %" PRId64 " (killed %" PRId64 "), dead-lettered %" PRId64
           ", stale leases %" PRId64 "%s\n",
           delivered, failures, killed, dead, stale, interrupted ? "; interrupted" : "");
  }
  return 0;
}

/* The seconds options of a subcommand (at most two), checked before the store
 * opens: S with at most 3 decimals, in [lo_ms, max_s]. */
typedef struct secs_rule {
  const char *name;
  int64_t lo_ms, max_s, dflt_ms;
  const char *range; /* for the refusal */
} secs_rule;

typedef int (*events_fn)(adcp_issues *s, const adcp_cli_args *a, const int64_t *secs, adcp_error *err);

static int run_events(const adcp_cli_globals *g, const adcp_cli_args *a, const secs_rule *rules, events_fn fn) {
  int64_t secs[2] = {0, 0};
  for (int i = 0; i < 2 && rules[i].name; i++) {
    const char *v = adcp_cli_arg_str(a, rules[i].name);
    secs[i] = rules[i].dflt_ms;
    char b[ADCP_CLI_ESC_ID];
    if (v && (parse_seconds(&secs[i], v, rules[i].max_s) || secs[i] < rules[i].lo_ms))
      return adcp_cli_usage_error(a->spec->name, "%s needs seconds %s (3 decimals at most), not '%s'", rules[i].name,
                                  rules[i].range, adcp_cli_escape(b, sizeof b, v));
  }
  int it = 0, n = 0;
  for (const char *v; (v = adcp_cli_arg_next(a, "--pass-env", &it)); n++) {
    if (!env_name_ok(v))
      return adcp_cli_usage_error(a->spec->name, "--pass-env needs a variable name ([A-Za-z_][A-Za-z0-9_]*)");
    if (n == PASS_ENV_MAX)
      return adcp_cli_usage_error(a->spec->name, "--pass-env is accepted at most %d times", PASS_ENV_MAX);
  }
  adcp_error err = {0};
  adcp_storage *st;
  adcp_issues *s;
  int rc = open_store(&st, &s, g, &err);
  if (rc) return adcp_cli_fail("issue-events", &err);
  rc = fn(s, a, secs, &err);
  adcp_issues_close(s);
  adcp_storage_close(st);
  if (rc) return adcp_cli_fail("issue-events", &err);
  return fflush(stdout) == 0 ? 0 : ADCP_CLI_EXIT_USAGE;
}

static int run_claim(const adcp_cli_globals *g, const adcp_cli_args *a) {
  static const secs_rule r[] = {{"--lease", 1, 86400, 30000, "more than 0 and at most 86400"}, {NULL, 0, 0, 0, NULL}};
  return run_events(g, a, r, claim_cmd);
}
static int run_complete(const adcp_cli_globals *g, const adcp_cli_args *a) {
  static const secs_rule r[] = {{NULL, 0, 0, 0, NULL}};
  return run_events(g, a, r, settle_cmd);
}
static int run_release(const adcp_cli_globals *g, const adcp_cli_args *a) {
  static const secs_rule r[] = {{"--retry-after", 0, 30 * 86400, 0, "0-2592000"}, {NULL, 0, 0, 0, NULL}};
  return run_events(g, a, r, settle_cmd);
}
static int run_prune(const adcp_cli_globals *g, const adcp_cli_args *a) {
  static const secs_rule r[] = {{"--older-than", 0, 100LL * 365 * 86400, 0, "0-3153600000"}, {NULL, 0, 0, 0, NULL}};
  return run_events(g, a, r, prune_cmd);
}
static int run_deliver(const adcp_cli_globals *g, const adcp_cli_args *a) {
  static const secs_rule r[] = {{"--lease", 100, 86400, 30000, "0.1-86400"}, {"--backoff", 0, 300, 1000, "0-300"}};
  return run_events(g, a, r, deliver_cmd);
}

/* ---- the option tables (cli/opt.h) ---- */

#define SETTLE_OPTS \
  ADCP_OPT_STR_REQ("--event", "E", "event ID"), ADCP_OPT_STR_REQ("--token", "T", "the lease_token claim printed")
static const adcp_cli_optdef claim_opts[] = {
    ADCP_OPT_INT("--limit", "N", 1, 1000, "at most N events (default 10)"),
    ADCP_OPT_STR("--lease", "S", "lease seconds, more than 0 and at most 86400 (default 30)"), ADCP_OPT_END};
static const adcp_cli_optdef complete_opts[] = {SETTLE_OPTS, ADCP_OPT_END};
static const adcp_cli_optdef release_opts[] = {
    SETTLE_OPTS, ADCP_OPT_STR("--retry-after", "S", "claimable again after S seconds, 0-2592000 (default 0)"),
    ADCP_OPT_END};
static const adcp_cli_optdef prune_opts[] = {
    ADCP_OPT_STR_REQ("--older-than", "S", "completed events older than S seconds"),
    ADCP_OPT_INT("--limit", "N", 1, 1000000, "at most N events (default 10000)"), ADCP_OPT_END};
static const adcp_cli_optdef deliver_opts[] = {
    ADCP_OPT_STR_REQ("--exec", "CMD", "run by /bin/sh -c with each event as one JSON object on stdin"),
    ADCP_OPT_STR("--lease", "S", "lease seconds, 0.1-86400 (default 30); CMD gets 90% of it"),
    ADCP_OPT_INT("--max-attempts", "N", 1, 1000, "dead-letter after N failures (default 5)"),
    ADCP_OPT_STR("--backoff", "S", "first retry delay, 0-300 s (default 1), doubled per attempt"),
    {"--pass-env", ADCP_CLI_OPT_STRING, ADCP_CLI_OPT_REPEAT, "NAME", 0, 0, NULL,
     "pass this environment variable to CMD (at most 64)"},
    ADCP_OPT_FLAG("--once", "stop when no pending event is left"),
    ADCP_OPT_END};
#define EV_SUB(var, nm, sum, op, fn) \
  static const adcp_cli_spec var = {.version = ADCP_CLI_SPEC_VERSION, \
                                    .name = "issue-events " nm, \
                                    .globals = "[--db URL]", \
                                    .summary = sum, \
                                    .opts = op, \
                                    .run = fn}
EV_SUB(ev_claim, "claim", "lease events: at most one per occurrence, in recording order, with their lease_token",
       claim_opts, run_claim);
EV_SUB(ev_complete, "complete", "complete a leased event (a stale lease is CONFLICT)", complete_opts, run_complete);
EV_SUB(ev_release, "release", "make a leased event claimable again (a stale lease is CONFLICT)", release_opts, run_release);
EV_SUB(ev_prune, "prune", "delete completed events older than S seconds (never incomplete ones)", prune_opts, run_prune);
EV_SUB(ev_deliver, "deliver", "claim events one at a time and run CMD for each (a pager script, a webhook sender)",
       deliver_opts, run_deliver);
static const adcp_cli_spec *const events_subs[] = {&ev_claim, &ev_complete, &ev_release, &ev_prune, &ev_deliver, NULL};
const adcp_cli_spec adcp_cli_issue_events_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "issue-events",
    .summary =
        "The outbox of issue transitions (spec 07 §8). claim leases events for S seconds; complete\n"
        "and release need the token of a lease that still holds. Seconds may have 3 decimals.",
    .text =
        "deliver runs CMD with /bin/sh -c, the event as one JSON object on stdin (its stdout goes\n"
        "to stderr). Its environment is an allowlist: PATH, HOME, LANG, LC_*, TZ, TMPDIR, the\n"
        "names given with --pass-env NAME ([A-Za-z_][A-Za-z0-9_]*), and ADCP_ISSUE_EVENT_ID,\n"
        "ADCP_ISSUE_EVENT_KIND, ADCP_ISSUE_EVENT_ATTEMPT; nothing else of the caller's. It runs in\n"
        "its own process group; whatever it leaves running (forked, even setsid) is killed when\n"
        "it ends. Exit 0 completes the event; anything else (or still running at 90% of the\n"
        "lease: killed) releases it after --backoff S doubled per attempt (at most 300 s), and\n"
        "the --max-attempts'th failure dead-letters it: it is never claimed again and shows in\n"
        "`issue list`. Without --once deliver runs until SIGINT/SIGTERM. A SIGINT/SIGTERM while\n"
        "a command runs sends SIGTERM to everything it started, SIGKILL 2 s later, releases the\n"
        "event for an immediate retry and exits 0 (\"interrupted\":true).\n"
        "--json prints one document. Consumers must deduplicate on event_id (an expired\n"
        "lease is delivered again).\n\n"
        "exit status: 0 ok; 1 usage; 2 refused (INVALID_INPUT, CONFLICT: stale lease);\n"
        "4 storage or REPORTING_SCHEMA_BEHIND (migration 0008 not applied).\n",
    .subs = events_subs,
};
