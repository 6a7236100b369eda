/* tests/objects/test_fs_stage.c — room tests/objects: the filesystem
 * provider's staged writes (stage_put then stage_link): staging files cleaned
 * up, injected failures and link faults leaving nothing, no relink after a
 * delete, the staging area swept at creation and of stale files, a staging
 * file swapped before the link, a symlinked staging directory refused, and
 * the port's checks. Split out of test_fs_provider.c. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs_env.h"

/* The conformance suite's first body (spec 02 §9.4), 16 bytes. */
static const char FIRST[] = "{\"a\":1}\n{\"b\":2}\n";

/* ---- staged writes ----------------------------------------------------------------- */

#define STAGING "rows/.adcp~staging"

static adcp_object_stage *stage_ok(adcp_object_provider *p, const void *b, size_t n) {
  adcp_object_stage *st = NULL;
  adcp_error err;
  int rc = adcp_object_stage_put(p, &st, b, n, NULL, &err);
  if (rc) fail_msg("stage_put: %s", err.message);
  assert_non_null(st);
  return st;
}

static int link_to(adcp_object_provider *p, adcp_object_put_result *r, adcp_object_stage *st, const char *key,
                   adcp_error *err) {
  adcp_object_put_input in = {key, NULL, 0, "application/x-ndjson", NULL, 0};
  return adcp_object_stage_link(p, r, st, &in, NULL, err);
}

/* Names of the staging files in dir (up to max, each < 128 bytes). Returns the count of all entries but . and .. */
static int staging_names(const char *dir, char names[][128], int max) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  for (struct dirent *de; (de = readdir(d));) {
    if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0) continue;
    if (n < max) snprintf(names[n], 128, "%.120s", de->d_name);
    n++;
  }
  closedir(d);
  return n;
}

static void set_age(const char *path, time_t seconds_ago) {
  struct timespec ts[2];
  clock_gettime(CLOCK_REALTIME, &ts[0]);
  ts[0].tv_sec -= seconds_ago;
  ts[1] = ts[0];
  assert_int_equal(utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW), 0);
}

/* A staging file whose bytes are exactly b (the handle is opaque: find it by content). */
static const char *staged_file_with(const char *root, const void *b, size_t n) {
  static char found[1300];
  char names[16][128];
  int k = staging_names(path_in(root, STAGING), names, 16);
  assert_true(k <= 16);
  for (int i = 0; i < k; i++) {
    char rel[200];
    snprintf(rel, sizeof rel, STAGING "/%.120s", names[i]);
    size_t got;
    uint8_t *data = tu_read_file(path_in(root, rel), &got);
    int same = got == n && (n == 0 || memcmp(data, b, n) == 0);
    free(data);
    if (same) {
      snprintf(found, sizeof found, "%s", path_in(root, rel));
      return found;
    }
  }
  fail_msg("no staging file holds the expected bytes");
  return NULL;
}

static void t_stage_files_cleaned(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-clean");
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_error err;
  adcp_object_put_result r;
  adcp_object_stage *st = stage_ok(p, FIRST, 16);
  char names[4][128];
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 1);
  /* the documented name: .adcp~<32 hex>.stage */
  assert_int_equal(strlen(names[0]), strlen(".adcp~") + 32 + strlen(".stage"));
  assert_true(strncmp(names[0], ".adcp~", 6) == 0 && strcmp(names[0] + 38, ".stage") == 0);
  assert_int_equal(link_to(p, &r, st, "rows/s/x.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  assert_int_equal(count_temps(path_in(root, "rows/s")), 0); /* no temp next to the object */
  struct stat sb;
  assert_int_equal(stat(path_in(root, "rows/s/x.jsonl"), &sb), 0);
  assert_int_equal(sb.st_nlink, 2); /* a hard link of the staged file, not a copy */
  adcp_object_stage_drop(p, st);
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
  assert_int_equal(stat(path_in(root, "rows/s/x.jsonl"), &sb), 0);
  assert_int_equal(sb.st_nlink, 1);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input gin = {"rows/s/x.jsonl", r.native_version, 0, 0, 0, 100};
  assert_int_equal(adcp_object_get(p, &out, &gin, NULL, &err), 0);
  assert_int_equal(out.len, 16);
  assert_memory_equal(out.data, FIRST, 16);
  adcp_buf_free(&out);
  /* a stage dropped without a link leaves nothing either */
  st = stage_ok(p, "y\n", 2);
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 1);
  adcp_object_stage_drop(p, st);
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
  adcp_object_provider_free(p);
}

static void t_stage_injected_failures(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-faults");
  const int steps[] = {ADCP_FS_STEP_TEMP_CREATED, ADCP_FS_STEP_WROTE_SLICE, ADCP_FS_STEP_FSYNC_FILE, ADCP_FS_STEP_STAGED};
  adcp_error err;
  char names[4][128];
  static char sentinel;
  for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
    fault f = {steps[i], {0}};
    adcp_object_provider *p = make_fs(root, "rows", fault_hook, &f, 4);
    adcp_object_stage *st = (adcp_object_stage *)&sentinel;
    assert_int_equal(adcp_object_stage_put(p, &st, (const uint8_t *)FIRST, 16, NULL, &err), ADCP_EPROVIDER_UNAVAILABLE);
    assert_null(st);
    assert_int_equal(f.counts[steps[i]], 1); /* the fault really fired at that step */
    assert_null(strstr(err.message, root));
    struct stat sb;
    assert_int_equal(stat(path_in(root, STAGING), &sb), 0); /* the directory exists, and is empty */
    assert_true(S_ISDIR(sb.st_mode));
    assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
    adcp_object_provider_free(p);
  }
  /* control: without a fault every step runs once (four 4-byte slices) and one file is left */
  fault f = {0, {0}};
  adcp_object_provider *p = make_fs(root, "rows", fault_hook, &f, 4);
  adcp_object_stage *st = stage_ok(p, FIRST, 16);
  assert_int_equal(f.counts[ADCP_FS_STEP_TEMP_CREATED], 1);
  assert_int_equal(f.counts[ADCP_FS_STEP_WROTE_SLICE], 4);
  assert_int_equal(f.counts[ADCP_FS_STEP_FSYNC_FILE], 1);
  assert_int_equal(f.counts[ADCP_FS_STEP_STAGED], 1);
  assert_int_equal(f.counts[ADCP_FS_STEP_BEFORE_LINK], 0);
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 1);
  adcp_object_stage_drop(p, st);
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
  adcp_object_provider_free(p);
}

static void t_stage_link_faults(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-link-faults");
  fault f = {ADCP_FS_STEP_BEFORE_LINK, {0}};
  adcp_object_provider *p = make_fs(root, "rows", fault_hook, &f, 0);
  adcp_error err;
  adcp_object_put_result r;
  adcp_object_info info;
  adcp_object_stage *st = stage_ok(p, FIRST, 16);
  /* before the link: nothing at the key, the stage survives and links on retry */
  assert_int_equal(link_to(p, &r, st, "rows/l/x.jsonl", &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(adcp_object_head(p, &info, "rows/l/x.jsonl", NULL, &err), ADCP_ENOT_FOUND);
  f.fail_step = 0;
  assert_int_equal(link_to(p, &r, st, "rows/l/x.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  adcp_object_stage_drop(p, st);
  /* after the link: the object exists ("unknown"), and a retry on the same handle adopts it */
  f.fail_step = ADCP_FS_STEP_FSYNC_DIR;
  st = stage_ok(p, "z\n", 2);
  assert_int_equal(link_to(p, &r, st, "rows/l/y.jsonl", &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(adcp_object_head(p, &info, "rows/l/y.jsonl", NULL, &err), 0);
  assert_int_equal(info.size, 2);
  f.fail_step = 0;
  assert_int_equal(link_to(p, &r, st, "rows/l/y.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r.native_version, info.native_version);
  adcp_object_stage_drop(p, st);
  char names[4][128];
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
  assert_int_equal(count_temps(path_in(root, "rows/l")), 0);
  adcp_object_provider_free(p);
}

/* A staged inode linked once must never be linked again: after the object is
 * deleted, a second link would re-create it with the same version, and a
 * late pinned delete of the first object would remove the second. */
static void t_stage_no_relink_after_delete(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-relink");
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_error err;
  adcp_object_put_result r;
  adcp_object_info info;
  adcp_object_stage *st = stage_ok(p, FIRST, 16);
  assert_int_equal(link_to(p, &r, st, "rows/r/x.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  char v1[sizeof r.native_version];
  memcpy(v1, r.native_version, sizeof v1);
  /* While the object is there, a retry adopts it at the same version. */
  assert_int_equal(link_to(p, &r, st, "rows/r/x.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_ADOPTED_IDENTICAL);
  assert_string_equal(r.native_version, v1);
  int outcome = 0;
  assert_int_equal(adcp_object_delete(p, &outcome, "rows/r/x.jsonl", v1, NULL, &err), 0);
  assert_int_equal(outcome, ADCP_OBJECT_DELETED);
  /* Re-linking the same handle is refused and leaves the key empty. */
  assert_int_equal(link_to(p, &r, st, "rows/r/x.jsonl", &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "already linked"));
  assert_int_equal(adcp_object_head(p, &info, "rows/r/x.jsonl", NULL, &err), ADCP_ENOT_FOUND);
  adcp_object_stage_drop(p, st);
  /* Staging the bytes again creates a new object with a new version. */
  st = stage_ok(p, FIRST, 16);
  assert_int_equal(link_to(p, &r, st, "rows/r/x.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  assert_string_not_equal(r.native_version, v1);
  adcp_object_stage_drop(p, st);
  adcp_object_provider_free(p);
}

/* A new provider instance (every process start) also clears stale staging
 * files: the ledger probes a binding only when it is first registered. */
static void t_stage_swept_at_creation(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-creation");
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_object_stage *old = stage_ok(p, FIRST, 16), *fresh = stage_ok(p, "fresh\n", 6);
  char old_path[1300], fresh_path[1300];
  snprintf(old_path, sizeof old_path, "%s", staged_file_with(root, FIRST, 16));
  snprintf(fresh_path, sizeof fresh_path, "%s", staged_file_with(root, "fresh\n", 6));
  set_age(old_path, ADCP_OBJECT_STAGE_MAX_AGE_S + 3600);
  adcp_object_provider *q = make_fs(root, "rows", NULL, NULL, 0);
  struct stat sb;
  assert_int_not_equal(lstat(old_path, &sb), 0);
  assert_int_equal(lstat(fresh_path, &sb), 0);
  adcp_object_stage_drop(p, old);
  adcp_object_stage_drop(p, fresh);
  adcp_object_provider_free(q);
  adcp_object_provider_free(p);
}

/* The staging name swapped for another file between stage and link: the link
 * is undone and refused instead of publishing bytes nobody checked. */
static void t_stage_swapped_before_link(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-swap");
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_error err;
  adcp_object_put_result r;
  adcp_object_info info;
  adcp_object_stage *st = stage_ok(p, FIRST, 16);
  char path[1300];
  snprintf(path, sizeof path, "%s", staged_file_with(root, FIRST, 16));
  /* Same name, same size, different inode and bytes. */
  char tmp[1400];
  snprintf(tmp, sizeof tmp, "%s.x", path);
  tu_write_file(tmp, "EVIL-EVIL-EVIL!\n", 16);
  assert_int_equal(rename(tmp, path), 0);
  assert_int_equal(link_to(p, &r, st, "rows/s/x.jsonl", &err), ADCP_EUNSAFE_BINDING);
  assert_non_null(strstr(err.message, "replaced"));
  assert_int_equal(adcp_object_head(p, &info, "rows/s/x.jsonl", NULL, &err), ADCP_ENOT_FOUND);
  adcp_object_stage_drop(p, st);
  adcp_object_provider_free(p);
}

static void t_stage_stale_swept(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-stale");
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_error err;
  adcp_object_put_result r;
  adcp_object_info info;
  adcp_object_stage *stale = stage_ok(p, FIRST, 16), *fresh = stage_ok(p, "fresh\n", 6),
                    *young = stage_ok(p, "young\n", 6), *linked = stage_ok(p, "linked\n", 7);
  char stale_path[1300], fresh_path[1300], young_path[1300], linked_path[1300];
  snprintf(stale_path, sizeof stale_path, "%s", staged_file_with(root, FIRST, 16));
  snprintf(fresh_path, sizeof fresh_path, "%s", staged_file_with(root, "fresh\n", 6));
  snprintf(young_path, sizeof young_path, "%s", staged_file_with(root, "young\n", 6));
  snprintf(linked_path, sizeof linked_path, "%s", staged_file_with(root, "linked\n", 7));
  assert_int_equal(link_to(p, &r, linked, "rows/st/linked.jsonl", &err), 0);
  set_age(stale_path, ADCP_OBJECT_STAGE_MAX_AGE_S + 3600);
  set_age(young_path, ADCP_OBJECT_STAGE_MAX_AGE_S - 120);   /* just under the limit */
  set_age(linked_path, ADCP_OBJECT_STAGE_MAX_AGE_S + 3600); /* same inode: the object's mtime (and version) moves too */
  int rc = adcp_object_probe(p, NULL, &err);
  if (rc) fail_msg("probe: %s", err.message);
  struct stat sb;
  assert_int_not_equal(lstat(stale_path, &sb), 0);
  assert_int_equal(errno, ENOENT);
  assert_int_not_equal(lstat(linked_path, &sb), 0);
  assert_int_equal(lstat(fresh_path, &sb), 0);
  assert_int_equal(lstat(young_path, &sb), 0);
  /* a swept stage cannot be linked: nothing appears at the key */
  assert_int_equal(link_to(p, &r, stale, "rows/st/stale.jsonl", &err), ADCP_EPROVIDER_UNAVAILABLE);
  assert_int_equal(adcp_object_head(p, &info, "rows/st/stale.jsonl", NULL, &err), ADCP_ENOT_FOUND);
  /* the sweep removed only the staging name of the linked object */
  assert_int_equal(adcp_object_head(p, &info, "rows/st/linked.jsonl", NULL, &err), 0);
  assert_int_equal(info.size, 7);
  adcp_buf out;
  adcp_buf_init(&out);
  adcp_object_get_input gin = {"rows/st/linked.jsonl", info.native_version, 0, 0, 0, 100};
  assert_int_equal(adcp_object_get(p, &out, &gin, NULL, &err), 0);
  assert_int_equal(out.len, 7);
  assert_memory_equal(out.data, "linked\n", 7);
  adcp_buf_free(&out);
  /* the kept stages still work */
  assert_int_equal(link_to(p, &r, fresh, "rows/st/fresh.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  assert_int_equal(link_to(p, &r, young, "rows/st/young.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  adcp_object_stage_drop(p, stale); /* already gone: harmless */
  adcp_object_stage_drop(p, fresh);
  adcp_object_stage_drop(p, young);
  adcp_object_stage_drop(p, linked);
  char names[4][128];
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
  adcp_object_provider_free(p);
}

static void t_stage_symlinked_staging_dir(void **state) {
  (void)state;
  char root[600], outside[600];
  make_root(root, sizeof root, "stage-sym");
  make_root(outside, sizeof outside, "stage-sym-outside");
  assert_int_equal(mkdir(path_in(root, "rows"), 0700), 0);
  assert_int_equal(symlink(outside, path_in(root, STAGING)), 0);
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_error err;
  static char sentinel;
  adcp_object_stage *st = (adcp_object_stage *)&sentinel;
  assert_int_equal(adcp_object_stage_put(p, &st, (const uint8_t *)FIRST, 16, NULL, &err), ADCP_EUNSAFE_BINDING);
  assert_null(st);
  assert_non_null(strstr(err.message, "symbolic link"));
  assert_null(strstr(err.message, env.tmp)); /* never a host path */
  char names[4][128];
  assert_int_equal(staging_names(outside, names, 4), 0); /* nothing written through the link */
  struct stat sb;
  assert_int_equal(lstat(path_in(root, STAGING), &sb), 0);
  assert_true(S_ISLNK(sb.st_mode)); /* not replaced either */
  adcp_object_provider_free(p);

  /* The directory swapped for a symlink after staging: link, drop and the
   * probe's sweep refuse to act through it. */
  char root2[600], outside2[600];
  make_root(root2, sizeof root2, "stage-sym2");
  make_root(outside2, sizeof outside2, "stage-sym2-outside");
  p = make_fs(root2, "rows", NULL, NULL, 0);
  st = stage_ok(p, FIRST, 16);
  char moved[700];
  snprintf(moved, sizeof moved, "%s/moved", outside2);
  assert_int_equal(rename(path_in(root2, STAGING), moved), 0);
  assert_int_equal(symlink(moved, path_in(root2, STAGING)), 0);
  adcp_object_put_result r;
  adcp_object_info info;
  assert_int_equal(link_to(p, &r, st, "rows/k/x.jsonl", &err), ADCP_EUNSAFE_BINDING);
  assert_int_not_equal(r.outcome, ADCP_OBJECT_CREATED);
  assert_int_equal(adcp_object_head(p, &info, "rows/k/x.jsonl", NULL, &err), ADCP_ENOT_FOUND);
  adcp_object_stage_drop(p, st);
  assert_int_equal(staging_names(moved, names, 4), 1); /* the drop did not unlink through the link */
  char moved_file[900];
  snprintf(moved_file, sizeof moved_file, "%s/%s", moved, names[0]);
  set_age(moved_file, ADCP_OBJECT_STAGE_MAX_AGE_S + 3600);
  (void)adcp_object_probe(p, NULL, &err); /* whatever it reports, its sweep must not follow the link */
  assert_int_equal(staging_names(moved, names, 4), 1);
  adcp_object_provider_free(p);
}

static int stub_link_calls;

static int stub_link(adcp_object_provider *self, adcp_object_put_result *out, adcp_object_stage *stage,
                     const adcp_object_put_input *in, const adcp_object_ctx *ctx, adcp_error *err) {
  (void)self, (void)stage, (void)in, (void)ctx, (void)err;
  stub_link_calls++;
  out->outcome = ADCP_OBJECT_CREATED;
  snprintf(out->native_version, sizeof out->native_version, "stub");
  return 0;
}

/* The wrappers: without staged writes (a version-1 provider, or a missing
 * function) the port refuses; keys are checked before a provider runs. */
static void t_stage_port_checks(void **state) {
  (void)state;
  char root[600];
  make_root(root, sizeof root, "stage-port");
  adcp_object_provider *p = make_fs(root, "rows", NULL, NULL, 0);
  adcp_error err;
  adcp_object_put_result r;
  static char sentinel;
  adcp_object_stage *st = (adcp_object_stage *)&sentinel;
  assert_true(adcp_object_stage_supported(p));
  assert_false(adcp_object_stage_supported(NULL));
  p->version = 1;
  assert_false(adcp_object_stage_supported(p));
  assert_int_equal(adcp_object_stage_put(p, &st, (const uint8_t *)FIRST, 16, NULL, &err), ADCP_EINVALID_INPUT);
  assert_null(st);
  p->version = ADCP_OBJECT_PROVIDER_VERSION;
  adcp_object_stage *real = stage_ok(p, FIRST, 16);
  p->version = 1;
  assert_int_equal(link_to(p, &r, real, "rows/u/x.jsonl", &err), ADCP_EINVALID_INPUT);
  adcp_object_stage_drop(p, real); /* a no-op without staged writes: the file stays */
  char names[4][128];
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 1);
  p->version = ADCP_OBJECT_PROVIDER_VERSION;
  int (*saved)(adcp_object_provider *, adcp_object_put_result *, adcp_object_stage *, const adcp_object_put_input *,
               const adcp_object_ctx *, adcp_error *) = p->stage_link;
  p->stage_link = NULL;
  assert_false(adcp_object_stage_supported(p));
  st = (adcp_object_stage *)&sentinel;
  assert_int_equal(adcp_object_stage_put(p, &st, (const uint8_t *)FIRST, 16, NULL, &err), ADCP_EINVALID_INPUT);
  assert_null(st);
  /* the wrapper refuses bad keys and deadlines before the provider runs */
  p->stage_link = stub_link;
  adcp_object_ctx expired = {adcp_object_now_ms() - 1, NULL};
  if (expired.deadline_ms == 0) expired.deadline_ms = 1;
  const char *outside[] = {"other/x.jsonl", "rows", "rowsx/a"};
  for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
    assert_int_equal(link_to(p, &r, real, outside[i], &err), ADCP_EUNSAFE_BINDING);
  assert_int_equal(link_to(p, &r, real, "rows/../x", &err), ADCP_EINVALID_INPUT);
  adcp_object_put_input fine = {"rows/u/x.jsonl", NULL, 0, "application/x-ndjson", NULL, 0};
  assert_int_equal(adcp_object_stage_link(p, &r, real, &fine, &expired, &err), ADCP_EDEADLINE_EXCEEDED);
  assert_int_equal(stub_link_calls, 0);
  assert_int_equal(link_to(p, &r, real, "rows/u/x.jsonl", &err), 0); /* the stub is reachable */
  assert_int_equal(stub_link_calls, 1);
  p->stage_link = saved;
  /* the provider checks the key itself too (defence in depth) */
  adcp_object_put_input in = {"other/x.jsonl", NULL, 0, "application/x-ndjson", NULL, 0};
  assert_int_equal(p->stage_link(p, &r, real, &in, NULL, &err), ADCP_EUNSAFE_BINDING);
  in.key = "rows/../x";
  assert_int_equal(p->stage_link(p, &r, real, &in, NULL, &err), ADCP_EINVALID_INPUT);
  assert_int_equal(link_to(p, &r, real, "rows/u/x.jsonl", &err), 0);
  assert_int_equal(r.outcome, ADCP_OBJECT_CREATED);
  adcp_object_stage_drop(p, real);
  assert_int_equal(staging_names(path_in(root, STAGING), names, 4), 0);
  adcp_object_provider_free(p);
}

int main(void) {
  env.tmp = tu_mkdtemp();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(t_stage_files_cleaned),     cmocka_unit_test(t_stage_injected_failures),
      cmocka_unit_test(t_stage_link_faults),       cmocka_unit_test(t_stage_no_relink_after_delete),
      cmocka_unit_test(t_stage_swept_at_creation), cmocka_unit_test(t_stage_swapped_before_link),
      cmocka_unit_test(t_stage_stale_swept),       cmocka_unit_test(t_stage_symlinked_staging_dir),
      cmocka_unit_test(t_stage_port_checks),
  };
  int failed = cmocka_run_group_tests_name("filesystem staged writes", tests, NULL, NULL);
  tu_rmtree(env.tmp);
  free(env.tmp);
  return failed;
}
