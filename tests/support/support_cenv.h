/* tests/support/support_cenv.h — room tests/support (the test library): the
 * CLI environment the collector, worker and ledger binding CLI suites share:
 * a scratch folder with its cfg.json, rows.jsonl and bucket paths, an
 * optional migrated database, runs of adcp-ledger capturing stdout and
 * stderr, and the checks those suites make of what a run printed. */
#ifndef ADCP_TEST_SUPPORT_CENV_H
#define ADCP_TEST_SUPPORT_CENV_H

#include "adcp/json.h"
#include "support/support_cli.h"
#include "support/support_db.h"

typedef struct cenv {
  const fixture *f; /* NULL: no database (help and usage runs) */
  char *dir;
  char url[700];                       /* the --db of runs: f's URL ("" without f); a test may point it elsewhere */
  char cfg[700], rows[700], root[700]; /* DIR/cfg.json, DIR/rows.jsonl, DIR/bucket */
  adcp_buf out, err;
} cenv;

/* A fresh scratch folder and empty buffers; f (may be NULL) is migrated. */
void cenv_open(cenv *e, const fixture *f);
void cenv_close(cenv *e);

/* adcp-ledger [--db e->url] [--config CFG] ARGS (with_cfg 0: no --config);
 * stdout into e->out, stderr into e->err. Returns the exit status. */
int cenv_run(cenv *e, int with_cfg, const char *args);

/* Fails the test with both streams unless `args` exits with `code`. */
#define CENV_EXPECT(e, with_cfg, args, code) \
  do { \
    int st_ = cenv_run((e), (with_cfg), (args)); \
    if (st_ != (code)) \
      fail_msg("'%s': exit %d (want %d)\nstdout: %s\nstderr: %s", (args), st_, (code), cenv_out(e), cenv_err(e)); \
  } while (0)

/* e->out / e->err as text ("" before any output). */
const char *cenv_out(const cenv *e);
const char *cenv_err(const cenv *e);

/* Fails the test unless buffer `buf` holds (TU_HAS) or lacks (TU_LACKS) text. */
#define TU_HAS(buf, text) \
  do { \
    if (!(buf).data || !strstr((char *)(buf).data, (text))) \
      fail_msg("output lacks \"%s\": %s", (text), (buf).data ? (char *)(buf).data : ""); \
  } while (0)
#define TU_LACKS(buf, text) \
  do { \
    if ((buf).data && strstr((char *)(buf).data, (text))) \
      fail_msg("output holds \"%s\": %s", (text), (char *)(buf).data); \
  } while (0)

/* Fails the test unless b is exactly one JSON document whose top is an
 * object; parsed into d (the caller frees it), or dropped when d is NULL. */
void tu_one_json(adcp_json_doc *d, const adcp_buf *b);

/* e->rows holds n generated rows (gen, pad 20, salt). */
void cenv_write_rows(cenv *e, uint64_t n, uint64_t salt);

/* The text of a one-column query on e's database ("" when it returns no row). */
void cenv_query_text(const cenv *e, char *out, size_t n, const char *sql);

#endif
