/* cli/metrics_http.c — the metrics endpoint of `maintain --metrics-listen
 * HOST:PORT`: GET /metrics answers the worker's Prometheus text
 * (adcp_worker_metrics_text). Anything else is 404/405. The address must be a
 * numeric IPv4 address; port 0 picks a free port (reported by
 * adcp_cli_metrics_port).
 *
 * Slow clients cannot hold it: libmicrohttpd runs on our own thread
 * (MHD_run_wait over epoll), which between rounds closes every connection
 * whose request headers have not arrived within METRICS_HEADER_DEADLINE_MS of
 * its start (or of the end of its previous request) — an idle timeout alone
 * is reset by one byte every few seconds. Each client address holds at most
 * METRICS_PER_IP_MAX connections and all of them at most METRICS_CONN_MAX, so
 * a scrape finds a slot while hundreds of slow clients are connected. Because
 * the deadline runs on the thread that owns every connection, a socket is
 * never shut down after libmicrohttpd closed it. An optional bearer token
 * (--metrics-token-file) is compared in constant time. */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "adcp/worker.h"
#include "cli/cli.h"
#include "cli/metrics_http.h"

typedef struct conn_slot {
  int used, headers_done, shut;
  int fd;
  int64_t started_ms;
} conn_slot;

struct adcp_cli_metrics {
  struct MHD_Daemon *d;
  adcp_worker *w;
  uint16_t port;
  int loopback;
  char *token;
  size_t token_len;
  pthread_t thread;
  int thread_started;
  atomic_int stop;
  conn_slot slots[METRICS_CONN_MAX];
};

static int64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status, const char *type, void *body, size_t len,
                              enum MHD_ResponseMemoryMode mode) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
  if (!r) {
    if (mode == MHD_RESPMEM_MUST_FREE) free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", type);
  if (status == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(r, "WWW-Authenticate", "Bearer");
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static conn_slot *slot_of(struct MHD_Connection *c) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return ci ? ci->socket_context : NULL;
}

/* "Bearer TOKEN" with exactly the configured token (constant-time compare). */
static int authorized(const adcp_cli_metrics *m, struct MHD_Connection *c) {
  if (!m->token) return 1;
  const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  if (!h || strncmp(h, "Bearer ", 7)) return 0;
  h += 7;
  return strlen(h) == m->token_len && CRYPTO_memcmp(h, m->token, m->token_len) == 0;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
  (void)version, (void)upload, (void)upload_size, (void)state;
  adcp_cli_metrics *m = cls;
  conn_slot *s = slot_of(c);
  if (s) s->headers_done = 1; /* the handler runs once the request headers are complete */
  static char not_found[] = "not found: GET /metrics\n", no_method[] = "only GET\n", unauth[] = "unauthorized\n";
  if (!authorized(m, c))
    return answer(c, MHD_HTTP_UNAUTHORIZED, "text/plain", unauth, strlen(unauth), MHD_RESPMEM_PERSISTENT);
  if (strcmp(method, "GET") && strcmp(method, "HEAD"))
    return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", no_method, strlen(no_method), MHD_RESPMEM_PERSISTENT);
  if (strcmp(url, "/metrics"))
    return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, strlen(not_found), MHD_RESPMEM_PERSISTENT);
  adcp_buf b;
  adcp_buf_init(&b);
  if (adcp_buf_append_str(&b,
                          "# HELP adcp_maintain_up 1 while adcp-ledger maintain serves metrics.\n"
                          "# TYPE adcp_maintain_up gauge\nadcp_maintain_up 1\n") ||
      adcp_worker_metrics_text(&b, m->w)) {
    adcp_buf_free(&b);
    return MHD_NO;
  }
  size_t len = b.len;
  return answer(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.data, len, MHD_RESPMEM_MUST_FREE);
}

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code) {
  adcp_cli_metrics *m = cls;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    *socket_context = NULL;
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    for (size_t i = 0; ci && i < METRICS_CONN_MAX; i++)
      if (!m->slots[i].used) {
        m->slots[i] = (conn_slot){1, 0, 0, ci->connect_fd, now_ms()};
        *socket_context = &m->slots[i];
        break;
      }
  } else if (*socket_context) {
    ((conn_slot *)*socket_context)->used = 0;
    *socket_context = NULL;
  }
}

/* A keep-alive connection's next request gets its own header deadline. */
static void on_completed(void *cls, struct MHD_Connection *c, void **state, enum MHD_RequestTerminationCode toe) {
  (void)cls, (void)state, (void)toe;
  conn_slot *s = slot_of(c);
  if (s) s->headers_done = 0, s->started_ms = now_ms();
}

static void *serve(void *arg) {
  adcp_cli_metrics *m = arg;
  while (!atomic_load(&m->stop)) {
    MHD_run_wait(m->d, 100);
    int64_t t = now_ms();
    for (size_t i = 0; i < METRICS_CONN_MAX; i++) {
      conn_slot *s = &m->slots[i];
      /* Still ours here (libmicrohttpd closes sockets only inside MHD_run_wait,
       * after telling on_connection): shutting it down makes the next round
       * close the connection. */
      if (s->used && !s->headers_done && !s->shut && t - s->started_ms > METRICS_HEADER_DEADLINE_MS)
        shutdown(s->fd, SHUT_RDWR), s->shut = 1;
    }
  }
  return NULL;
}

static int read_token(adcp_cli_metrics *m, const char *path, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_cli_read_file(&b, path, METRICS_TOKEN_MAX, "--metrics-token-file", err);
  size_t n = b.len;
  while (!rc && n && (b.data[n - 1] == '\n' || b.data[n - 1] == '\r')) n--;
  if (!rc && !n) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "--metrics-token-file %s is empty", path);
  for (size_t i = 0; !rc && i < n; i++)
    if (b.data[i] <= 0x20 || b.data[i] >= 0x7f)
      rc = adcp_error_set(err, ADCP_EINVALID_INPUT,
                          "--metrics-token-file %s: the token must be printable ASCII without spaces (byte %zu)", path,
                          i + 1);
  if (!rc && !(m->token = malloc(n + 1))) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  if (!rc) memcpy(m->token, b.data, n), m->token[n] = 0, m->token_len = n;
  if (b.data) OPENSSL_cleanse(b.data, b.cap);
  adcp_buf_free(&b);
  return rc;
}

int adcp_cli_metrics_start(adcp_cli_metrics **out, const char *listen, const char *token_file, adcp_worker *w,
                           adcp_error *err) {
  *out = NULL;
  const char *colon = listen ? strrchr(listen, ':') : NULL;
  char host[64];
  uint64_t port = 0;
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof sa);
  sa.sin_family = AF_INET;
  if (!colon || (size_t)(colon - listen) >= sizeof host || adcp_cli_parse_u64(&port, colon + 1) || port > 65535)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "--metrics-listen must be IPV4:PORT, e.g. 127.0.0.1:9464");
  memcpy(host, listen, (size_t)(colon - listen));
  host[colon - listen] = 0;
  if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "--metrics-listen: the address must be a numeric IPv4 address");
  sa.sin_port = htons((uint16_t)port);
  adcp_cli_metrics *m = calloc(1, sizeof *m);
  if (!m) return adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  m->w = w;
  m->loopback = (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
  if (token_file) {
    int rc = read_token(m, token_file, err);
    if (rc) {
      free(m);
      return rc;
    }
  }
  m->d = MHD_start_daemon(MHD_USE_EPOLL, (uint16_t)port, NULL, NULL, handle, m, MHD_OPTION_SOCK_ADDR,
                          (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONN_MAX,
                          MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_PER_IP_MAX,
                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_IDLE_TIMEOUT_S,
                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)16384, MHD_OPTION_NOTIFY_CONNECTION,
                          on_connection, m, MHD_OPTION_NOTIFY_COMPLETED, on_completed, m, MHD_OPTION_END);
  if (!m->d) {
    adcp_cli_metrics_stop(m);
    return adcp_error_set(err, ADCP_EIO, "--metrics-listen: cannot listen on %s (in use or not allowed)", listen);
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
  m->port = info ? info->port : (uint16_t)port;
  if (pthread_create(&m->thread, NULL, serve, m)) {
    adcp_cli_metrics_stop(m);
    return adcp_error_set(err, ADCP_ENOMEM, "--metrics-listen: cannot start the server thread");
  }
  m->thread_started = 1;
  *out = m;
  return 0;
}

uint16_t adcp_cli_metrics_port(const adcp_cli_metrics *m) { return m ? m->port : 0; }

int adcp_cli_metrics_unguarded(const adcp_cli_metrics *m) { return m && !m->loopback && !m->token; }

void adcp_cli_metrics_stop(adcp_cli_metrics *m) {
  if (!m) return;
  atomic_store(&m->stop, 1);
  if (m->thread_started) pthread_join(m->thread, NULL);
  if (m->d) MHD_stop_daemon(m->d);
  if (m->token) OPENSSL_cleanse(m->token, m->token_len), free(m->token);
  free(m);
}
