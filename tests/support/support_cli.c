/* tests/support/support_cli.c — room tests/support (the test library):
 * running the CLI and the CLI test context (support_cli.h, support_cx.h). */
#include "support/support_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/support_cx.h"

void cx_init(cx *x, void **state) {
  memset(x, 0, sizeof *x);
  x->f = *state;
  x->dir = tu_mkdtemp();
  adcp_buf_init(&x->out), adcp_buf_init(&x->err);
}

void cx_free(cx *x) {
  adcp_buf_free(&x->out), adcp_buf_free(&x->err);
  tu_rmtree(x->dir);
  free(x->dir);
}

int tu_cli_dbv(const char *scratch, const char *url, const char *cfg, const char *in, adcp_buf *out, adcp_buf *err,
               const char *fmt, va_list ap) {
  adcp_buf full;
  adcp_buf_init(&full);
  if (url) adcp_buf_printf(&full, "--db '%s' ", url);
  if (cfg) adcp_buf_printf(&full, "--config '%s' ", cfg);
  va_list again;
  va_copy(again, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  assert_true(n >= 0);
  adcp_buf_reserve(&full, (size_t)n + 1);
  vsnprintf((char *)full.data + full.len, (size_t)n + 1, fmt, again);
  va_end(again);
  full.len += (size_t)n;
  adcp_buf_cstr(&full);
  int st = tu_cli(scratch, (const char *)full.data, in, out, err);
  adcp_buf_free(&full);
  return st;
}

int tu_cli_db(const char *scratch, const char *url, const char *cfg, const char *in, adcp_buf *out, adcp_buf *err,
              const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = tu_cli_dbv(scratch, url, cfg, in, out, err, fmt, ap);
  va_end(ap);
  return st;
}

int tu_cli_run_db(tu_cli_run *r, const char *scratch, const char *url, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  r->rc = tu_cli_dbv(scratch, url, NULL, NULL, &r->out, &r->err, fmt, ap);
  va_end(ap);
  return r->rc;
}

int tu_scratch_setup(void **state) {
  tu_scratch *s = calloc(1, sizeof *s);
  assert_non_null(s);
  s->dir = tu_mkdtemp();
  snprintf(s->db, sizeof s->db, "sqlite:%s/ledger.db", s->dir);
  *state = s;
  return 0;
}

int tu_scratch_teardown(void **state) {
  tu_scratch *s = *state;
  tu_rmtree(s->dir);
  free(s->dir);
  free(s);
  return 0;
}

int tu_scratch_cli(const tu_scratch *s, const char *args, const char *in, adcp_buf *out, adcp_buf *err) {
  return tu_cli_db(s->dir, s->db, NULL, in, out, err, "%s", args);
}

static int run_on(cx *x, const char *in, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
static int run_on(cx *x, const char *in, const char *fmt, va_list ap) {
  return tu_cli_dbv(x->dir, x->f->url, x->cfg[0] ? x->cfg : NULL, in, &x->out, &x->err, fmt, ap);
}

int run(cx *x, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = run_on(x, NULL, fmt, ap);
  va_end(ap);
  return st;
}

int run_stdin(cx *x, const char *in, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int st = run_on(x, in, fmt, ap);
  va_end(ap);
  return st;
}

const char *out_of(cx *x) { return x->out.data ? (const char *)x->out.data : ""; }

const char *err_of(cx *x) { return x->err.data ? (const char *)x->err.data : ""; }
