/* worker/gauges.c — room src/worker: the database's state that the metrics
 * export beside the worker's own figures (docs/worker.md "Metrics"): feed
 * consumer lag, write intents by state, periods in retention backoff,
 * quarantined legacy revisions and audit-log leaves by checkpoint state. Read
 * after each pass, on the pass's thread and connection; a scrape only copies
 * the latest figures, so it never touches the database. Counts only: the
 * layers that own these tables decide what they mean. */
#include "worker/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/feed.h"
#include "adcp/import.h"
#include "adcp/sql.h"

void adcp_worker__gauges_free(worker_gauges *g) {
  free(g->consumers);
  g->consumers = NULL, g->n_consumers = 0;
}

/* Rows of (label, count): adds each count to the slot its label names. */
static int grouped(adcp_sql_conn *c, const char *sql, const char *const *labels, int64_t *const *slots, adcp_error *err) {
  adcp_sql_rows *r = NULL;
  int rc = adcp_sql_query(&r, c, sql, NULL, 0, err);
  while (!rc && (rc = adcp_sql_next(r, err)) == 1) {
    const char *label = adcp_sql_get_text(r, 0, NULL);
    for (size_t i = 0; labels[i]; i++)
      if (!strcmp(label, labels[i])) *slots[i] += adcp_sql_get_int64(r, 1);
    rc = 0;
  }
  adcp_sql_rows_free(r);
  return rc < 0 ? rc : 0;
}

static int read_all(worker_gauges *g, adcp_sql_conn *c, adcp_error *err) {
  static const char *const intent_states[] = {"open", "sweeping", NULL};
  int64_t *intent_slots[] = {&g->intents_open, &g->intents_sweeping};
  int rc = grouped(c, "SELECT state, COUNT(*) FROM adcp_reporting_row_write_intents GROUP BY state", intent_states,
                   intent_slots, err);
  /* Stalled: a period with a recorded failed attempt (spec 03 §8 backoff). */
  static const char *const ops[] = {"retirement", "row_pruning", NULL};
  int64_t *op_slots[] = {&g->stalled_retirement, &g->stalled_row_pruning};
  if (!rc)
    rc = grouped(c, "SELECT operation, COUNT(*) FROM adcp_reporting_retention_attempts GROUP BY operation", ops,
                 op_slots, err);
  uint64_t q = 0;
  if (!rc && !(rc = adcp_import_quarantine_count(&q, c, err))) g->quarantined = (int64_t)q;
  /* Leaves below an account's newest checkpoint's tree size are covered by
   * a signature; the rest wait for the next checkpoint. */
  static const char *const leaf_states[] = {"checkpointed", "unsigned", NULL};
  int64_t *leaf_slots[] = {&g->audit_leaves_checkpointed, &g->audit_leaves_unsigned};
  if (!rc)
    rc = grouped(c,
                 "SELECT CASE WHEN l.leaf_index < COALESCE(k.tree_size, 0) THEN 'checkpointed' ELSE 'unsigned' END, "
                 "COUNT(*) FROM adcp_audit_log_leaves l LEFT JOIN (SELECT account_id, MAX(tree_size) AS tree_size "
                 "FROM adcp_audit_checkpoints GROUP BY account_id) k ON k.account_id = l.account_id GROUP BY 1",
                 leaf_states, leaf_slots, err);
  adcp_feed_consumer *items = NULL;
  size_t n = 0;
  if (!rc) rc = adcp_feed_consumer_list(&items, &n, c, 0, err);
  if (!rc && n && !(g->consumers = calloc(n, sizeof *g->consumers)))
    rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < n; i++) {
    snprintf(g->consumers[i].name, sizeof g->consumers[i].name, "%s", items[i].name);
    g->consumers[i].changes = items[i].lag_changes, g->consumers[i].seconds = items[i].lag_seconds;
  }
  if (!rc) g->n_consumers = n;
  adcp_feed_consumers_free(items, n);
  return rc;
}

int adcp_worker__gauges_collect(adcp_worker *w, adcp_error *err) {
  worker_gauges g;
  memset(&g, 0, sizeof g);
  int rc = read_all(&g, w->gauge_conn, err);
  if (rc) {
    adcp_worker__gauges_free(&g);
    return rc;
  }
  g.have = 1;
  pthread_mutex_lock(&w->mu);
  worker_gauges old = w->gauges;
  w->gauges = g;
  pthread_mutex_unlock(&w->mu);
  adcp_worker__gauges_free(&old);
  return 0;
}
