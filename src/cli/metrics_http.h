/* cli/metrics_http.h — the metrics endpoint of `maintain --metrics-listen`
 * (libmicrohttpd), serving a worker's Prometheus text. */
#ifndef ADCP_CLI_METRICS_HTTP_H
#define ADCP_CLI_METRICS_HTTP_H

#include <stdint.h>

#include "adcp/worker.h"

typedef struct adcp_cli_metrics adcp_cli_metrics;
/* Listens on listen ("IPV4:PORT"; port 0 = any free one). INVALID_INPUT for a
 * bad address, ADCP_EIO when it cannot bind. */
int adcp_cli_metrics_start(adcp_cli_metrics **out, const char *listen, adcp_worker *w, adcp_error *err);
uint16_t adcp_cli_metrics_port(const adcp_cli_metrics *m);
void adcp_cli_metrics_stop(adcp_cli_metrics *m);

#endif
