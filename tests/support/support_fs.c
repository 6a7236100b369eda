/* tests/support/support_fs.c — room tests/support (the test library):
 * filesystem probes (see support_fs.h). */
#include "support/support_fs.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

int tu_count_jsonl(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return 0;
  int n = 0;
  struct dirent *de;
  while ((de = readdir(d))) {
    if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
    char p[4096];
    snprintf(p, sizeof p, "%.2000s/%.255s", dir, de->d_name);
    struct stat st;
    if (lstat(p, &st)) continue;
    if (S_ISDIR(st.st_mode)) n += tu_count_jsonl(p);
    else if (strstr(de->d_name, ".jsonl")) n++;
  }
  closedir(d);
  return n;
}
