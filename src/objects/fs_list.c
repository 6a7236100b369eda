/* objects/fs_list.c — room objects, filesystem provider: the listing of keys
 * under a prefix in byte order, page by page. May touch: directories under the
 * owned prefix, read-only, opened O_NOFOLLOW. */
#define _GNU_SOURCE /* statx, getrandom */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "adcp/objects.h"
#include "objects/fs_internal.h"

/* ---- list ----------------------------------------------------------------------- */

typedef struct list_state {
  const char *prefix; /* string prefix every key must start with */
  const char *token;  /* keys must sort strictly after it (NULL = none) */
  size_t page_size;
  adcp_object_list_page *page;
  size_t cap;
  int more; /* a key beyond the page exists */
  const adcp_object_ctx *ctx;
  adcp_error *err;
} list_state;

typedef struct dent {
  char *sortkey; /* name, plus '/' for directories: makes the walk yield byte-sorted keys */
  int is_dir;
} dent;

static int dent_cmp(const void *a, const void *b) {
  return strcmp(((const dent *)a)->sortkey, ((const dent *)b)->sortkey);
}

static int valid_segment(const char *name) {
  size_t n = strlen(name);
  if (n == 0 || (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.')) return 0;
  return adcp_object_key_is_valid(name, n);
}

static int add_entry(list_state *ls, int dirfd, const char *name, const char *key) {
  int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == ENOENT || errno == ELOOP ? 0 : adcp_objects__fs_fail(ls->err, "list open", key);
  fs_stat st;
  int ok = adcp_objects__fs_stat_fd(fd, &st) == 0;
  close(fd);
  if (!ok) return adcp_objects__fs_fail(ls->err, "list stat", key);
  if (!st.regular) return 0;
  adcp_object_list_page *pg = ls->page;
  if (pg->n_entries == ls->cap) {
    size_t cap = ls->cap ? ls->cap * 2 : 16;
    adcp_object_entry *e = realloc(pg->entries, cap * sizeof *e);
    if (!e) return adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
    pg->entries = e;
    ls->cap = cap;
  }
  adcp_object_entry *e = &pg->entries[pg->n_entries];
  e->key = strdup(key);
  e->native_version = strdup(st.version);
  e->size = st.size;
  e->last_modified = st.mtime_ms;
  if (!e->key || !e->native_version) {
    free(e->key), free(e->native_version);
    return adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
  }
  pg->n_entries++;
  return 0;
}

/* Depth-first walk of dirfd whose keys start with path (ending in '/'). Takes ownership of dirfd. */
static int walk(list_state *ls, int dirfd, adcp_buf *path) {
  int rc = adcp_object_ctx_check(ls->ctx, ls->err);
  if (rc) {
    close(dirfd);
    return rc;
  }
  DIR *d = fdopendir(dirfd);
  if (!d) {
    close(dirfd);
    return adcp_objects__fs_fail(ls->err, "list directory", ls->prefix);
  }
  dent *ents = NULL;
  size_t n = 0, cap = 0;
  for (struct dirent *de; (de = readdir(d)) != NULL;) {
    if (!valid_segment(de->d_name)) continue; /* temp files, dot entries, foreign names */
    struct stat sb;
    if (fstatat(dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISDIR(sb.st_mode) && !S_ISREG(sb.st_mode)) continue; /* symlinks are never objects */
    if (n == cap) {
      cap = cap ? cap * 2 : 32;
      dent *g = realloc(ents, cap * sizeof *g);
      if (!g) {
        rc = adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
        break;
      }
      ents = g;
    }
    size_t nl = strlen(de->d_name);
    ents[n].is_dir = S_ISDIR(sb.st_mode);
    ents[n].sortkey = malloc(nl + 2);
    if (!ents[n].sortkey) {
      rc = adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
      break;
    }
    memcpy(ents[n].sortkey, de->d_name, nl);
    ents[n].sortkey[nl] = '/';
    ents[n].sortkey[nl + (ents[n].is_dir ? 1u : 0u)] = '\0';
    n++;
  }
  if (!rc && n) qsort(ents, n, sizeof *ents, dent_cmp); /* ents is NULL for an empty directory */
  size_t base = path->len, plen = strlen(ls->prefix);
  for (size_t i = 0; i < n && !rc && !ls->more; i++) {
    path->len = base;
    if (adcp_buf_append_str(path, ents[i].sortkey) || adcp_buf_cstr(path)) {
      rc = adcp_error_set(ls->err, ADCP_ENOMEM, "out of memory listing objects");
      break;
    }
    const char *full = (const char *)path->data;
    size_t fl = path->len;
    if (ents[i].is_dir) {
      /* Descend only if keys below can match the prefix and can sort after the token. */
      int prefix_ok = fl >= plen ? memcmp(full, ls->prefix, plen) == 0 : memcmp(ls->prefix, full, fl) == 0;
      if (!prefix_ok) continue;
      if (ls->token && strcmp(full, ls->token) < 0 && strncmp(ls->token, full, fl) != 0) continue;
      ents[i].sortkey[strlen(ents[i].sortkey) - 1] = '\0';
      int sub = openat(dirfd, ents[i].sortkey, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub < 0) continue; /* removed or replaced meanwhile */
      rc = walk(ls, sub, path);
    } else {
      if (fl < plen || memcmp(full, ls->prefix, plen) != 0) continue;
      if (fl > ADCP_OBJECT_KEY_MAX) continue;
      if (ls->token && strcmp(full, ls->token) <= 0) continue;
      if (ls->page->n_entries == ls->page_size) {
        ls->more = 1;
        break;
      }
      rc = add_entry(ls, dirfd, ents[i].sortkey, full);
    }
  }
  path->len = base;
  for (size_t i = 0; i < n; i++) free(ents[i].sortkey);
  free(ents);
  closedir(d);
  return rc;
}

int adcp_objects__fs_list(adcp_object_provider *self, adcp_object_list_page *out, const char *prefix, const char *token,
                          size_t page_size, const adcp_object_ctx *ctx, adcp_error *err) {
  fs_provider *fs = (fs_provider *)self;
  memset(out, 0, sizeof *out);
  size_t pl = strlen(fs->prefix), n = strlen(prefix);
  if (n <= pl || memcmp(prefix, fs->prefix, pl) != 0 || prefix[pl] != '/')
    return adcp_error_set(err, ADCP_EUNSAFE_BINDING, "list prefix lies outside the owned prefix");
  if (token && !adcp_object_key_is_valid(token, strlen(token)))
    return adcp_error_set(err, ADCP_EINVALID_INPUT, "list page token is not valid");
  int rc = adcp_object_ctx_check(ctx, err);
  if (rc) return rc;
  /* Start at the deepest whole directory named by the prefix. */
  const char *last = strrchr(prefix, '/');
  size_t dir_len = (size_t)(last - prefix) + 1; /* includes the '/' */
  adcp_buf path;
  adcp_buf_init(&path);
  if (adcp_buf_append(&path, prefix, dir_len) || adcp_buf_append_str(&path, "x") || adcp_buf_cstr(&path))
    return adcp_error_set(err, ADCP_ENOMEM, "out of memory listing objects");
  int rootfd, dirfd;
  const char *leaf;
  if ((rc = adcp_objects__fs_open_root(fs, &rootfd, err))) {
    adcp_buf_free(&path);
    return rc;
  }
  /* "<dir>/x" makes adcp_objects__fs_open_parent return <dir> itself. */
  rc = adcp_objects__fs_open_parent(rootfd, (const char *)path.data, 0, &dirfd, &leaf, err);
  close(rootfd);
  if (rc == ADCP_ENOT_FOUND) {
    adcp_buf_free(&path);
    return 0; /* nothing under the prefix yet */
  }
  if (rc) {
    adcp_buf_free(&path);
    return rc;
  }
  path.len = dir_len;
  list_state ls = {prefix, token, page_size, out, 0, 0, ctx, err};
  rc = walk(&ls, dirfd, &path);
  adcp_buf_free(&path);
  if (!rc && ls.more && out->n_entries) {
    out->next_token = strdup(out->entries[out->n_entries - 1].key);
    if (!out->next_token) rc = adcp_error_set(err, ADCP_ENOMEM, "out of memory listing objects");
  }
  return rc;
}
