/* NAME validation: [A-Za-z0-9][A-Za-z0-9._-]{0,63}, nothing else. */
#include "unit.h"

#include "common/name.h"

static const char *const good_names[] = {
  "dev", "a", "Z", "0", "debian-12", "ci_build.2", "x.y.z", "a..b", "a-", "A_", "9.",
  /* exactly 64 characters */
  "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijkl",
};

static const char *const bad_names[] = {
  "", ".", "..", ".hidden", "-dev", "_dev", "a/b", "/abs", "dev/", "a b", "a\tb", "dév",
  "a:b", "a*", "a\\b", "a\nb", "~", "$HOME",
  /* 65 characters */
  "abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklm",
};

static void
accepts_every_good_name (void **state)
{
  for (size_t i = 0; i < sizeof good_names / sizeof good_names[0]; i++)
    {
      if (!name_is_valid (good_names[i]))
        fail_msg ("refused good name '%s'", good_names[i]);
    }
}

static void
refuses_every_bad_name (void **state)
{
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++)
    {
      if (name_is_valid (bad_names[i]))
        fail_msg ("accepted bad name '%s'", bad_names[i]);
    }
}

static void
refuses_null (void **state)
{
  assert_false (name_is_valid (NULL));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (accepts_every_good_name),
    cmocka_unit_test (refuses_every_bad_name),
    cmocka_unit_test (refuses_null),
  };
  return cmocka_run_group_tests_name ("name", tests, NULL, NULL);
}
