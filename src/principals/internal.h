/* principals/internal.h — what the files of the principals room share: the
 * two store handles, the per-dialect SQL fragments for instants, identifier
 * and JSON checks, and the keyset cursor codec. Not installed. */
#ifndef ADCP_PRINCIPALS_INTERNAL_H
#define ADCP_PRINCIPALS_INTERNAL_H

#include "adcp/json.h"
#include "adcp/principals.h"

struct adcp_principal_store {
  adcp_sql_conn *c;
  int pg;
  adcp_json_doc scratch; /* reused by the canonicalizer */
  adcp_buf canon;
};

struct adcp_subscription_store {
  adcp_sql_conn *c;
  int pg;
  adcp_json_doc scratch;
  adcp_buf canon;
};

/* An instant column as the ledger renders it: UTC, microseconds, "Z". */
#define PR_TS(col) ADCP_SQL_PG_INSTANT(col)
/* The database clock in that form. */
#define PR_NOW_PG "clock_timestamp()"
#define PR_NOW_SQLITE "(strftime('%Y-%m-%dT%H:%M:%f', 'now') || '000Z')"

/* adcp_ledger_check_identifier naming field. */
int adcp_principals__check_id(const char *value, const char *field, adcp_error *err);
/* Canonicalizes text (a JSON object, at most max canonical bytes) into out. */
int adcp_principals__canon_object(adcp_buf *out, adcp_json_doc *scratch, const char *text, size_t max,
                                  const char *field, adcp_error *err);
/* Copies s into dst (size n); s longer than n - 1 is truncated (never happens
 * for rows the CHECKs admitted). */
void adcp_principals__copy(char *dst, size_t n, const char *s);
/* Owned copy ("" for NULL); NULL on allocation failure. */
char *adcp_principals__dup(const char *s);
/* Cursor "<tag>1.<hex of the last key>" and its decoding (out size >= 256). */
int adcp_principals__cursor_encode(char **out, char tag, const char *key);
int adcp_principals__cursor_decode(char out[ADCP_PRINCIPAL_ID_MAX], char tag, const char *cursor, adcp_error *err);
/* 0 = default 100; 1..ADCP_PRINCIPAL_LIST_MAX; else INVALID_INPUT. */
int adcp_principals__limit(size_t *out, size_t limit, adcp_error *err);
/* REFERENCE_NOT_FOUND, the same words from every call. */
int adcp_principals__no_principal(adcp_error *err);
/* *found = 1 when the principal exists. */
int adcp_principals__principal_exists(int *found, adcp_sql_conn *c, const char *principal_id, adcp_error *err);

#endif
