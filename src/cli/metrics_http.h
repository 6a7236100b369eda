/* cli/metrics_http.h — the metrics endpoint of `maintain --metrics-listen`
 * (libmicrohttpd), serving a worker's Prometheus text. */
#ifndef ADCP_CLI_METRICS_HTTP_H
#define ADCP_CLI_METRICS_HTTP_H

#include <stdint.h>

#include "adcp/worker.h"

/* Limits of the endpoint (docs/worker.md). */
#define METRICS_CONN_MAX 512u           /* connections at once, all clients */
#define METRICS_PER_IP_MAX 8u           /* connections at once from one client address */
#define METRICS_HEADER_DEADLINE_MS 3000 /* request headers must be complete by then */
#define METRICS_IDLE_TIMEOUT_S 5u       /* a connection with no traffic at all is closed */
#define METRICS_TOKEN_MAX 4096          /* bytes of --metrics-token-file */

typedef struct adcp_cli_metrics adcp_cli_metrics;
/* Listens on listen ("IPV4:PORT"; port 0 = any free one) on its own thread.
 * token_file (may be NULL): every request must then carry "Authorization:
 * Bearer TOKEN" with the file's token (one line, printable ASCII). Returns
 * INVALID_INPUT for a bad address or token file, ADCP_EIO when it cannot bind
 * or read the file, ENOMEM. */
int adcp_cli_metrics_start(adcp_cli_metrics **out, const char *listen, const char *token_file, adcp_worker *w,
                           adcp_error *err);
uint16_t adcp_cli_metrics_port(const adcp_cli_metrics *m);
/* 1 when bound beyond loopback without a token (the caller warns). */
int adcp_cli_metrics_unguarded(const adcp_cli_metrics *m);
void adcp_cli_metrics_stop(adcp_cli_metrics *m);

#endif
