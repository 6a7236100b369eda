/* cli/cmd_audit.c — tamper-evident history commands (docs/trust.md):
 * checkpoint (sign tree heads, store and publish them), audit (every header
 * digest, leaf and checkpoint), prove (an inclusion proof against a signed
 * checkpoint) and verify-proof (offline, no database). The library (src/audit)
 * decides; these parse argv, read the "audit" configuration section and print. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adcp/audit.h"
#include "cli/cli.h"
#include "cli/opt.h"

#define PROOF_MAX (1u << 20) /* a proof or checkpoint file: 1 MiB */

static int fail(const char *cmd, adcp_error *err, adcp_cli_session *x, adcp_cli_audit_config *ac) {
  if (x && x->l) adcp_cli_session_close(x);
  if (ac) adcp_cli_audit_config_free(ac);
  return adcp_cli_fail(cmd, err);
}

/* ---- checkpoint --------------------------------------------------------------------- */

/* --adopt-unlogged --dry-run: what adoption would append, nothing signed. */
static int adopt_dry_run(const adcp_cli_globals *g, const char *account, int json, adcp_cli_audit_config *ac) {
  adcp_error err = {0};
  adcp_cli_session x;
  int rc = adcp_cli_session_open(&x, g, &err);
  if (rc) return fail("checkpoint", &err, NULL, ac);
  char **ids = NULL;
  size_t n = 0;
  if (account) {
    ids = calloc(1, sizeof *ids);
    if (!ids || !(ids[0] = strdup(account))) rc = adcp_error_set(&err, ADCP_ENOMEM, "out of memory");
    else n = 1;
  } else {
    rc = adcp_audit_list_accounts(&ids, &n, adcp_storage_sql(x.s), &err);
  }
  adcp_buf out;
  adcp_buf_init(&out);
  size_t listed = 0;
  for (size_t i = 0; !rc && i < n; i++) {
    char **would = NULL;
    size_t nw = 0;
    if ((rc = adcp_audit_adopt(&would, &nw, adcp_storage_sql(x.s), ids[i], 1, &err))) break;
    for (size_t k = 0; k < nw; k++, listed++) {
      if (json) {
        adcp_buf_append_str(&out, listed ? ",{\"account_id\":" : "{\"account_id\":");
        adcp_cli_json_str(&out, ids[i]);
        adcp_buf_append_str(&out, ",\"revision_id\":");
        adcp_cli_json_str(&out, would[k]);
        adcp_buf_append_byte(&out, '}');
      } else {
        fputs("would adopt ", stdout);
        adcp_cli_fput_text(stdout, ids[i]);
        putchar(' ');
        adcp_cli_fput_text(stdout, would[k]);
        putchar('\n');
      }
    }
    adcp_audit_ids_free(would, nw);
  }
  if (!rc && json) {
    printf("{\"ok\":true,\"dry_run\":true,\"would_adopt\":[%.*s]}\n", (int)out.len, out.data ? (const char *)out.data : "");
    adcp_cli_json_printed();
  } else if (!rc) {
    printf("checkpoint --adopt-unlogged --dry-run: %zu revision%s would be adopted; nothing written or signed\n",
           listed, listed == 1 ? "" : "s");
  }
  adcp_buf_free(&out);
  adcp_audit_ids_free(ids, n);
  if (rc) return fail("checkpoint", &err, &x, ac);
  adcp_cli_session_close(&x);
  adcp_cli_audit_config_free(ac);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

static int cmd_checkpoint(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *binding = adcp_cli_arg_str(a, "--binding");
  int all = adcp_cli_arg_has(a, "--all"), json = a->json, adopt = adcp_cli_arg_has(a, "--adopt-unlogged");
  int dry = adcp_cli_arg_has(a, "--dry-run");
  if (!account && !all) return adcp_cli_usage_error("checkpoint", "needs --account A or --all");
  adcp_error err = {0};
  adcp_cli_audit_config ac;
  int rc = adcp_cli_audit_config_load(&ac, g, &err);
  if (rc) return adcp_cli_fail("checkpoint", &err);
  if (dry) return adopt_dry_run(g, account, json, &ac);
  if (!ac.signing_key_file) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "no audit.signing_key_file in the configuration (docs/trust.md)");
    return fail("checkpoint", &err, NULL, &ac);
  }
  adcp_audit_signer *signer = NULL;
  if ((rc = adcp_config_audit_signer(&signer, ac.cfg, &err))) return fail("checkpoint", &err, NULL, &ac);
  adcp_cli_session x;
  if ((rc = adcp_cli_session_open(&x, g, &err))) {
    adcp_audit_signer_free(signer);
    return fail("checkpoint", &err, NULL, &ac);
  }
  if (!binding) binding = ac.checkpoint_binding;
  adcp_object_provider *prov = NULL;
  if (binding) {
    prov = adcp_config_provider(x.cfg, binding, NULL);
    if (!prov) rc = adcp_error_set(&err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured here", binding);
  }
  char **ids = NULL;
  size_t n = 0;
  if (!rc && all) rc = adcp_audit_list_accounts(&ids, &n, adcp_storage_sql(x.s), &err);
  else if (!rc) {
    ids = calloc(1, sizeof *ids);
    if (!ids || !(ids[0] = strdup(account))) rc = adcp_error_set(&err, ADCP_ENOMEM, "out of memory");
    else n = 1;
  }
  adcp_buf out;
  adcp_buf_init(&out);
  for (size_t i = 0; !rc && i < n; i++) {
    char **adopted = NULL;
    size_t nad = 0;
    if (adopt && (rc = adcp_audit_adopt(&adopted, &nad, adcp_storage_sql(x.s), ids[i], 0, &err))) break;
    for (size_t k = 0; k < nad; k++) {
      fputs("adcp-ledger checkpoint: adopted ", stderr);
      adcp_cli_fput_text(stderr, ids[i]);
      fputc(' ', stderr);
      adcp_cli_fput_text(stderr, adopted[k]);
      fputc('\n', stderr);
    }
    adcp_audit_checkpoint cp;
    if ((rc = adcp_audit_checkpoint_create(&cp, adcp_storage_sql(x.s), ids[i], signer, &err))) break;
    char key[ADCP_OBJECT_KEY_MAX + 1] = "";
    if (prov) rc = adcp_audit_checkpoint_publish(key, prov, &cp, &err);
    if (!rc && json) {
      adcp_buf_printf(&out, "%s{\"document\":%s,\"object_key\":", i ? "," : "", cp.document);
      adcp_cli_json_str(&out, key[0] ? key : NULL);
      adcp_buf_append_str(&out, ",\"adopted\":[");
      for (size_t k = 0; k < nad; k++) {
        if (k) adcp_buf_append_byte(&out, ',');
        adcp_cli_json_str(&out, adopted[k]);
      }
      adcp_buf_append_str(&out, "]}");
    } else if (!rc) {
      printf("%s\n", cp.document);
      if (key[0]) {
        fputs("adcp-ledger checkpoint: published ", stderr);
        adcp_cli_fput_text(stderr, key);
        fputc('\n', stderr);
      }
    }
    adcp_audit_checkpoint_free(&cp);
    adcp_audit_ids_free(adopted, nad);
  }
  if (!rc && json)
    printf("{\"ok\":true,\"checkpoints\":[%.*s]}\n", (int)out.len, out.data ? (const char *)out.data : "");
  if (json && !rc) adcp_cli_json_printed();
  adcp_buf_free(&out);
  adcp_audit_ids_free(ids, n);
  adcp_audit_signer_free(signer);
  if (rc) return fail("checkpoint", &err, &x, &ac);
  adcp_cli_session_close(&x);
  adcp_cli_audit_config_free(&ac);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

/* ---- audit ------------------------------------------------------------------------------ */

typedef struct audit_out {
  int json;
  adcp_buf items;
  size_t n;
} audit_out;

static void on_finding(void *ctx, const adcp_audit_finding *f) {
  audit_out *o = ctx;
  if (o->json) {
    adcp_buf *b = &o->items;
    adcp_buf_printf(b, "%s{\"kind\":\"%s\",\"account_id\":", o->n ? "," : "", f->kind);
    adcp_cli_json_str(b, f->account_id[0] ? f->account_id : NULL);
    if (f->leaf_index >= 0) adcp_buf_printf(b, ",\"leaf_index\":%" PRId64, f->leaf_index);
    else adcp_buf_append_str(b, ",\"leaf_index\":null");
    if (f->leaf_end >= 0) adcp_buf_printf(b, ",\"leaf_end\":%" PRId64, f->leaf_end);
    else adcp_buf_append_str(b, ",\"leaf_end\":null");
    adcp_buf_append_str(b, ",\"entry_id\":");
    adcp_cli_json_str(b, f->entry_id);
    adcp_buf_append_str(b, ",\"detail\":");
    adcp_cli_json_str(b, f->detail);
    adcp_buf_append_byte(b, '}');
  } else {
    printf("FINDING %s ", f->kind);
    adcp_cli_fput_text(stdout, f->account_id[0] ? f->account_id : "-");
    if (f->leaf_index >= 0 && f->leaf_end > f->leaf_index + 1)
      printf(" leaf %" PRId64 "..%" PRId64, f->leaf_index, f->leaf_end - 1);
    else if (f->leaf_index >= 0) printf(" leaf %" PRId64, f->leaf_index);
    else fputs(" -", stdout);
    putchar(' ');
    adcp_cli_fput_text(stdout, f->entry_id[0] ? f->entry_id : "-");
    fputs(": ", stdout);
    adcp_cli_fput_text(stdout, f->detail);
    putchar('\n');
  }
  o->n++;
}

/* One checkpoint document, or several one per line. */
static int read_checkpoints(adcp_audit_checkpoint **out, size_t *n, const char *path, adcp_error *err) {
  adcp_buf b;
  adcp_buf_init(&b);
  int rc = adcp_cli_read_file(&b, path, PROOF_MAX, "checkpoint file", err);
  *out = NULL, *n = 0;
  size_t cap = 0, pos = 0;
  const char *s = b.data ? (const char *)b.data : "";
  while (!rc && pos < b.len) {
    const char *nl = memchr(s + pos, '\n', b.len - pos);
    size_t end = nl ? (size_t)(nl - s) : b.len;
    size_t l = end - pos;
    while (l && (s[pos + l - 1] == '\r' || s[pos + l - 1] == ' ')) l--;
    if (l) {
      if (*n == cap) {
        cap = cap ? cap * 2 : 4;
        adcp_audit_checkpoint *g2 = realloc(*out, cap * sizeof *g2);
        if (!g2) {
          rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory");
          break;
        }
        *out = g2;
      }
      if ((rc = adcp_audit_checkpoint_parse(&(*out)[*n], s + pos, l, err))) break;
      (*n)++;
    }
    pos = end + 1;
  }
  adcp_buf_free(&b);
  if (!rc && !*n) rc = adcp_error_set(err, ADCP_EINVALID_INPUT, "checkpoint file holds no checkpoint");
  if (rc) {
    adcp_audit_checkpoints_free(*out, *n);
    *out = NULL, *n = 0;
  }
  return rc;
}

/* The retention window W this host applies (its "retention" section), so a
 * retirement is judged by this host's policy, never the database's. */
static int64_t window_days(const adcp_config *cfg) {
  const adcp_config_retention *rc = adcp_config_retention_section(cfg);
  return rc->present ? adcp_retention_window_days(&rc->policy) : 0;
}

static int cmd_audit(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *cpfile = adcp_cli_arg_str(a, "--checkpoint");
  const char *binding = adcp_cli_arg_str(a, "--from-binding");
  int json = a->json, require_outside = adcp_cli_arg_has(a, "--require-outside");
  adcp_error err = {0};
  adcp_cli_audit_config ac;
  int rc = adcp_cli_audit_config_load(&ac, g, &err);
  if (rc) return adcp_cli_fail("audit", &err);
  if ((cpfile || binding) && !ac.keys.count) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT,
                   "no audit.public_keys pinned in the configuration: a checkpoint cannot be checked");
    return fail("audit", &err, NULL, &ac);
  }
  adcp_audit_checkpoint *extra = NULL;
  size_t nextra = 0;
  if (cpfile && (rc = read_checkpoints(&extra, &nextra, cpfile, &err))) return fail("audit", &err, NULL, &ac);
  adcp_cli_session x;
  if ((rc = adcp_cli_session_open(&x, g, &err))) {
    adcp_audit_checkpoints_free(extra, nextra);
    return fail("audit", &err, NULL, &ac);
  }
  adcp_audit_fetch_problem *problems = NULL;
  size_t nproblems = 0;
  if (binding) {
    adcp_object_provider *p = adcp_config_provider(x.cfg, binding, NULL);
    if (!p) rc = adcp_error_set(&err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured here", binding);
    else rc = adcp_audit_checkpoints_fetch(&extra, &nextra, &problems, &nproblems, p, &err);
  }
  if (!ac.keys.count && !json)
    fputs(
        "adcp-ledger audit: no public key pinned (audit.public_keys): checkpoints are not checked; only header "
        "digests and the log itself are (docs/trust.md)\n",
        stderr);
  audit_out o = {json, {0}, 0};
  adcp_buf_init(&o.items);
  adcp_audit_report rep;
  adcp_audit_options opts = {.version = ADCP_AUDIT_OPTIONS_VERSION,
                             .account_id = account,
                             .keys = &ac.keys,
                             .extra = extra,
                             .n_extra = nextra,
                             .skip_stored_checkpoints = ac.keys.count == 0,
                             .on_finding = on_finding,
                             .ctx = &o,
                             .retention_days = window_days(x.cfg),
                             .problems = problems,
                             .n_problems = nproblems};
  if (!rc) rc = adcp_audit_run(&rep, adcp_storage_sql(x.s), &opts, &err);
  adcp_audit_checkpoints_free(extra, nextra);
  free(problems);
  if (rc) {
    adcp_buf_free(&o.items);
    return fail("audit", &err, &x, &ac);
  }
  int outside_missing = require_outside && rep.outside_verified == 0;
  static const char *const mode_names[] = {"no_key", "pinned", "outside"};
  if (json) {
    printf("{\"ok\":%s,\"accounts\":%" PRIu64 ",\"leaves\":%" PRIu64 ",\"headers\":%" PRIu64 ",\"retired\":%" PRIu64
           ",\"checkpoints\":%" PRIu64 ",\"consistency_proofs\":%" PRIu64
           ",\"mode\":\"%s\",\"outside_checkpoints\":%" PRIu64 ",\"outside_newest_tree_size\":",
           rep.findings || outside_missing ? "false" : "true", rep.accounts, rep.leaves, rep.headers, rep.retired,
           rep.checkpoints, rep.consistency_proofs, mode_names[rep.mode], rep.outside_verified);
    if (rep.outside_verified)
      printf("%" PRIu64 ",\"outside_newest_at\":\"%s\"", rep.outside_newest_size, rep.outside_newest_at);
    else fputs("null,\"outside_newest_at\":null", stdout);
    printf(",\"require_outside\":%s,\"findings\":[%.*s]}\n",
           !require_outside  ? "null"
           : outside_missing ? "\"failed\""
                             : "\"met\"",
           (int)o.items.len, o.items.data ? (const char *)o.items.data : "");
    adcp_cli_json_printed();
  } else {
    if (rep.mode == ADCP_AUDIT_MODE_NO_KEY) puts("mode: no pinned key: the log is checked against itself only");
    else if (rep.mode == ADCP_AUDIT_MODE_PINNED)
      puts("mode: pinned keys, no checkpoint from outside the database: stored checkpoints only");
    else
      printf("mode: %" PRIu64 " outside checkpoint%s verified, newest at tree size %" PRIu64 " (%s)\n",
             rep.outside_verified, rep.outside_verified == 1 ? "" : "s", rep.outside_newest_size, rep.outside_newest_at);
    printf("audit: %" PRIu64 " accounts, %" PRIu64 " leaves, %" PRIu64 " headers, %" PRIu64 " retired, %" PRIu64
           " checkpoints, %" PRIu64 " consistency proofs, %" PRIu64 " findings\n",
           rep.accounts, rep.leaves, rep.headers, rep.retired, rep.checkpoints, rep.consistency_proofs, rep.findings);
  }
  adcp_buf_free(&o.items);
  adcp_cli_session_close(&x);
  adcp_cli_audit_config_free(&ac);
  fflush(stdout);
  if (rep.findings) {
    if (!json)
      fprintf(stderr, "adcp-ledger audit: INTEGRITY_FAILED: %" PRIu64 " findings (listed on stdout)\n", rep.findings);
    return ADCP_CLI_EXIT_INTEGRITY;
  }
  if (outside_missing) {
    if (!json)
      fputs(
          "adcp-ledger audit: INTEGRITY_FAILED: --require-outside: no checkpoint from outside the database was "
          "verified with a pinned key (give --checkpoint FILE or --from-binding ID, and pin audit.public_keys)\n",
          stderr);
    return ADCP_CLI_EXIT_INTEGRITY;
  }
  return 0;
}

/* ---- prove ------------------------------------------------------------------------------- */

static int cmd_prove(const adcp_cli_globals *g, const adcp_cli_args *a) {
  const char *account = adcp_cli_arg_str(a, "--account"), *rev = adcp_cli_arg_str(a, "--revision");
  const char *cpfile = adcp_cli_arg_str(a, "--checkpoint");
  adcp_error err = {0};
  adcp_audit_checkpoint *cps = NULL;
  size_t ncp = 0;
  int rc = 0;
  if (cpfile && (rc = read_checkpoints(&cps, &ncp, cpfile, &err))) return adcp_cli_fail("prove", &err);
  adcp_cli_session x;
  if ((rc = adcp_cli_session_open(&x, g, &err))) {
    adcp_audit_checkpoints_free(cps, ncp);
    return adcp_cli_fail("prove", &err);
  }
  adcp_buf out;
  adcp_buf_init(&out);
  rc = adcp_audit_prove(&out, adcp_storage_sql(x.s), account, rev, cps ? &cps[ncp - 1] : NULL, &err);
  adcp_audit_checkpoints_free(cps, ncp);
  if (!rc) {
    printf("%.*s\n", (int)out.len, (const char *)out.data);
    adcp_cli_json_printed();
  }
  adcp_buf_free(&out);
  adcp_cli_session_close(&x);
  if (rc) return adcp_cli_fail("prove", &err);
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

/* ---- verify-proof -------------------------------------------------------------------------- */

static int rows_next(void *r, const char **line, size_t *len, adcp_error *err) {
  return adcp_cli_lines_next(r, line, len, err);
}

static int cmd_verify_proof(const adcp_cli_globals *g, const adcp_cli_args *a) {
  (void)g;
  const char *proof = a->pos[0], *keyfile = adcp_cli_arg_str(a, "--public-key"), *rows = adcp_cli_arg_str(a, "--rows");
  int json = a->json;
  adcp_error err = {0};
  adcp_buf pb, kb;
  adcp_buf_init(&pb), adcp_buf_init(&kb);
  adcp_audit_keyring keys = {0};
  int rc = adcp_cli_read_file(&pb, proof, PROOF_MAX, "proof", &err);
  if (!rc) rc = adcp_cli_read_file(&kb, keyfile, 65536, "public key", &err);
  if (!rc) rc = adcp_audit_keyring_add(&keys, kb.data ? (const char *)kb.data : "", kb.len, &err);
  adcp_cli_lines rl = {0}; /* rows stream line by line (16 MiB a line), never read whole */
  if (!rc && rows) rc = adcp_cli_lines_open(&rl, rows, &err);
  adcp_audit_proof_info info;
  if (!rc)
    rc = adcp_audit_verify_proof_rows(&info, pb.data ? (const char *)pb.data : "", pb.len, &keys,
                                      rows ? rows_next : NULL, &rl, &err);
  if (rows) adcp_cli_lines_close(&rl);
  adcp_buf_free(&pb), adcp_buf_free(&kb);
  if (rc) return adcp_cli_fail("verify-proof", &err);
  if (json) {
    adcp_buf b;
    adcp_buf_init(&b);
    adcp_buf_append_str(&b, "{\"ok\":true,\"account_id\":");
    adcp_cli_json_str(&b, info.account_id);
    adcp_buf_append_str(&b, ",\"revision_id\":");
    adcp_cli_json_str(&b, info.revision_id);
    adcp_buf_printf(&b,
                    ",\"leaf_index\":%" PRIu64 ",\"tree_size\":%" PRIu64
                    ",\"root_hash\":\"%s\",\"key_id\":\"%s\",\"timestamp\":\"%s\",\"rows_checked\":%s}",
                    info.leaf_index, info.tree_size, info.root_hash, info.key_id, info.timestamp, rows ? "true" : "false");
    printf("%.*s\n", (int)b.len, (const char *)b.data);
    adcp_buf_free(&b);
    adcp_cli_json_printed();
  } else {
    fputs("proof ok: revision ", stdout);
    adcp_cli_fput_text(stdout, info.revision_id);
    fputs(" of account ", stdout);
    adcp_cli_fput_text(stdout, info.account_id);
    printf(" is leaf %" PRIu64 " of %" PRIu64 ", root %s, checkpoint by key %s at %s%s\n", info.leaf_index,
           info.tree_size, info.root_hash, info.key_id, info.timestamp, rows ? "; rows match the header" : "");
  }
  return fflush(stdout) ? ADCP_CLI_EXIT_USAGE : 0;
}

/* ---- the option tables (cli/opt.h) ---- */

static const adcp_cli_optdef checkpoint_opts[] = {
    ADCP_OPT_STR("--account", "A", "this account's tree head"),
    ADCP_OPT_FLAG("--all", "every account's"),
    ADCP_OPT_BINDING("--binding", 0, "publish to this binding (default audit.checkpoint_binding)"),
    ADCP_OPT_FLAG("--adopt-unlogged", "append leaves for unlogged revisions first"),
    ADCP_OPT_FLAG("--dry-run", "with --adopt-unlogged: list what would be adopted, sign nothing"),
    ADCP_OPT_END};
static const char *const checkpoint_excl[] = {"--account", "--all", NULL};
const adcp_cli_spec adcp_cli_checkpoint_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "checkpoint",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "Signs the current tree head {account_key, tree_size, root_hash, timestamp} of\n"
        "an account's audit log (or of every account's) with the Ed25519 key named by\n"
        "audit.signing_key_file in the configuration, stores the document in the\n"
        "database (insert-only) and writes it create-only to the object binding\n"
        "--binding (default audit.checkpoint_binding) under _checkpoints/. Prints one\n"
        "checkpoint document per line; keep them outside the database and hand them to\n"
        "buyers (docs/trust.md). --json prints {\"ok\":true,\"checkpoints\":[{\"document\",\n"
        "\"object_key\",\"adopted\":[IDs]}]}. --adopt-unlogged first appends a leaf for every\n"
        "revision without one (revisions committed before migration 0009; once, after\n"
        "upgrading, after reviewing audit's revision_unlogged list) and lists each one it\n"
        "adopted on stderr ('adopted ACCOUNT REVISION'); it refuses, adopting nothing, a\n"
        "revision in an impossible order (recorded before 0009 but superseding one logged\n"
        "or recorded after it). --dry-run (with --adopt-unlogged) lists what would be\n"
        "adopted on stdout ('would adopt ACCOUNT REVISION') and changes and signs nothing;\n"
        "--json then prints {\"ok\":true,\"dry_run\":true,\"would_adopt\":[{\"account_id\",\n"
        "\"revision_id\"}]}.",
    .opts = checkpoint_opts,
    .excl = checkpoint_excl,
    .text =
        "exit status: 0 ok; 1 usage or an unreadable key file; 2 no signing key configured;\n"
        "3 an impossible adoption order; 4 storage or binding.\n",
    .run = cmd_checkpoint,
    .requires = (const char *const[]){"--dry-run", "--adopt-unlogged", NULL},
};
static const adcp_cli_optdef audit_opts[] = {
    ADCP_OPT_STR("--account", "A", "only this account"),
    ADCP_OPT_FILE("--checkpoint", "FILE", "checkpoint documents (one per line) from outside the database"),
    ADCP_OPT_BINDING("--from-binding", 0, "every checkpoint published under the binding's _checkpoints/"),
    ADCP_OPT_FLAG("--require-outside", "exit 3 unless an outside checkpoint verified"), ADCP_OPT_END};
static const char *const audit_excl[] = {"--checkpoint", "--from-binding", NULL};
const adcp_cli_spec adcp_cli_audit_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "audit",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "Recomputes every header digest from the stored header, checks every leaf of\n"
        "each account's audit log (order, leaf hash, the stored subtree hashes), compares\n"
        "the stored revisions and the revision leaves as sets (one leaf per revision, in\n"
        "its own account, no duplicate, in numbering order), and checks the log against\n"
        "every checkpoint signed by a key pinned in audit.public_keys: those stored in the\n"
        "database, the one in FILE (a checkpoint document, or one per line), or every one\n"
        "under the binding's _checkpoints/ (an unreadable object there is a\n"
        "checkpoint_unreadable finding), with a consistency proof between consecutive\n"
        "checkpoints. Reports each edited header, missing, replaced, duplicated or\n"
        "unlogged revision and rewritten log with its leaf position: 'FINDING KIND ACCOUNT\n"
        "leaf N[..M] ENTRY: detail'. A revision is retired, not missing, only when a\n"
        "retirement leaf (adcp-retirement-v1) lists it and was due by the logged headers\n"
        "under this host's retention window (retention.status_retention_days and\n"
        "ledger_record_retention_days; without a retention section no retirement can be\n"
        "shown due). Prints the mode it ran in ('mode: no pinned key', 'mode: pinned keys,\n"
        "no checkpoint from outside the database', 'mode: N outside checkpoints verified,\n"
        "newest at tree size T'), then a summary line. --require-outside: exit 3 unless at\n"
        "least one checkpoint from FILE or the binding was verified with a pinned key.\n"
        "--json prints {\"ok\",\"accounts\",\"leaves\",\"headers\",\"retired\",\"checkpoints\",\n"
        "\"consistency_proofs\",\"mode\",\"outside_checkpoints\",\"outside_newest_tree_size\",\n"
        "\"outside_newest_at\",\"require_outside\",\"findings\":[{\"kind\",\"account_id\",\"leaf_index\",\n"
        "\"leaf_end\",\"entry_id\",\"detail\"}]} (mode: \"no_key\", \"pinned\" or \"outside\";\n"
        "require_outside: null, \"met\" or \"failed\").\n"
        "Opens the database read-only.",
    .opts = audit_opts,
    .excl = audit_excl,
    .text =
        "exit status: 0 nothing found; 1 usage or an unreadable file; 3 a finding, or\n"
        "--require-outside without a verified outside checkpoint; 4 storage or binding.\n",
    .run = cmd_audit,
};
static const adcp_cli_optdef prove_opts[] = {
    ADCP_OPT_STR_REQ("--account", "A", "account"), ADCP_OPT_STR_REQ("--revision", "R", "revision"),
    ADCP_OPT_FILE("--checkpoint", "FILE", "prove against this checkpoint (default: the newest stored one)"), ADCP_OPT_END};
const adcp_cli_spec adcp_cli_prove_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "prove",
    .globals = "[--db URL] [--config FILE]",
    .summary =
        "Prints an inclusion proof (profile adcp-inclusion-proof-v1): the revision's\n"
        "header object, its header_sha256, its leaf index in the account's audit log,\n"
        "the RFC 9162 audit path and the signed checkpoint it leads to (FILE, or the\n"
        "newest stored checkpoint that covers the leaf). The proof is checked against\n"
        "the checkpoint's root before it is printed; a third party checks it with\n"
        "verify-proof, without any database. The output is one JSON document (also\n"
        "with --json). Opens the database read-only.",
    .opts = prove_opts,
    .text =
        "exit status: 0 ok; 1 usage; 2 the checkpoint is another account's or too old;\n"
        "3 the log does not lead to the checkpoint; 4 storage; 5 no such revision in the\n"
        "log, or no checkpoint covers it yet.\n",
    .run = cmd_prove,
};
static const adcp_cli_optdef verify_proof_opts[] = {
    {"--public-key", ADCP_CLI_OPT_FILE, ADCP_CLI_OPT_REQUIRED, "FILE", 0, 0, NULL, "the pinned Ed25519 public key"},
    ADCP_OPT_FILE("--rows", "FILE", "the revision's rows (JSONL)"),
    ADCP_OPT_END};
const adcp_cli_spec adcp_cli_verify_proof_spec = {
    .version = ADCP_CLI_SPEC_VERSION,
    .name = "verify-proof",
    .summary =
        "Verifies an inclusion proof (from prove) offline, without any database: the\n"
        "header object hashes to header_sha256, the audit path leads from its leaf to\n"
        "the checkpoint's root, and the checkpoint is signed by the Ed25519 public key\n"
        "in FILE (PEM, or base64 of the raw key). With --rows (JSONL), the rows must\n"
        "encode to exactly the content digest, row manifest digest and counts the\n"
        "header commits to. PROOF may be - for stdin. --json prints {\"ok\":true,\n"
        "\"account_id\",\"revision_id\",\"leaf_index\",\"tree_size\",\"root_hash\",\"key_id\",\n"
        "\"timestamp\",\"rows_checked\"}.",
    .opts = verify_proof_opts,
    .min_pos = 1,
    .max_pos = 1,
    .pos_usage = "PROOF",
    .text =
        "exit status: 0 the proof holds; 1 usage or an unreadable file; 2 not a proof\n"
        "document or a bad key; 3 the proof (or the rows) refused.\n",
    .run = cmd_verify_proof,
};
