/* ledger/instant.c — room ledger: instants as the ledger takes them (its
 * public RFC 3339 normalisation and the database clock plus a delay); the
 * parsing and formatting are core's (core/instant.h). May touch: sql (the
 * clock) and core; nothing else of the ledger. */

#include "ledger/internal.h"

int adcp_ledger_normalize_instant(char out[32], const char *t, adcp_error *err) {
  return adcp_core_instant_normalize(out, t, err);
}

/* ---- clock ---------------------------------------------------------------------- */

const char *adcp_ledger__now_sql(const adcp_ledger *l) {
  return l->dialect == ADCP_SQL_POSTGRES ? "clock_timestamp()" : "adcp_now()";
}

int adcp_ledger__now_plus(adcp_ledger *l, char out[32], int64_t ms, adcp_error *err) {
  char now[32];
  int rc = adcp_sql_now(l->conn, now, err);
  if (rc) return rc;
  int64_t us = adcp_core_instant_us(now);
  if (us < 0) return adcp_error_set(err, ADCP_ESTORAGE, "database clock is unreadable");
  adcp_core_instant_format(out, us + ms * 1000);
  return 0;
}
