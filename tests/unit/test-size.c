/* parse_byte_size: the --max-size and ENTER_DEVROOT_MAX_ROOT_SIZE grammar. */
#include "unit.h"

#include <errno.h>

#include "common/util.h"

static const struct
{
  const char *text;
  uint64_t bytes;
} good[] = {
  { "0", 0 },
  { "1", 1 },
  { "4096", 4096 },
  { "1K", 1024 },
  { "1KiB", 1024 },
  { "1KB", 1024 },
  { "512M", 512ULL << 20 },
  { "8G", 8ULL << 30 },
  { "2T", 2ULL << 40 },
  { "18446744073709551615", UINT64_MAX },
  { "16777215T", 16777215ULL << 40 },
};

static const char *const bad[] = {
  "", "-1", "+1", " 1", "1 ", "K", "1k", "1X", "1KiBx", "1Ki", "1.5G", "0x10", "1P",
  "18446744073709551616", "16777216T",
};

static void
accepts_byte_counts (void **state)
{
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
    {
      uint64_t v = 42;
      if (parse_byte_size (good[i].text, &v) < 0)
        fail_msg ("refused '%s'", good[i].text);
      if (v != good[i].bytes)
        fail_msg ("'%s' gave %llu, expected %llu", good[i].text, (unsigned long long) v,
                  (unsigned long long) good[i].bytes);
    }
}

static void
refuses_everything_else (void **state)
{
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      uint64_t v = 42;
      errno = 0;
      if (parse_byte_size (bad[i], &v) == 0)
        fail_msg ("accepted '%s' as %llu", bad[i], (unsigned long long) v);
      assert_true (errno == EINVAL || errno == ERANGE);
      assert_int_equal (v, 42); /* untouched on failure */
    }
  assert_int_equal (parse_byte_size (NULL, &(uint64_t) { 0 }), -1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (accepts_byte_counts),
    cmocka_unit_test (refuses_everything_else),
  };
  return cmocka_run_group_tests_name ("size", tests, NULL, NULL);
}
