/* tests/cli/test_cli_util.c — the CLI helpers of src/cli/util.c, compiled in
 * here: the strict number parser (sign, empty, junk, overflow), text escaping
 * of control characters and invalid UTF-8, capped whole-file reads (a FIFO, a
 * directory and a device are refused without blocking; one byte over the cap is
 * refused naming the input and the cap) and the JSONL reader (pipes allowed
 * without blocking, a directory refused, the per-line cap naming the line). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/cli/util.c"
#include "../../src/cli/log_sink.c" /* util.c reports refusals through it */
#include "testutil.h"

static void numbers(void **state) {
  (void)state;
  uint64_t v = 7;
  assert_int_equal(adcp_cli_parse_u64(&v, "0"), 0);
  assert_int_equal(v, 0);
  assert_int_equal(adcp_cli_parse_u64(&v, "18446744073709551615"), 0);
  assert_true(v == UINT64_MAX);
  const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1x", "18446744073709551616", "99999999999999999999", "0x10", NULL};
  for (size_t i = 0; bad[i]; i++) {
    v = 42;
    if (adcp_cli_parse_u64(&v, bad[i]) != -1) fail_msg("'%s' was accepted", bad[i]);
    assert_int_equal(v, 42);
  }
  assert_int_equal(adcp_cli_parse_u64(&v, NULL), -1);
}

static void escaping(void **state) {
  (void)state;
  char b[64];
  assert_string_equal(adcp_cli_escape(b, sizeof b, "plain id_1"), "plain id_1");
  assert_string_equal(adcp_cli_escape(b, sizeof b, "a\x1b[31mb"), "a\\x1b[31mb");
  assert_string_equal(adcp_cli_escape(b, sizeof b, "nl\nx\r\t\x7f"), "nl\\x0ax\\x0d\\x09\\x7f");
  assert_string_equal(adcp_cli_escape(b, sizeof b, "back\\slash"), "back\\\\slash");
  assert_string_equal(adcp_cli_escape(b, sizeof b, "caf\xc3\xa9"), "caf\xc3\xa9");   /* valid UTF-8 kept */
  assert_string_equal(adcp_cli_escape(b, sizeof b, "bad\xff\xc3"), "bad\\xff\\xc3"); /* invalid bytes escaped */
  assert_string_equal(adcp_cli_escape(b, sizeof b, "c1\xc2\x9b"), "c1\\x9b");        /* C1 control (CSI) */
  char small[8];
  adcp_cli_escape(small, sizeof small, "abcdefghijkl");
  assert_string_equal(small, "abcd...");
  assert_true(strlen(small) < sizeof small);
}

static void capped_reads(void **state) {
  (void)state;
  char *dir = tu_mkdtemp();
  char path[600], fifo[600];
  snprintf(path, sizeof path, "%s/f", dir);
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  adcp_buf b;
  adcp_buf_init(&b);
  adcp_error err = {0};
  tu_write_file(path, "0123456789", 10);
  assert_int_equal(adcp_cli_read_file(&b, path, 10, "the test file", &err), 0);
  assert_int_equal(b.len, 10);
  adcp_buf_reset(&b);
  assert_int_equal(adcp_cli_read_file(&b, path, 9, "the test file", &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "the test file is larger than the limit of 9 bytes"));
  assert_true(b.len <= 10);
  /* A FIFO with no writer would block a plain open(); it is refused at once. */
  assert_int_equal(mkfifo(fifo, 0600), 0);
  adcp_buf_reset(&b);
  assert_int_equal(adcp_cli_read_file(&b, fifo, 100, "--totals file", &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "not a regular file"));
  assert_int_equal(adcp_cli_read_file(&b, dir, 100, "--totals file", &err), ADCP_EINVALID_INPUT);
  assert_int_equal(adcp_cli_read_file(&b, "/dev/zero", 100, "--totals file", &err), ADCP_EINVALID_INPUT);
  /* O_NOFOLLOW: a symbolic link is refused when asked. */
  char link[600];
  snprintf(link, sizeof link, "%s/link", dir);
  assert_int_equal(symlink(path, link), 0);
  assert_true(adcp_cli_open_regular(link, 1, "chunk file", &err) < 0);
  int fd = adcp_cli_open_regular(link, 0, "chunk file", &err);
  assert_true(fd >= 0);
  close(fd);

  /* Lines: the cap names the line. */
  adcp_buf big;
  adcp_buf_init(&big);
  adcp_buf_append_str(&big, "{\"a\":1}\n{\"b\":\"");
  for (int i = 0; i < 3000; i++) adcp_buf_append_byte(&big, 'x');
  adcp_buf_append_str(&big, "\"}\n");
  tu_write_file(path, big.data, big.len);
  adcp_cli_lines r;
  assert_int_equal(adcp_cli_lines_open(&r, path, &err), 0);
  r.max_line = 1000;
  const char *line;
  size_t len;
  assert_int_equal(adcp_cli_lines_next(&r, &line, &len, &err), 1);
  assert_int_equal(len, 7);
  assert_int_equal(adcp_cli_lines_next(&r, &line, &len, &err), ADCP_EINVALID_INPUT);
  assert_non_null(strstr(err.message, "input line 2 is longer than the limit of 1000 bytes"));
  adcp_cli_lines_close(&r);
  /* Line input may be a pipe (`commit <(gen)`); with no writer it is empty, never a hang. */
  assert_int_equal(adcp_cli_lines_open(&r, fifo, &err), 0);
  assert_int_equal(adcp_cli_lines_next(&r, &line, &len, &err), 0);
  adcp_cli_lines_close(&r);
  assert_int_equal(adcp_cli_lines_open(&r, dir, &err), ADCP_EINVALID_INPUT);
  adcp_cli_lines_close(&r);
  assert_int_equal(ADCP_CLI_MAX_ROW_LINE_BYTES, 16u << 20);
  adcp_buf_free(&big);
  adcp_buf_free(&b);
  tu_rmtree(dir);
  free(dir);
}

/* The README exit-code table. */
static void exit_codes(void **state) {
  (void)state;
  const struct {
    int code, exit_code;
  } t[] = {
      {ADCP_OK, 0},
      {ADCP_EINVALID_INPUT, 2},
      {ADCP_EINVALID_ROW, 2},
      {ADCP_ECONTENT_CONFLICT, 2},
      {ADCP_ECONFLICT, 2},
      {ADCP_EROWS_INTEGRITY_FAILED, 3},
      {ADCP_EROWS_UNAVAILABLE, 3},
      {ADCP_EROWS_EXPIRED, 3},
      {ADCP_EMANIFEST_MISMATCH, 3},
      {ADCP_ECHUNK_INTEGRITY_FAILED, 3},
      {ADCP_EENVELOPE_INTEGRITY_FAILED, 3},
      {ADCP_ESTORAGE, 4},
      {ADCP_EREPORTING_SCHEMA_BEHIND, 4},
      {ADCP_EREPORTING_STORAGE_NOT_DURABLE, 4},
      {ADCP_EUNSAFE_BINDING, 4},
      {ADCP_ESTATE_UNAVAILABLE, 4},
      {ADCP_EPROVIDER_UNAVAILABLE, 4},
      {ADCP_ESCHEMA_UNREADY, 4},
      {ADCP_EREFERENCE_NOT_FOUND, 5},
      {ADCP_EIO, 1},
  };
  for (size_t i = 0; i < sizeof t / sizeof *t; i++)
    if (adcp_cli_exit_for(t[i].code) != t[i].exit_code)
      fail_msg("%s: exit %d, want %d", adcp_error_code_name(t[i].code), adcp_cli_exit_for(t[i].code), t[i].exit_code);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(numbers),
      cmocka_unit_test(exit_codes),
      cmocka_unit_test(escaping),
      cmocka_unit_test(capped_reads),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
