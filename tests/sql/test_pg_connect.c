/* tests/sql/test_pg_connect.c — PostgreSQL connection failures say why,
 * without secrets, against real servers: a missing database, a closed port, a
 * role that may not log in or does not exist, TLS demanded by the URL of a
 * server without TLS, a server that never answers (timeout), and — on a
 * second throwaway cluster of scripts/pg-cluster.sh whose pg_hba.conf the
 * test rewrites — a wrong or missing password and a server that refuses
 * unencrypted connections. No message may carry the password or the user. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "adcp/sql.h"
#include "testutil.h"

#define SECRET "Zq7-secret-pw"

static const char *admin_url(void) {
  const char *u = getenv("ADCP_TEST_PG_URL");
  if (!u || !*u)
    fail_msg(
        "ADCP_TEST_PG_URL is not set: run the suite through scripts/test.sh (PostgreSQL tests are never "
        "skipped silently)");
  return u;
}

/* host:port of a postgresql://user@host:port/db URL. */
static void endpoint_of(char *out, size_t n, const char *url) {
  const char *at = strchr(url, '@');
  assert_non_null(at);
  const char *slash = strchr(at, '/');
  assert_non_null(slash);
  snprintf(out, n, "%.*s", (int)(slash - at - 1), at + 1);
}

static void admin_exec(const char *url, const char *sql) {
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, url, &err)) fail_msg("admin connect: %s", err.message);
  if (adcp_sql_exec_script(c, sql, &err)) fail_msg("admin statement failed: %s", err.message);
  adcp_sql_close(c);
}

/* Connects to url, expecting a STORAGE_ERROR whose message holds `why` and
 * none of the forbidden strings. */
static void expect_failure(const char *url, const char *why, const char *const *forbidden) {
  adcp_sql_conn *c = NULL;
  adcp_error err = {0};
  int rc = adcp_sql_connect(&c, url, &err);
  if (rc == 0) {
    adcp_sql_close(c);
    fail_msg("connect to a bad target succeeded (want '%s')", why);
  }
  if (rc != ADCP_ESTORAGE) fail_msg("want STORAGE_ERROR, got %d: %s", rc, err.message);
  if (!strstr(err.message, why)) fail_msg("message '%s' does not say '%s'", err.message, why);
  if (!strstr(err.message, "cannot connect to PostgreSQL")) fail_msg("message '%s' lacks the prefix", err.message);
  assert_null(strstr(err.message, SECRET));
  for (size_t i = 0; forbidden && forbidden[i]; i++)
    if (strstr(err.message, forbidden[i])) fail_msg("message '%s' reveals '%s'", err.message, forbidden[i]);
}

static int free_port(int *fd_keep_listening) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  socklen_t len = sizeof a;
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &len), 0);
  if (fd_keep_listening) {
    assert_int_equal(listen(fd, 4), 0);
    *fd_keep_listening = fd;
  } else {
    close(fd);
  }
  return ntohs(a.sin_port);
}

static void missing_database(void **state) {
  (void)state;
  char ep[128], url[512];
  endpoint_of(ep, sizeof ep, admin_url());
  snprintf(url, sizeof url, "postgresql://postgres:" SECRET "@%s/adcp_no_such_db", ep);
  expect_failure(url, "database does not exist", NULL);
  expect_failure(url, "database adcp_no_such_db:", NULL); /* the endpoint may be named */
}

static void closed_port(void **state) {
  (void)state;
  char url[256];
  snprintf(url, sizeof url, "postgresql://postgres:" SECRET "@127.0.0.1:%d/postgres", free_port(NULL));
  expect_failure(url, "connection refused", NULL);
  expect_failure(url, "at host 127.0.0.1, port ", NULL);
  /* Malformed URLs move the password into the endpoint fields: never shown. */
  const char *const forbid[] = {"hunter2", "mallory", NULL};
  expect_failure("postgresql://mallory:hunter2/" SECRET "@127.0.0.1:1/x", "the URL's port is not a number", forbid);
  expect_failure("postgresql://mallory:hunter2@" SECRET "@127.0.0.1:1/x?connect_timeout=2", "host (not shown)", forbid);
}

static void role_refused(void **state) {
  (void)state;
  char role[64], sql[256], ep[128], url[512];
  snprintf(role, sizeof role, "adcp_nologin_%d", (int)getpid());
  snprintf(sql, sizeof sql, "DROP ROLE IF EXISTS %s; CREATE ROLE %s NOLOGIN PASSWORD '" SECRET "'", role, role);
  admin_exec(admin_url(), sql);
  endpoint_of(ep, sizeof ep, admin_url());
  const char *const forbid[] = {role, NULL};
  snprintf(url, sizeof url, "postgresql://%s:" SECRET "@%s/postgres", role, ep);
  expect_failure(url, "authentication failed (the role may not log in)", forbid);
  /* A role that does not exist (28000 as well). */
  snprintf(url, sizeof url, "postgresql://adcp_no_such_role_%d:" SECRET "@%s/postgres", (int)getpid(), ep);
  const char *const forbid2[] = {"adcp_no_such_role", NULL};
  expect_failure(url, "authentication failed (the role does not exist)", forbid2);
  snprintf(sql, sizeof sql, "DROP ROLE %s", role);
  admin_exec(admin_url(), sql);
}

static void tls_demanded_by_url(void **state) {
  (void)state;
  char ep[128], url[512];
  endpoint_of(ep, sizeof ep, admin_url());
  /* The test cluster has no TLS. */
  snprintf(url, sizeof url, "postgresql://postgres:" SECRET "@%s/postgres?sslmode=require", ep);
  expect_failure(url, "TLS required by the URL (sslmode) but the server does not support it", NULL);
}

static void server_never_answers(void **state) {
  (void)state;
  int fd;
  int port = free_port(&fd); /* listening, never accepting: the handshake never completes */
  char url[256];
  snprintf(url, sizeof url, "postgresql://postgres:" SECRET "@127.0.0.1:%d/postgres?connect_timeout=2", port);
  expect_failure(url, "timeout", NULL);
  close(fd);
}

/* ---- a second cluster with a pg_hba.conf of our own ------------------------------------ */

typedef struct cluster {
  char url[256], dir[512], hba[600];
} cluster;

static void cluster_start(cluster *k) {
  adcp_buf out;
  adcp_buf_init(&out);
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s/scripts/pg-cluster.sh' start", ADCP_SOURCE_DIR);
  if (tu_run(cmd, NULL, 0, &out) != 0) fail_msg("could not start a second test cluster");
  adcp_buf_cstr(&out);
  const char *u = strstr((const char *)out.data, "ADCP_TEST_PG_URL="),
             *d = strstr((const char *)out.data, "ADCP_TEST_PG_DIR=");
  assert_non_null(u);
  assert_non_null(d);
  sscanf(u + strlen("ADCP_TEST_PG_URL="), "%255s", k->url);
  sscanf(d + strlen("ADCP_TEST_PG_DIR="), "%511s", k->dir);
  snprintf(k->hba, sizeof k->hba, "%s/data/pg_hba.conf", k->dir);
  adcp_buf_free(&out);
}

static void cluster_stop(cluster *k) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "'%s/scripts/pg-cluster.sh' stop '%s' >/dev/null 2>&1", ADCP_SOURCE_DIR, k->dir);
  tu_run(cmd, NULL, 0, NULL);
}

/* Replaces pg_hba.conf (superuser `postgres` keeps trust) and reloads it;
 * the reload is asynchronous, so wait until probe_url stops connecting. */
static void cluster_hba(cluster *k, const char *rules, const char *probe_url) {
  char text[1024];
  snprintf(text, sizeof text, "%shost all postgres 127.0.0.1/32 trust\n", rules);
  tu_write_file(k->hba, text, strlen(text));
  admin_exec(k->url, "SELECT pg_reload_conf()");
  for (int i = 0; i < 200; i++) {
    adcp_sql_conn *c;
    adcp_error err = {0};
    if (adcp_sql_connect(&c, probe_url, &err)) return;
    adcp_sql_close(c);
    usleep(50 * 1000);
  }
  fail_msg("pg_hba.conf was not reloaded");
}

static int cluster_setup(void **state) {
  cluster *k = calloc(1, sizeof *k);
  cluster_start(k);
  *state = k;
  return 0;
}

static int cluster_teardown(void **state) {
  cluster_stop(*state);
  free(*state);
  return 0;
}

static void passwords_and_access_rules(void **state) {
  cluster *k = *state;
  char ep[128], url[512], probe[512];
  endpoint_of(ep, sizeof ep, k->url);
  admin_exec(k->url,
             "SET password_encryption = 'scram-sha-256'; CREATE ROLE adcp_pw_user LOGIN PASSWORD 'right-"
             "pw-1'; CREATE ROLE adcp_tls_user LOGIN");
  snprintf(probe, sizeof probe, "postgresql://adcp_tls_user@%s/postgres?sslmode=disable", ep);
  cluster_hba(k,
              "host all adcp_pw_user 127.0.0.1/32 scram-sha-256\n"
              "hostnossl all adcp_tls_user 127.0.0.1/32 reject\n",
              probe);
  const char *const forbid[] = {"adcp_pw_user", "adcp_tls_user", "right-pw", NULL};

  snprintf(url, sizeof url, "postgresql://adcp_pw_user:" SECRET "@%s/postgres", ep);
  expect_failure(url, "authentication failed (check the user and password)", forbid);
  snprintf(url, sizeof url, "postgresql://adcp_pw_user@%s/postgres", ep);
  setenv("PGPASSFILE", "/nonexistent-adcp-pgpass", 1); /* no stored password may be found */
  unsetenv("PGPASSWORD");
  expect_failure(url, "authentication failed: the server wants a password and none was given", forbid);
  /* The rule is real: the right password connects. */
  snprintf(url, sizeof url, "postgresql://adcp_pw_user:right-pw-1@%s/postgres", ep);
  adcp_sql_conn *c;
  adcp_error err = {0};
  if (adcp_sql_connect(&c, url, &err)) fail_msg("right password refused: %s", err.message);
  adcp_sql_close(c);

  /* The server refuses unencrypted connections for this role. */
  snprintf(url, sizeof url, "postgresql://adcp_tls_user:" SECRET "@%s/postgres?sslmode=disable", ep);
  expect_failure(url, "TLS required: the server does not accept unencrypted connections", forbid);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(missing_database),
      cmocka_unit_test(closed_port),
      cmocka_unit_test(role_refused),
      cmocka_unit_test(tls_demanded_by_url),
      cmocka_unit_test(server_never_answers),
      cmocka_unit_test_setup_teardown(passwords_and_access_rules, cluster_setup, cluster_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
