/* cli/metrics_http.c — the metrics endpoint of `maintain --metrics-listen
 * HOST:PORT`: GET /metrics answers the worker's Prometheus text
 * (adcp_worker_metrics_text) from libmicrohttpd's own thread. Anything else
 * is 404/405. The address must be a numeric IPv4 address; port 0 picks a free
 * port (reported by adcp_cli_metrics_port). */
#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/worker.h"
#include "cli/cli.h"
#include "cli/metrics_http.h"

struct adcp_cli_metrics {
  struct MHD_Daemon *d;
  adcp_worker *w;
  uint16_t port;
};

static enum MHD_Result answer(struct MHD_Connection *c, unsigned int status, const char *type, void *body, size_t len,
                              enum MHD_ResponseMemoryMode mode) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, mode);
  if (!r) {
    if (mode == MHD_RESPMEM_MUST_FREE) free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, "Content-Type", type);
  enum MHD_Result rc = MHD_queue_response(c, status, r);
  MHD_destroy_response(r);
  return rc;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **state) {
  (void)version, (void)upload, (void)upload_size, (void)state;
  adcp_cli_metrics *m = cls;
  static char not_found[] = "not found: GET /metrics\n", no_method[] = "only GET\n";
  if (strcmp(method, "GET") && strcmp(method, "HEAD"))
    return answer(c, MHD_HTTP_METHOD_NOT_ALLOWED, "text/plain", no_method, strlen(no_method), MHD_RESPMEM_PERSISTENT);
  if (strcmp(url, "/metrics"))
    return answer(c, MHD_HTTP_NOT_FOUND, "text/plain", not_found, strlen(not_found), MHD_RESPMEM_PERSISTENT);
  adcp_buf b;
  adcp_buf_init(&b);
  if (adcp_buf_append_str(&b, "# HELP adcp_maintain_up 1 while adcp-ledger maintain serves metrics.\n"
                              "# TYPE adcp_maintain_up gauge\nadcp_maintain_up 1\n") ||
      adcp_worker_metrics_text(&b, m->w)) {
    adcp_buf_free(&b);
    return MHD_NO;
  }
  size_t len = b.len;
  return answer(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", b.data, len, MHD_RESPMEM_MUST_FREE);
}

int adcp_cli_metrics_start(adcp_cli_metrics **out, const char *listen, adcp_worker *w, adcp_error *err) {
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
  m->d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)port, NULL, NULL, handle, m, MHD_OPTION_SOCK_ADDR,
                          (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT, 16u, MHD_OPTION_CONNECTION_TIMEOUT, 10u,
                          MHD_OPTION_END);
  if (!m->d) {
    free(m);
    return adcp_error_set(err, ADCP_EIO, "--metrics-listen: cannot listen on %s (in use or not allowed)", listen);
  }
  const union MHD_DaemonInfo *info = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_BIND_PORT);
  m->port = info ? info->port : (uint16_t)port;
  *out = m;
  return 0;
}

uint16_t adcp_cli_metrics_port(const adcp_cli_metrics *m) { return m ? m->port : 0; }

void adcp_cli_metrics_stop(adcp_cli_metrics *m) {
  if (!m) return;
  MHD_stop_daemon(m->d);
  free(m);
}
