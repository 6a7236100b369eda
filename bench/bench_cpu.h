/* bench/bench_cpu.h — CPU clocks the benchmarks share (bench/ only, never the
 * library): this process's CPU seconds, and a local PostgreSQL backend's. */
#ifndef ADCP_BENCH_CPU_H
#define ADCP_BENCH_CPU_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "adcp/sql.h"

/* CPU seconds of every thread of this process. */
static inline double bench_cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The kernel's share of this process's CPU seconds (every thread's stime).
 * Kept beside the total because on a virtual machine whose host takes back
 * freed guest memory, the first write into each such page (a new page-cache
 * page) costs several times what it does elsewhere (docs/performance.md). */
static inline double bench_cpu_sys_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* CPU seconds of process pid from /proc/PID/stat (clock-tick resolution):
 * *user and *sys its own, *reaped and *reaped_sys (user + kernel) those of
 * the children it waited for. -1 when the process is gone or unreadable. */
static inline int bench_proc_cpu(double *user, double *sys, double *reaped, double *reaped_sys, long pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[1024];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  unsigned long long ut = 0, st = 0;
  long long cut = 0, cst = 0;
  /* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime */
  if (!p || sscanf(p + 2, "%*c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu %lld %lld", &ut, &st, &cut, &cst) != 4)
    return -1;
  double hz = (double)sysconf(_SC_CLK_TCK);
  *user = (double)ut / hz, *sys = (double)st / hz;
  *reaped = (double)cut / hz, *reaped_sys = (double)cst / hz;
  return 0;
}

/* CPU seconds of a PostgreSQL backend on this machine (user + kernel),
 * *sys_s the kernel's alone (may be NULL); -1 for SQLite or a remote server. */
static inline double bench_backend_cpu_split(double *sys_s, adcp_sql_conn *c) {
  if (sys_s) *sys_s = -1;
  if (adcp_sql_dialect_of(c) != ADCP_SQL_POSTGRES) return -1;
  char pid[24];
  int found = 0;
  adcp_error err = {0};
  if (adcp_sql_query_text(pid, sizeof pid, &found, c, "SELECT pg_backend_pid()::text", NULL, 0, &err) || !found)
    return -1;
  double user, sys, reaped, reaped_sys;
  if (bench_proc_cpu(&user, &sys, &reaped, &reaped_sys, strtol(pid, NULL, 10))) return -1;
  if (sys_s) *sys_s = sys;
  return user + sys;
}

static inline double bench_backend_cpu(adcp_sql_conn *c) { return bench_backend_cpu_split(NULL, c); }

#endif
