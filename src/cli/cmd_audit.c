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

#define PROOF_MAX (1u << 20)      /* a proof or checkpoint file: 1 MiB */
#define ROWS_MAX (256u << 20)     /* verify-proof --rows: 256 MiB */

static int fail(const char *cmd, adcp_error *err, adcp_cli_session *x, adcp_cli_audit_config *ac) {
  if (x && x->l) adcp_cli_session_close(x);
  if (ac) adcp_cli_audit_config_free(ac);
  return adcp_cli_fail(cmd, err);
}

/* ---- checkpoint --------------------------------------------------------------------- */

static const char checkpoint_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] checkpoint (--account A | --all) [--binding ID]\n"
    "                   [--adopt-unlogged] [--json]\n\n"
    "Signs the current tree head {account_key, tree_size, root_hash, timestamp} of\n"
    "an account's audit log (or of every account's) with the Ed25519 key named by\n"
    "audit.signing_key_file in the configuration, stores the document in the\n"
    "database (insert-only) and writes it create-only to the object binding\n"
    "--binding (default audit.checkpoint_binding) under _checkpoints/. Prints one\n"
    "checkpoint document per line; keep them outside the database and hand them to\n"
    "buyers (docs/trust.md). --json prints {\"ok\":true,\"checkpoints\":[{\"document\",\n"
    "\"object_key\"}]}. --adopt-unlogged first appends a leaf for every revision\n"
    "without one (revisions committed before migration 0009; once, after upgrading,\n"
    "after reviewing audit's revision_unlogged list) and says how many on stderr.\n\n"
    "exit status: 0 ok; 1 usage or an unreadable key file; 2 no signing key configured;\n"
    "4 storage or binding.\n";

int adcp_cli_checkpoint(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *binding = NULL;
  int all = 0, json = 0, adopt = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(checkpoint_help, stdout), 0;
    if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--adopt-unlogged")) adopt = 1;
    else if (!strcmp(a, "--all")) all = 1;
    else if (!strcmp(a, "--account") && i + 1 < argc) account = argv[++i];
    else if (!strcmp(a, "--binding") && i + 1 < argc) binding = argv[++i];
    else return adcp_cli_usage_error("checkpoint", "unknown option or missing value: '%s'", a);
  }
  if (!!account == all) return adcp_cli_usage_error("checkpoint", "give --account A or --all");
  adcp_error err = {0};
  adcp_cli_audit_config ac;
  int rc = adcp_cli_audit_config_load(&ac, g, &err);
  if (rc) return adcp_cli_fail("checkpoint", &err);
  if (!ac.signing_key_file) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "no audit.signing_key_file in the configuration (docs/trust.md)");
    return fail("checkpoint", &err, NULL, &ac);
  }
  adcp_audit_signer *signer = NULL;
  if ((rc = adcp_audit_signer_load(&signer, ac.signing_key_file, &err))) return fail("checkpoint", &err, NULL, &ac);
  adcp_cli_session x;
  if ((rc = adcp_cli_session_open(&x, g, &err))) {
    adcp_audit_signer_free(signer);
    return fail("checkpoint", &err, NULL, &ac);
  }
  if (!binding) binding = ac.checkpoint_binding;
  adcp_object_provider *prov = NULL;
  if (binding) {
    prov = adcp_cli_config_provider(x.cfg, binding, NULL);
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
    uint64_t adopted = 0;
    if (adopt && (rc = adcp_audit_adopt_unlogged(&adopted, adcp_storage_sql(x.s), ids[i], &err))) break;
    if (adopted) {
      fprintf(stderr, "adcp-ledger checkpoint: adopted %" PRIu64 " unlogged revision%s of account ", adopted,
              adopted == 1 ? "" : "s");
      adcp_cli_fput_text(stderr, ids[i]);
      fputc('\n', stderr);
    }
    adcp_audit_checkpoint cp;
    if ((rc = adcp_audit_checkpoint_create(&cp, adcp_storage_sql(x.s), ids[i], signer, &err))) break;
    char key[ADCP_OBJECT_KEY_MAX + 1] = "";
    if (prov) rc = adcp_audit_checkpoint_publish(key, prov, &cp, &err);
    if (!rc && json) {
      adcp_buf_printf(&out, "%s{\"document\":%s,\"object_key\":", i ? "," : "", cp.document);
      adcp_cli_json_str(&out, key[0] ? key : NULL);
      adcp_buf_append_byte(&out, '}');
    } else if (!rc) {
      printf("%s\n", cp.document);
      if (key[0]) {
        fputs("adcp-ledger checkpoint: published ", stderr);
        adcp_cli_fput_text(stderr, key);
        fputc('\n', stderr);
      }
    }
    adcp_audit_checkpoint_free(&cp);
  }
  if (!rc && json) printf("{\"ok\":true,\"checkpoints\":[%.*s]}\n", (int)out.len, out.data ? (const char *)out.data : "");
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

static const char audit_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] audit [--account A] [--checkpoint FILE | --from-binding ID]\n"
    "                   [--json]\n\n"
    "Recomputes every header digest from the stored header, checks every leaf of\n"
    "each account's audit log (order, leaf hash, the stored subtree hashes), and\n"
    "checks the log against every checkpoint signed by a key pinned in\n"
    "audit.public_keys: those stored in the database, the one in FILE (a checkpoint\n"
    "document, or one per line), or every one under the binding's _checkpoints/,\n"
    "with a consistency proof between consecutive checkpoints. Reports each edited\n"
    "header, missing, replaced or unlogged revision and rewritten log with its leaf\n"
    "position: 'FINDING KIND ACCOUNT leaf N[..M] ENTRY: detail'. Revisions whose\n"
    "period was retired count as retired, not missing. Without a pinned key the\n"
    "checkpoints are not checked (said on stderr). Ends with a summary line.\n"
    "--json prints {\"ok\",\"accounts\",\"leaves\",\"headers\",\"retired\",\"checkpoints\",\n"
    "\"consistency_proofs\",\"findings\":[{\"kind\",\"account_id\",\"leaf_index\",\"leaf_end\",\n"
    "\"entry_id\",\"detail\"}]}. Opens the database read-only.\n\n"
    "exit status: 0 nothing found; 1 usage or an unreadable file; 3 a finding;\n"
    "4 storage or binding.\n";

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
    adcp_cli_json_str(b, f->account_id);
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
    adcp_cli_fput_text(stdout, f->account_id);
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

int adcp_cli_audit(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *cpfile = NULL, *binding = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(audit_help, stdout), 0;
    if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--account") && i + 1 < argc) account = argv[++i];
    else if (!strcmp(a, "--checkpoint") && i + 1 < argc) cpfile = argv[++i];
    else if (!strcmp(a, "--from-binding") && i + 1 < argc) binding = argv[++i];
    else return adcp_cli_usage_error("audit", "unknown option or missing value: '%s'", a);
  }
  if (cpfile && binding) return adcp_cli_usage_error("audit", "give --checkpoint or --from-binding, not both");
  adcp_error err = {0};
  adcp_cli_audit_config ac;
  int rc = adcp_cli_audit_config_load(&ac, g, &err);
  if (rc) return adcp_cli_fail("audit", &err);
  if ((cpfile || binding) && !ac.keys.count) {
    adcp_error_set(&err, ADCP_EINVALID_INPUT, "no audit.public_keys pinned in the configuration: a checkpoint cannot be checked");
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
  if (binding) {
    adcp_object_provider *p = adcp_cli_config_provider(x.cfg, binding, NULL);
    if (!p) rc = adcp_error_set(&err, ADCP_ESTATE_UNAVAILABLE, "binding %s is not configured here", binding);
    else rc = adcp_audit_checkpoints_fetch(&extra, &nextra, p, &err);
  }
  if (!ac.keys.count && !json)
    fputs("adcp-ledger audit: no public key pinned (audit.public_keys): checkpoints are not checked; only header "
          "digests and the log itself are (docs/trust.md)\n",
          stderr);
  audit_out o = {json, {0}, 0};
  adcp_buf_init(&o.items);
  adcp_audit_report rep;
  adcp_audit_options opts = {1, account, &ac.keys, extra, nextra, ac.keys.count == 0, on_finding, &o};
  if (!rc) rc = adcp_audit_run(&rep, adcp_storage_sql(x.s), &opts, &err);
  adcp_audit_checkpoints_free(extra, nextra);
  if (rc) {
    adcp_buf_free(&o.items);
    return fail("audit", &err, &x, &ac);
  }
  if (json) {
    printf("{\"ok\":%s,\"accounts\":%" PRIu64 ",\"leaves\":%" PRIu64 ",\"headers\":%" PRIu64 ",\"retired\":%" PRIu64
           ",\"checkpoints\":%" PRIu64 ",\"consistency_proofs\":%" PRIu64 ",\"findings\":[%.*s]}\n",
           rep.findings ? "false" : "true", rep.accounts, rep.leaves, rep.headers, rep.retired, rep.checkpoints,
           rep.consistency_proofs, (int)o.items.len, o.items.data ? (const char *)o.items.data : "");
    adcp_cli_json_printed();
  } else {
    printf("audit: %" PRIu64 " accounts, %" PRIu64 " leaves, %" PRIu64 " headers, %" PRIu64 " retired, %" PRIu64
           " checkpoints, %" PRIu64 " consistency proofs, %" PRIu64 " findings\n",
           rep.accounts, rep.leaves, rep.headers, rep.retired, rep.checkpoints, rep.consistency_proofs, rep.findings);
  }
  adcp_buf_free(&o.items);
  adcp_cli_session_close(&x);
  adcp_cli_audit_config_free(&ac);
  fflush(stdout);
  if (rep.findings) {
    if (!json) fprintf(stderr, "adcp-ledger audit: INTEGRITY_FAILED: %" PRIu64 " findings (listed on stdout)\n", rep.findings);
    return ADCP_CLI_EXIT_INTEGRITY;
  }
  return 0;
}

/* ---- prove ------------------------------------------------------------------------------- */

static const char prove_help[] =
    "usage: adcp-ledger [--db URL] [--config FILE] prove --account A --revision R [--checkpoint FILE] [--json]\n\n"
    "Prints an inclusion proof (profile adcp-inclusion-proof-v1): the revision's\n"
    "header object, its header_sha256, its leaf index in the account's audit log,\n"
    "the RFC 9162 audit path and the signed checkpoint it leads to (FILE, or the\n"
    "newest stored checkpoint that covers the leaf). The proof is checked against\n"
    "the checkpoint's root before it is printed; a third party checks it with\n"
    "verify-proof, without any database. The output is one JSON document (also\n"
    "with --json). Opens the database read-only.\n\n"
    "exit status: 0 ok; 1 usage; 2 the checkpoint is another account's or too old;\n"
    "3 the log does not lead to the checkpoint; 4 storage; 5 no such revision in the\n"
    "log, or no checkpoint covers it yet.\n";

int adcp_cli_prove(const adcp_cli_globals *g, int argc, char **argv) {
  const char *account = NULL, *rev = NULL, *cpfile = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(prove_help, stdout), 0;
    if (!strcmp(a, "--json")) continue;
    else if (!strcmp(a, "--account") && i + 1 < argc) account = argv[++i];
    else if (!strcmp(a, "--revision") && i + 1 < argc) rev = argv[++i];
    else if (!strcmp(a, "--checkpoint") && i + 1 < argc) cpfile = argv[++i];
    else return adcp_cli_usage_error("prove", "unknown option or missing value: '%s'", a);
  }
  if (!account || !rev) return adcp_cli_usage_error("prove", "give --account A and --revision R");
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

static const char verify_proof_help[] =
    "usage: adcp-ledger verify-proof PROOF --public-key FILE [--rows FILE] [--json]\n\n"
    "Verifies an inclusion proof (from prove) offline, without any database: the\n"
    "header object hashes to header_sha256, the audit path leads from its leaf to\n"
    "the checkpoint's root, and the checkpoint is signed by the Ed25519 public key\n"
    "in FILE (PEM, or base64 of the raw key). With --rows (JSONL), the rows must\n"
    "encode to exactly the content digest, row manifest digest and counts the\n"
    "header commits to. PROOF may be - for stdin. --json prints {\"ok\":true,\n"
    "\"account_id\",\"revision_id\",\"leaf_index\",\"tree_size\",\"root_hash\",\"key_id\",\n"
    "\"timestamp\",\"rows_checked\"}.\n\n"
    "exit status: 0 the proof holds; 1 usage or an unreadable file; 2 not a proof\n"
    "document or a bad key; 3 the proof (or the rows) refused.\n";

int adcp_cli_verify_proof(const adcp_cli_globals *g, int argc, char **argv) {
  (void)g;
  const char *proof = NULL, *keyfile = NULL, *rows = NULL;
  int json = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (adcp_cli_is_help(a)) return fputs(verify_proof_help, stdout), 0;
    if (!strcmp(a, "--json")) json = 1;
    else if (!strcmp(a, "--public-key") && i + 1 < argc) keyfile = argv[++i];
    else if (!strcmp(a, "--rows") && i + 1 < argc) rows = argv[++i];
    else if ((a[0] != '-' || !strcmp(a, "-")) && !proof) proof = a;
    else return adcp_cli_usage_error("verify-proof", "unknown option or missing value: '%s'", a);
  }
  if (!proof || !keyfile) return adcp_cli_usage_error("verify-proof", "give PROOF and --public-key FILE");
  adcp_error err = {0};
  adcp_buf pb, kb, rb;
  adcp_buf_init(&pb), adcp_buf_init(&kb), adcp_buf_init(&rb);
  adcp_audit_keyring keys = {0};
  int rc = adcp_cli_read_file(&pb, proof, PROOF_MAX, "proof", &err);
  if (!rc) rc = adcp_cli_read_file(&kb, keyfile, 65536, "public key", &err);
  if (!rc) rc = adcp_audit_keyring_add(&keys, kb.data ? (const char *)kb.data : "", kb.len, &err);
  if (!rc && rows) rc = adcp_cli_read_file(&rb, rows, ROWS_MAX, "rows", &err);
  adcp_audit_proof_info info;
  if (!rc)
    rc = adcp_audit_verify_proof(&info, pb.data ? (const char *)pb.data : "", pb.len, &keys,
                                 rows ? (rb.data ? (const char *)rb.data : "") : NULL, rb.len, &err);
  adcp_buf_free(&pb), adcp_buf_free(&kb), adcp_buf_free(&rb);
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
