/* tests/core/test_uuid.c — room core: the one UUID and random-token
 * implementation (core/uuid.h): the ledger's owner UUIDs, the fence's owner
 * tokens (version-4 bytes as hex), the issue outbox's lease tokens (plain
 * random bytes) and the fence record's check of installation UUIDs. */
#include "testutil.h"

#include <string.h>

#include "core/uuid.h"

static void v4_text(void **state) {
  (void)state;
  char a[37], b[37];
  adcp_error e = {0};
  assert_int_equal(adcp_core_uuid_v4(a, "an owner token", &e), 0);
  assert_int_equal(adcp_core_uuid_v4(b, "an owner token", &e), 0);
  assert_int_equal(strlen(a), 36);
  assert_true(adcp_core_uuid_is_valid(a, 36));
  assert_int_equal(a[14], '4');
  assert_non_null(strchr("89ab", a[19]));
  assert_string_not_equal(a, b);
  const uint8_t bytes[16] = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                             0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff};
  adcp_core_uuid_format(a, bytes);
  assert_string_equal(a, "00112233-4455-6677-8899-aabbccddeeff");
}

static void random_bytes(void **state) {
  (void)state;
  adcp_error e = {0};
  int plain_not_v4 = 0;
  for (int i = 0; i < 64; i++) {
    uint8_t v4[16], plain[16];
    assert_int_equal(adcp_core_uuid_random(v4, ADCP_CORE_UUID_V4, "an owner token", &e), 0);
    assert_int_equal(v4[6] >> 4, 4);
    assert_int_equal(v4[8] >> 6, 2);
    assert_int_equal(adcp_core_uuid_random(plain, 0, "a lease token", &e), 0);
    if ((plain[6] >> 4) != 4 || (plain[8] >> 6) != 2) plain_not_v4 = 1;
  }
  assert_true(plain_not_v4); /* without the flag the bytes are left as drawn (odds of failing: 2^-384) */
}

static void validation(void **state) {
  (void)state;
  const char *ok[] = {"00000000-0000-0000-0000-000000000000", "0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d",
                      "ffffffff-ffff-1fff-ffff-ffffffffffff"};
  for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) assert_true(adcp_core_uuid_is_valid(ok[i], strlen(ok[i])));
  const char *bad[] = {"0A1B2C3D-4E5F-4A7B-8C9D-0E1F2A3B4C5D",  "0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5",
                       "0a1b2c3d-4e5f-4a7b-8c9d-0e1f2a3b4c5d0", "0a1b2c3d4e5f-4a7b-8c9d-0e1f2a3b4c5d-",
                       "0a1b2c3g-4e5f-4a7b-8c9d-0e1f2a3b4c5d",  "0a1b2c3d-4e5f-4a7b-8c9d_0e1f2a3b4c5d",
                       "0a1b2c3d4e5f4a7b8c9d0e1f2a3b4c5d",      ""};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) assert_false(adcp_core_uuid_is_valid(bad[i], strlen(bad[i])));
  /* n is the length checked, not strlen: a prefix of valid text is refused. */
  assert_false(adcp_core_uuid_is_valid(ok[1], 35));
  assert_false(adcp_core_uuid_is_valid(NULL, 36));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(v4_text),
      cmocka_unit_test(random_bytes),
      cmocka_unit_test(validation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
