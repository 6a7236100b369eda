/* tests/worker/worker_fixture.h — shared by the worker suites (library and
 * CLI): a filesystem object binding laid out exactly as the CLI configuration
 * {"id":"fs1","provider":"filesystem","location":{"root":"b"},"root_dir":
 * DIR/b,"prefix":"rows"} describes it, and abandoned uploads (commits aborted
 * after their objects were written) whose intents are then expired, so a
 * sweep has real objects to delete. */
#ifndef ADCP_WORKER_FIXTURE_H
#define ADCP_WORKER_FIXTURE_H

#include <dirent.h>
#include <sys/stat.h>

#include "adcp/objects.h"
#include "ledger/ledger_fixture.h"

typedef struct wenv {
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  adcp_object_provider *p;
  char root[700]; /* DIR/b */
} wenv;

void wenv_open(wenv *e, const fixture *f, const char *dir);
void wenv_close(wenv *e);

/* The CLI configuration naming the same binding (plus extra top-level text). */
void wenv_config(char *out, size_t n, const char *dir, const char *extra);
int wenv_abort_after_upload(void *ctx, int step);

/* One abandoned upload through binding fs2 (DIR/c), which e's ledger (and
 * the CLI configuration) does not configure: the sweep must skip it. */
void wenv_abandon_unconfigured(wenv *e, const char *dir);

/* n abandoned uploads on obligations obN (one object each), then every intent
 * and lease expired. */
void wenv_abandon(wenv *e, int first, int n);
int64_t wenv_scalar(adcp_sql_conn *c, const char *sql);

/* Object files (.jsonl, any depth) under dir. */
int wenv_count_files(const char *dir);

#endif
