/* tests/support/support_fs.h — room tests/support (the test library):
 * filesystem probes over the buckets the suites write. */
#ifndef ADCP_TEST_SUPPORT_FS_H
#define ADCP_TEST_SUPPORT_FS_H

/* Object files (a name containing ".jsonl", at any depth) under dir; 0 when
 * dir does not exist. */
int tu_count_jsonl(const char *dir);

#endif
