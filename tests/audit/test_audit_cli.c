/* tests/audit/test_audit_cli.c — the audit commands end to end on SQLite and
 * PostgreSQL: checkpoint (stored, published create-only under _checkpoints/
 * of a filesystem binding, printed), audit (clean, then an edited header found
 * against the stored, the file and the binding checkpoints; exit 3), verify
 * --all reporting the header digest, prove and verify-proof (offline, with
 * rows, tampered, wrong key), --help and --json on every command, and each
 * refusal with its exit status. */
#include <sys/resource.h>
#include <sys/stat.h>

#include "support/support_cx.h"
#include "support/support_config.h"

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  if (tu_run(cmd, NULL, 0, NULL)) fail_msg("command failed: %s", cmd);
}

/* x->path: the public key of k.pem. */
static void cx_open(cx *x, void **state, int with_keys) {
  cx_init(x, state);
  sh("cd '%s' && openssl genpkey -algorithm ed25519 -out k.pem 2>/dev/null && openssl pkey -in k.pem -pubout "
     "-out pub.pem && openssl genpkey -algorithm ed25519 -out other.pem 2>/dev/null && openssl pkey -in other.pem "
     "-pubout -out other_pub.pem && mkdir bucket",
     x->dir);
  snprintf(x->path, sizeof x->path, "%s/pub.pem", x->dir);
  snprintf(x->cfg, sizeof x->cfg, "%s/cfg.json", x->dir);
  char pubtxt[4400];
  snprintf(pubtxt, sizeof pubtxt, "grep -v -- ----- '%s' | tr -d '\\n'", x->path);
  adcp_buf b64;
  adcp_buf_init(&b64);
  assert_int_equal(tu_run(pubtxt, NULL, 0, &b64), 0);
  adcp_buf_cstr(&b64);
  tu_write_config(x->cfg,
                  "{\"bindings\":[{\"id\":\"fs1\",\"kind\":\"object\",\"provider\":\"filesystem\",\"location\":{\"root\":"
                  "\"demo\"},\"root_dir\":\"./bucket\",\"prefix\":\"rows\"}],\n"
                  "\"audit\":{\"signing_key_file\":\"k.pem\"%s%s%s,\"checkpoint_binding\":\"fs1\"}}\n",
                  with_keys ? ",\"public_keys\":[\"" : "", with_keys ? (const char *)b64.data : "",
                  with_keys ? "\"]" : "");
  adcp_buf_free(&b64);
  assert_int_equal(run(x, "migrate"), 0);
  for (int i = 1; i <= 3; i++) {
    char rows[4300];
    snprintf(rows, sizeof rows, "%s/rows%d.jsonl", x->dir, i);
    char text[64];
    snprintf(text, sizeof text, "{\"a\":%d}\n{\"b\":\"x\"}\n", i);
    tu_write_file(rows, text, strlen(text));
    assert_int_equal(run(x,
                         "commit --account acct --obligation ob --revision r%d --finality snapshot --period-start "
                         "2026-10-01T00:00:00Z --period-end 2026-10-02T00:00:00Z '%s'",
                         i, rows),
                     0);
  }
}

static void tamper(cx *x, const char *sql) {
  adcp_error err = {0};
  adcp_sql_conn *c;
  OK(adcp_sql_connect(&c, x->f->url, &err));
  char buf[2048];
  if (x->f->dialect == ADCP_SQL_SQLITE)
    snprintf(buf, sizeof buf, "DROP TRIGGER adcp_reporting_revisions_immutable;\n%s", sql);
  else snprintf(buf, sizeof buf, "SET session_replication_role = replica;\n%s", sql);
  OK(adcp_sql_exec_script(c, buf, &err));
  adcp_sql_close(c);
}

static void end_to_end(void **state) {
  cx x;
  cx_open(&x, state, 1);
  /* checkpoint: stored, published, printed. */
  assert_int_equal(run(&x, "checkpoint --all"), 0);
  assert_non_null(strstr(out_of(&x), "\"profile\":\"adcp-checkpoint-v1\""));
  assert_non_null(strstr(out_of(&x), "\"tree_size\":3"));
  assert_non_null(strstr(err_of(&x), "published rows/_checkpoints/"));
  char cpfile[4300];
  snprintf(cpfile, sizeof cpfile, "%s/cp.json", x.dir);
  tu_write_file(cpfile, x.out.data, x.out.len);
  assert_int_equal(run(&x, "checkpoint --account acct --binding fs1 --json"), 0);
  assert_non_null(strstr(out_of(&x), "{\"ok\":true,\"checkpoints\":[{\"document\":{"));
  assert_non_null(strstr(out_of(&x), "\"object_key\":\"rows/_checkpoints/"));
  /* audit: clean. */
  assert_int_equal(run(&x, "audit"), 0);
  assert_non_null(strstr(out_of(&x),
                         "audit: 1 accounts, 3 leaves, 3 headers, 0 retired, 2 checkpoints, 1 consistency "
                         "proofs, 0 findings\n"));
  assert_int_equal(run(&x, "audit --checkpoint '%s' --json", cpfile), 0);
  assert_non_null(strstr(out_of(&x), "{\"ok\":true,\"accounts\":1,"));
  assert_int_equal(run(&x, "audit --from-binding fs1"), 0);
  assert_non_null(strstr(out_of(&x), "4 checkpoints"));
  /* prove + verify-proof offline (no --db: the command never opens one). */
  char proof[4300], rows2[4300], rows1[4300];
  snprintf(proof, sizeof proof, "%s/proof.json", x.dir);
  snprintf(rows1, sizeof rows1, "%s/rows1.jsonl", x.dir);
  snprintf(rows2, sizeof rows2, "%s/rows2.jsonl", x.dir);
  assert_int_equal(run(&x, "prove --account acct --revision r2 --checkpoint '%s'", cpfile), 0);
  tu_write_file(proof, x.out.data, x.out.len);
  char args[16384];
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s' --rows '%s'", proof, x.path, rows2);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 0);
  adcp_buf_cstr(&x.out);
  assert_non_null(strstr(out_of(&x), "proof ok: revision r2 of account acct is leaf 1 of 3"));
  assert_non_null(strstr(out_of(&x), "rows match the header"));
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s' --json", proof, x.path);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 0);
  adcp_buf_cstr(&x.out);
  assert_non_null(strstr(out_of(&x), "{\"ok\":true,\"account_id\":\"acct\",\"revision_id\":\"r2\",\"leaf_index\":1,"));
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s' --rows '%s'", proof, x.path, rows1);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 3);
  assert_non_null(strstr(err_of(&x), "INTEGRITY_FAILED: rows refused"));
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s/other_pub.pem' --json", proof, x.dir);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 3);
  adcp_buf_cstr(&x.out);
  assert_non_null(strstr(out_of(&x), "\"ok\":false"));
  assert_non_null(strstr(out_of(&x), "INTEGRITY_FAILED"));
  sh("sed -i 's/\"leaf_index\":1/\"leaf_index\":0/' '%s'", proof);
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s'", proof, x.path);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 3);
  assert_non_null(strstr(err_of(&x), "proof refused"));
  /* An edited header: audit and verify --all find it at its leaf. */
  tamper(&x, "UPDATE adcp_reporting_revisions SET observed_at = '2026-10-01T03:00:00Z' WHERE revision_id = 'r2'");
  assert_int_equal(run(&x, "audit"), 3);
  assert_non_null(strstr(out_of(&x), "FINDING header_edited acct leaf 1 r2: "));
  assert_non_null(strstr(err_of(&x), "INTEGRITY_FAILED"));
  assert_int_equal(run(&x, "audit --json --account acct"), 3);
  assert_non_null(strstr(out_of(&x), "\"kind\":\"header_edited\",\"account_id\":\"acct\",\"leaf_index\":1,"));
  assert_int_equal(run(&x, "verify --all"), 3);
  assert_non_null(strstr(out_of(&x), "FAILED r2: ROWS_INTEGRITY_FAILED: header digest"));
  assert_int_equal(run(&x, "prove --account acct --revision r2"), 3);
  cx_free(&x);
}

static void refusals_and_help(void **state) {
  cx x;
  cx_open(&x, state, 0);
  static const char *const cmds[] = {"checkpoint", "audit", "prove", "verify-proof"};
  for (size_t i = 0; i < 4; i++) {
    assert_int_equal(run(&x, "%s --help", cmds[i]), 0);
    assert_non_null(strstr(out_of(&x), "usage: adcp-ledger"));
  }
  assert_int_equal(run(&x, "checkpoint"), 1); /* neither --account nor --all */
  assert_int_equal(run(&x, "checkpoint --account a --all"), 1);
  assert_int_equal(run(&x, "audit --bogus x"), 1);
  assert_int_equal(run(&x, "prove --account acct"), 1);
  assert_int_equal(run(&x, "checkpoint --all --binding nope --json"), 4); /* unconfigured binding */
  assert_non_null(strstr(out_of(&x), "\"ok\":false"));
  /* No key pinned: audit still checks headers and says checkpoints are not checked. */
  assert_int_equal(run(&x, "checkpoint --all"), 0);
  char cpfile[4300];
  snprintf(cpfile, sizeof cpfile, "%s/cp.json", x.dir);
  tu_write_file(cpfile, x.out.data, x.out.len);
  assert_int_equal(run(&x, "audit"), 0);
  assert_non_null(strstr(err_of(&x), "no public key pinned"));
  assert_int_equal(run(&x, "checkpoint --account acct --adopt-unlogged"), 0); /* nothing to adopt */
  assert_null(strstr(err_of(&x), "adopted"));
  assert_int_equal(run(&x, "audit --checkpoint '%s' --json", cpfile), 2);
  assert_non_null(strstr(out_of(&x), "\"ok\":false"));
  assert_int_equal(run(&x, "audit --checkpoint '%s' --from-binding fs1", cpfile), 1);
  assert_int_equal(run(&x, "prove --account acct --revision nope --json"), 5);
  assert_non_null(strstr(out_of(&x), "REFERENCE_NOT_FOUND"));
  assert_int_equal(run(&x, "prove --account other --revision r1"), 5);
  char args[16384];
  snprintf(args, sizeof args, "verify-proof '%s/missing.json' --public-key '%s'", x.dir, x.path);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 1);
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s'", cpfile, x.cfg); /* not a key */
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 2);
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s'", cpfile, x.path); /* not a proof */
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 2);
  assert_int_equal(tu_cli(x.dir, "verify-proof", NULL, &x.out, &x.err), 1);
  /* A configuration without the signing key. */
  const char *nokey = "{\"audit\":{\"public_keys\":[]}}\n";
  tu_write_file(x.cfg, nokey, strlen(nokey));
  assert_int_equal(run(&x, "checkpoint --all --json"), 2);
  assert_non_null(strstr(out_of(&x), "signing_key_file"));
  const char *bad = "{\"audit\":{\"public_keys\":[\"not a key\"]}}\n";
  tu_write_file(x.cfg, bad, strlen(bad));
  assert_int_equal(run(&x, "show --account acct --revision r1"), 2); /* every command validates the section */
  assert_non_null(strstr(err_of(&x), "audit.public_keys"));
  const char *unknown = "{\"audit\":{\"signing_key\":\"x\"}}\n";
  tu_write_file(x.cfg, unknown, strlen(unknown));
  assert_int_equal(run(&x, "audit"), 2);
  /* Read-only commands never create a SQLite file. */
  if (x.f->dialect == ADCP_SQL_SQLITE) {
    char args2[8192];
    snprintf(args2, sizeof args2, "--db 'sqlite:%s/none.db' audit", x.dir);
    assert_int_equal(tu_cli(x.dir, args2, NULL, &x.out, &x.err), 4);
    char p[4300];
    snprintf(p, sizeof p, "%s/none.db", x.dir);
    struct stat st;
    assert_int_not_equal(stat(p, &st), 0);
  }
  cx_free(&x);
}

/* Issue 25 "say the mode every time", --require-outside, an unreadable
 * object under _checkpoints/, adopt --dry-run; issue 33 item 1. */
static void modes_and_outside(void **state) {
  cx x;
  cx_open(&x, state, 1);
  assert_int_equal(run(&x, "checkpoint --all"), 0);
  char cpfile[4300];
  snprintf(cpfile, sizeof cpfile, "%s/cp.json", x.dir);
  tu_write_file(cpfile, x.out.data, x.out.len);
  /* Pinned keys, stored checkpoints only: said, and --require-outside fails. */
  assert_int_equal(run(&x, "audit"), 0);
  assert_non_null(strstr(out_of(&x), "mode: pinned keys, no checkpoint from outside the database"));
  assert_int_equal(run(&x, "audit --require-outside"), 3);
  assert_non_null(strstr(err_of(&x), "--require-outside: no checkpoint from outside the database was verified"));
  assert_int_equal(run(&x, "audit --require-outside --json"), 3);
  assert_non_null(strstr(out_of(&x), "\"ok\":false"));
  assert_non_null(strstr(out_of(&x), "\"mode\":\"pinned\",\"outside_checkpoints\":0"));
  assert_non_null(strstr(out_of(&x), "\"require_outside\":\"failed\""));
  /* One outside checkpoint from a file. */
  assert_int_equal(run(&x, "audit --checkpoint '%s' --require-outside", cpfile), 0);
  assert_non_null(strstr(out_of(&x), "mode: 1 outside checkpoint verified, newest at tree size 3 ("));
  assert_int_equal(run(&x, "audit --checkpoint '%s' --require-outside --json", cpfile), 0);
  assert_non_null(strstr(out_of(&x), "\"mode\":\"outside\",\"outside_checkpoints\":1,\"outside_newest_tree_size\":3,"));
  assert_non_null(strstr(out_of(&x), "\"require_outside\":\"met\""));
  /* An unreadable object among the published ones: a finding with its key;
   * the audit goes on and prints its summary. */
  sh("mkdir -p '%s/bucket/rows/_checkpoints/zz' && printf 'not a checkpoint' > "
     "'%s/bucket/rows/_checkpoints/zz/00000000000000000001-x-1.json'",
     x.dir, x.dir);
  assert_int_equal(run(&x, "audit --from-binding fs1 --require-outside"), 3);
  assert_non_null(
      strstr(out_of(&x), "FINDING checkpoint_unreadable - - rows/_checkpoints/zz/00000000000000000001-x-1.json"));
  assert_non_null(strstr(out_of(&x), "mode: 1 outside checkpoint verified"));
  assert_non_null(strstr(out_of(&x), "audit: 1 accounts"));
  /* A configuration that lost its keys cannot pass silently. */
  const char *nokeys = "{\"audit\":{}}\n";
  tu_write_file(x.cfg, nokeys, strlen(nokeys));
  assert_int_equal(run(&x, "audit"), 0);
  assert_non_null(strstr(out_of(&x), "mode: no pinned key"));
  assert_int_equal(run(&x, "audit --require-outside --json"), 3);
  assert_non_null(strstr(out_of(&x), "\"mode\":\"no_key\""));
  /* adopt --dry-run: what would be adopted (nothing here), nothing signed. */
  assert_int_equal(run(&x, "checkpoint --all --adopt-unlogged --dry-run"), 0);
  assert_non_null(strstr(out_of(&x), "0 revisions would be adopted; nothing written or signed"));
  assert_int_equal(run(&x, "checkpoint --all --adopt-unlogged --dry-run --json"), 0);
  assert_non_null(strstr(out_of(&x), "{\"ok\":true,\"dry_run\":true,\"would_adopt\":[]}"));
  assert_int_equal(run(&x, "checkpoint --all --dry-run"), 1); /* --dry-run alone is refused */
  assert_non_null(strstr(err_of(&x), "--dry-run needs --adopt-unlogged"));
  /* Issue 33 item 1: a buyer verifying with a key that did not sign. */
  char proof[4300], args[16384], kid[64] = "";
  snprintf(proof, sizeof proof, "%s/proof.json", x.dir);
  assert_int_equal(run(&x, "prove --account acct --revision r2 --checkpoint '%s'", cpfile), 0);
  tu_write_file(proof, x.out.data, x.out.len);
  const char *k = strstr(out_of(&x), "\"key_id\":\"");
  assert_non_null(k);
  memcpy(kid, k + 10, 16);
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s/other_pub.pem'", proof, x.dir);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 3);
  adcp_buf_cstr(&x.err);
  assert_non_null(strstr(err_of(&x), "the checkpoint is not signed by the given key"));
  assert_non_null(strstr(err_of(&x), kid));
  assert_null(strstr(err_of(&x), "configuration"));
  cx_free(&x);
}

/* verify-proof --rows streams the rows one line at a time: a 48 MiB rows file
 * (they do not match the header, so the answer is exit 3 after encoding them
 * all) keeps the process far below the file's size. It read the file whole,
 * up to 256 MiB, before (issue 27 item 8). */
static void verify_proof_rows_stream(void **state) {
  cx x;
  cx_open(&x, state, 1);
  assert_int_equal(run(&x, "checkpoint --all"), 0);
  char cpfile[4300], proof[4300], big[4300], args[16384];
  snprintf(cpfile, sizeof cpfile, "%s/cp.json", x.dir);
  tu_write_file(cpfile, x.out.data, x.out.len);
  assert_int_equal(run(&x, "prove --account acct --revision r2 --checkpoint '%s'", cpfile), 0);
  snprintf(proof, sizeof proof, "%s/proof.json", x.dir);
  tu_write_file(proof, x.out.data, x.out.len);
  snprintf(big, sizeof big, "%s/big.jsonl", x.dir);
  FILE *f = fopen(big, "w");
  assert_non_null(f);
  for (int i = 0; i < 400000; i++) fprintf(f, "{\"z\":%d,\"b\":\"%0100d\",\"a\":[1,2,3]}\n", i, i);
  fclose(f);
  snprintf(args, sizeof args, "verify-proof '%s' --public-key '%s' --rows '%s'", proof, x.path, big);
  assert_int_equal(tu_cli(x.dir, args, NULL, &x.out, &x.err), 3);
  assert_non_null(strstr(err_of(&x), "INTEGRITY_FAILED: rows refused: they encode to 400000 rows"));
  /* The largest child so far: the earlier commands are small too. */
  struct rusage ru;
  assert_int_equal(getrusage(RUSAGE_CHILDREN, &ru), 0);
  print_message("largest child: %ld MiB\n", ru.ru_maxrss / 1024);
#ifdef ADCP_SANITIZED_BUILD
  assert_true(ru.ru_maxrss < 2 * 32L * 1024);
#else
  assert_true(ru.ru_maxrss < 32L * 1024);
#endif
  cx_free(&x);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(end_to_end),
      BOTH(refusals_and_help),
      BOTH(modes_and_outside),
      BOTH(verify_proof_rows_stream),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
