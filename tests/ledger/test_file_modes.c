/* tests/ledger/test_file_modes.c — files the ledger creates are owner-only
 * unless configured otherwise: a new SQLite database and its -wal/-shm
 * (0600, whatever the umask; an existing file keeps its mode and SQLite gives
 * the WAL that mode), and everything a filesystem binding creates during
 * commits — objects, staged files, the root, prefix, key and staging
 * directories (0600 / 0700) — or exactly the modes set with
 * adcp_fs_provider_set_modes (0640 / 0750 under a umask of 077). On SQLite and
 * PostgreSQL for the binding part. */
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "adcp/objects.h"
#include "ledger_fixture.h"

static unsigned mode_of(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0) fail_msg("cannot stat %s", path);
  return (unsigned)(st.st_mode & 07777);
}

static void commit_some(adcp_ledger *l, const char *rev, const char *binding, uint64_t rows, uint64_t salt) {
  adcp_error err = {0};
  gen g;
  gen_init(&g, rows, 20, salt);
  adcp_ledger_commit req = {.version = ADCP_LEDGER_COMMIT_VERSION,
                            .account_id = "acct",
                            .obligation_id = "ob1",
                            .revision_id = rev,
                            .finality = ADCP_FINALITY_SNAPSHOT,
                            .period_start = "2026-10-01T00:00:00Z",
                            .period_end = "2026-10-02T00:00:00Z",
                            .next_row = gen_next,
                            .row_ctx = &g,
                            .binding_id = binding};
  adcp_commit_result res;
  OK(adcp_ledger_commit_revision(&res, l, &req, &err));
  adcp_commit_result_free(&res);
  adcp_buf_free(&g.line);
}

/* ---- SQLite ---------------------------------------------------------------------------- */

static void sqlite_files_owner_only(void **state) {
  (void)state;
  mode_t old = umask(022); /* a typical default: SQLite alone would give 0644 */
  char *dir = tu_mkdtemp();
  char url[4400], db[4200], wal[4300], shm[4300];
  snprintf(db, sizeof db, "%s/new.db", dir);
  snprintf(url, sizeof url, "sqlite:%s", db);
  snprintf(wal, sizeof wal, "%s-wal", db);
  snprintf(shm, sizeof shm, "%s-shm", db);
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  OK(adcp_storage_open(&s, url, &o, &err));
  OK(adcp_storage_migrate(NULL, s, NULL, &err));
  adcp_ledger *l = ledger_on(adcp_storage_sql(s), 0);
  commit_some(l, "r1", NULL, 50, 1);
  /* While open, the WAL and the shared-memory file exist beside the database. */
  assert_int_equal(mode_of(db), 0600);
  assert_int_equal(mode_of(wal), 0600);
  assert_int_equal(mode_of(shm), 0600);
  adcp_ledger_close(l);
  adcp_storage_close(s);

  /* An existing database keeps the mode its operator gave it, and so does its WAL. */
  snprintf(db, sizeof db, "%s/shared.db", dir);
  snprintf(url, sizeof url, "sqlite:%s", db);
  snprintf(wal, sizeof wal, "%s-wal", db);
  int fd = open(db, O_WRONLY | O_CREAT | O_EXCL, 0640);
  assert_true(fd >= 0);
  assert_int_equal(fchmod(fd, 0640), 0);
  close(fd);
  OK(adcp_storage_open(&s, url, &o, &err));
  OK(adcp_storage_migrate(NULL, s, NULL, &err));
  assert_int_equal(mode_of(db), 0640);
  assert_int_equal(mode_of(wal), 0640);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
  umask(old);
}

/* A new database is 0600 under umask 000, 022 and 077 (077 alone would still
 * give 0600; 000 would give SQLite's 0644), through the library and `init`. */
static void sqlite_new_db_every_umask(void **state) {
  (void)state;
  static const mode_t masks[] = {000, 022, 077};
  char *dir = tu_mkdtemp();
  for (size_t i = 0; i < 3; i++) {
    mode_t old = umask(masks[i]);
    char db[4200], url[4400], args[9000];
    snprintf(db, sizeof db, "%s/m%03o.db", dir, (unsigned)masks[i]);
    snprintf(url, sizeof url, "sqlite:%s", db);
    adcp_error err = {0};
    adcp_storage *s;
    adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
    OK(adcp_storage_open(&s, url, &o, &err));
    OK(adcp_storage_migrate(NULL, s, NULL, &err));
    adcp_storage_close(s);
    assert_int_equal(mode_of(db), 0600);
    snprintf(db, sizeof db, "%s/cli%03o.db", dir, (unsigned)masks[i]);
    snprintf(args, sizeof args, "--db 'sqlite:%s' init", db);
    adcp_buf out, eout;
    adcp_buf_init(&out), adcp_buf_init(&eout);
    if (tu_cli(dir, args, NULL, &out, &eout) != 0) fail_msg("init under umask %03o: %s", (unsigned)masks[i], eout.data);
    assert_int_equal(mode_of(db), 0600);
    adcp_buf_free(&out), adcp_buf_free(&eout);
    umask(old);
  }
  tu_rmtree(dir);
  free(dir);
}

/* Issue 27 item 3: `init` through a dangling symlink created a 0644 database
 * at the link's target. Now refused, nothing created; a link to an existing
 * file the caller owns is followed; one to another user's file is refused. */
static void sqlite_symlinked_path(void **state) {
  (void)state;
  mode_t old = umask(022);
  char *dir = tu_mkdtemp();
  char link[4200], target[4200], args[9000];
  snprintf(link, sizeof link, "%s/link.db", dir);
  snprintf(target, sizeof target, "%s/target.db", dir);
  assert_int_equal(symlink(target, link), 0);
  adcp_buf out, eout;
  adcp_buf_init(&out), adcp_buf_init(&eout);
  snprintf(args, sizeof args, "--db 'sqlite:%s' init", link);
  int st = tu_cli(dir, args, NULL, &out, &eout);
  assert_int_not_equal(st, 0);
  assert_non_null(strstr((char *)eout.data, "symbolic link whose target does not exist"));
  struct stat sb;
  assert_int_not_equal(lstat(target, &sb), 0); /* nothing created at the target */
  adcp_error err = {0};
  adcp_storage *s;
  adcp_storage_options o = {.version = ADCP_STORAGE_OPTIONS_VERSION, .skip_schema_check = 1};
  char url[4400];
  snprintf(url, sizeof url, "sqlite:%s", link);
  assert_int_equal(adcp_storage_open(&s, url, &o, &err), ADCP_ESTORAGE);
  /* The target exists and is ours: the link is followed, the file keeps its mode. */
  int fd = open(target, O_WRONLY | O_CREAT | O_EXCL, 0600);
  assert_true(fd >= 0);
  close(fd);
  if (tu_cli(dir, args, NULL, &out, &eout) != 0) fail_msg("init through an owned link: %s", eout.data);
  assert_int_equal(mode_of(target), 0600);
  /* Another user's file behind the link: refused (only checkable as root). */
  if (geteuid() == 0) {
    char other[4200], link2[4200];
    snprintf(other, sizeof other, "%s/other.db", dir);
    snprintf(link2, sizeof link2, "%s/link2.db", dir);
    fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0666);
    assert_true(fd >= 0);
    assert_int_equal(fchown(fd, 65534, 65534), 0);
    close(fd);
    assert_int_equal(symlink(other, link2), 0);
    snprintf(url, sizeof url, "sqlite:%s", link2);
    assert_int_equal(adcp_storage_open(&s, url, &o, &err), ADCP_ESTORAGE);
    assert_non_null(strstr(err.message, "owned by another user"));
    assert_int_equal(lstat(other, &sb), 0);
    assert_int_equal(sb.st_size, 0); /* never written */
  } else {
    print_message("note: not root, the other-owner case did not run\n");
  }
  adcp_buf_free(&out), adcp_buf_free(&eout);
  tu_rmtree(dir);
  free(dir);
  umask(old);
}

/* Files the CLI writes (encode --chunks-dir) are 0600 under umask 000, 022
 * and 077, and a symlink planted at an output name is replaced, never
 * written through. */
static void cli_written_files(void **state) {
  (void)state;
  static const mode_t masks[] = {000, 022, 077};
  char *dir = tu_mkdtemp();
  char rows[4200], victim[4200], out0[4400], args[9000];
  snprintf(rows, sizeof rows, "%s/rows.jsonl", dir);
  tu_write_file(rows, "{\"a\":1}\n{\"b\":2}\n", 16);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  tu_write_file(victim, "keep", 4);
  for (size_t i = 0; i < 3; i++) {
    mode_t old = umask(masks[i]);
    char cdir[4300];
    snprintf(cdir, sizeof cdir, "%s/chunks%zu", dir, i);
    assert_int_equal(mkdir(cdir, 0700), 0);
    snprintf(out0, sizeof out0, "%s/000000.jsonl", cdir);
    assert_int_equal(symlink(victim, out0), 0);
    snprintf(args, sizeof args, "encode --revision-id r1 --chunks-dir '%s' '%s'", cdir, rows);
    adcp_buf out, eout;
    adcp_buf_init(&out), adcp_buf_init(&eout);
    if (tu_cli(dir, args, NULL, &out, &eout) != 0)
      fail_msg("encode under umask %03o: %s", (unsigned)masks[i], eout.data);
    assert_int_equal(mode_of(out0), 0600); /* a regular file now, not the link */
    adcp_buf_free(&out), adcp_buf_free(&eout);
    umask(old);
  }
  size_t n;
  uint8_t *v = tu_read_file(victim, &n);
  assert_int_equal(n, 4);
  assert_memory_equal(v, "keep", 4);
  free(v);
  assert_int_equal(mode_of(victim), 0644);
  tu_rmtree(dir);
  free(dir);
}

/* ---- filesystem binding ------------------------------------------------------------------ */

typedef struct walk {
  unsigned file_mode, dir_mode;
  int files, dirs, staged_dir;
  int fence_files;
} walk;

/* Checks every entry below path (path itself included when top = 0). */
static void walk_tree(walk *w, const char *path) {
  DIR *d = opendir(path);
  assert_non_null(d);
  for (struct dirent *de; (de = readdir(d));) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char p[2048];
    snprintf(p, sizeof p, "%s/%s", path, de->d_name);
    struct stat st;
    assert_int_equal(lstat(p, &st), 0);
    if (S_ISDIR(st.st_mode)) {
      if ((unsigned)(st.st_mode & 07777) != w->dir_mode)
        fail_msg("directory %s has mode %04o, want %04o", de->d_name, (unsigned)(st.st_mode & 07777), w->dir_mode);
      if (strstr(de->d_name, "staging")) w->staged_dir = 1;
      w->dirs++;
      walk_tree(w, p);
    } else {
      if ((unsigned)(st.st_mode & 07777) != w->file_mode)
        fail_msg("file %s has mode %04o, want %04o", de->d_name, (unsigned)(st.st_mode & 07777), w->file_mode);
      /* Fence records (docs/fence.md) are not row objects; their mode is checked all the same. */
      if (strstr(path, "/_collector-fence")) w->fence_files++;
      else w->files++;
    }
  }
  closedir(d);
}

static void binding_modes(const fixture *f, unsigned file_mode, unsigned dir_mode, mode_t mask) {
  mode_t old = umask(mask);
  adcp_error err = {0};
  adcp_storage *s = open_migrated(f);
  char *dir = tu_mkdtemp();
  char root[700];
  snprintf(root, sizeof root, "%s/bucket", dir); /* created by the probe (create_root) */
  adcp_fs_provider_options po = {.root_name = "bucket", .prefix = "rows/deep", .create_root = 1};
  adcp_object_provider *p;
  OK(adcp_fs_provider_new(&p, root, &po, &err));
  if (file_mode || dir_mode) OK(adcp_fs_provider_set_modes(p, file_mode, dir_mode, &err));
  adcp_ledger *l;
  adcp_ledger_options lo = {.version = ADCP_LEDGER_OPTIONS_VERSION, .write_deadline_ms = 5000};
  OK(adcp_ledger_open(&l, adcp_storage_sql(s), &lo, &err));
  adcp_object_kv loc[1] = {{"root", "bucket"}};
  adcp_ledger_binding_config bc = {.version = ADCP_LEDGER_BINDING_CONFIG_VERSION,
                                   .id = "fs1",
                                   .provider = "filesystem",
                                   .location = loc,
                                   .n_location = 1,
                                   .prefix = "rows/deep",
                                   .client = p};
  OK(adcp_ledger_configure_binding(l, &bc, &err));
  assert_true(adcp_object_stage_supported(p)); /* an explicit binding stages its chunks */
  commit_some(l, "r1", "fs1", 25000, 3);       /* three chunks */
  commit_some(l, "r2", "fs1", 10, 4);

  walk w = {file_mode ? file_mode : 0600, dir_mode ? dir_mode : 0700, 0, 0, 0, 0};
  assert_int_equal(mode_of(root), w.dir_mode);
  walk_tree(&w, root);
  assert_int_equal(w.files, 4);       /* 3 + 1 objects; nothing left in staging */
  assert_int_equal(w.fence_files, 1); /* the first commit claimed the binding's fence (epoch 1) */
  assert_true(w.dirs >= 4);           /* rows, deep, the namespace and key directories */
  assert_true(w.staged_dir);          /* the staging directory was created (and checked) */
  adcp_ledger_close(l);
  adcp_object_provider_free(p);
  adcp_storage_close(s);
  tu_rmtree(dir);
  free(dir);
  umask(old);
}

static void filesystem_binding_owner_only(void **state) { binding_modes(*state, 0, 0, 022); }

static void filesystem_binding_configured_modes(void **state) { binding_modes(*state, 0640, 0750, 077); }

static void filesystem_modes_refused(void **state) {
  (void)state;
  adcp_error err = {0};
  char *dir = tu_mkdtemp();
  adcp_fs_provider_options po = {.root_name = "b", .prefix = "rows", .create_root = 1};
  adcp_object_provider *p;
  OK(adcp_fs_provider_new(&p, dir, &po, &err));
  static const unsigned bad[][2] = {{0666, 0}, {0400, 0}, {01600, 0}, {0, 0777}, {0, 0500}, {0, 02700}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    assert_int_equal(adcp_fs_provider_set_modes(p, bad[i][0], bad[i][1], &err), ADCP_EINVALID_INPUT);
  OK(adcp_fs_provider_set_modes(p, 0660, 0770, &err));
  adcp_object_provider_free(p);
  tu_rmtree(dir);
  free(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(sqlite_files_owner_only),  cmocka_unit_test(sqlite_new_db_every_umask),
      cmocka_unit_test(sqlite_symlinked_path),    cmocka_unit_test(cli_written_files),
      BOTH(filesystem_binding_owner_only),        BOTH(filesystem_binding_configured_modes),
      cmocka_unit_test(filesystem_modes_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
