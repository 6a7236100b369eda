/* tests/audit/audit_env.h — room tests/audit: the audit test environment of
 * test_audit.c and test_audit_forgery.c (audit_env.c, linked into both
 * executables only). */
#ifndef ADCP_TEST_AUDIT_ENV_H
#define ADCP_TEST_AUDIT_ENV_H

#include "adcp/audit.h"
#include "ledger/ledger_fixture.h"

typedef struct found {
  char kind[32];
  int64_t leaf, end;
  char entry[256];
} found;

typedef struct findings {
  found items[64];
  size_t n;
} findings;

/* An adcp_audit_options finding callback collecting into the findings ctx (at most 64). */
void collect(void *ctx, const adcp_audit_finding *f);

/* 1 when fs holds a finding of kind at leaf (-2: at any leaf). */
int has(const findings *fs, const char *kind, int64_t leaf);

/* Prints every finding (for a failing test's log). */
void dump(const findings *fs);

typedef struct env {
  fixture *f;
  adcp_storage *s;
  adcp_sql_conn *c;
  adcp_ledger *l;
  char *dir;
  adcp_audit_signer *signer, *attacker;
  adcp_audit_keyring keys;     /* pinned: the seller's key only */
  adcp_audit_checkpoint buyer; /* a checkpoint the buyer kept outside the database */
} env;

/* Commits acct/obligation/rev with rows generated from salt (observed_at may be NULL). */
void commit_one(adcp_ledger *l, const char *obligation, const char *rev, uint64_t rows, uint64_t salt,
                const char *observed);

/* r1..r4 on ob (leaves 0..3), q1 on ob2 (leaf 4), then a checkpoint the buyer keeps. */
void env_open(env *e, void **state);
void env_close(env *e);

/* The editor: full write access, triggers and foreign keys out of the way. */
void tamper(env *e, const char *sql);

#define WINDOW_DAYS 30 /* the retention window the auditing host applies */

/* Runs the audit with keys (NULL: none pinned) and, when with_buyer, the buyer's checkpoint. */
adcp_audit_report audit(env *e, findings *fs, const adcp_audit_keyring *keys, int with_buyer);

/* Deletes and recomputes every stored subtree hash of an account's log from
 * its leaves, as a careful editor would after changing leaves. */
void rebuild_nodes(env *e, const char *account);

/* Appends a leaf of the editor's making (entry digest, leaf hash and nodes
 * all consistent), with SQL: the log is then internally consistent. */
void forge_leaf(env *e, const char *account, const char *kind, const char *id, const char *obligation,
                const char *profile, const char *entry_hex, const char *doc);

/* The digest and leaf hash a forger writes for rev's current header. */
void forged_leaf(env *e, const char *rev, char d[65], char lhx[65]);

#endif
