/* The user's entry in a root's /etc/passwd: found by uid, fields as written. */
#include "unit.h"

#include "common/account.h"

static const char passwd[] =
  "root:x:0:0:root:/root:/bin/sh\n"
  "# not an entry\n"
  "\n"
  "short:x:7\n"
  "dev:x:1000:1000:Dev User,,,:/home/dev:/bin/bash\n"
  "other:x:10000:10000::/home/other:\n"
  "bad:x:12a:1::/bad:/bin/sh\n";

static void
finds_the_entry_of_the_uid (void **state)
{
  struct account a;
  assert_int_equal (account_parse_passwd (passwd, 1000, &a), 0);
  assert_string_equal (a.name, "dev");
  assert_string_equal (a.home, "/home/dev");
  assert_string_equal (a.shell, "/bin/bash");
  account_clear (&a);
}

static void
uid_prefix_does_not_match (void **state)
{
  struct account a;
  assert_int_equal (account_parse_passwd (passwd, 100, &a), -1);
  assert_int_equal (account_parse_passwd (passwd, 12, &a), -1);
  assert_null (a.name);
}

static void
empty_shell_is_kept_empty (void **state)
{
  struct account a;
  assert_int_equal (account_parse_passwd (passwd, 10000, &a), 0);
  assert_string_equal (a.shell, "");
  account_clear (&a);
}

static void
short_lines_are_skipped (void **state)
{
  struct account a;
  assert_int_equal (account_parse_passwd (passwd, 7, &a), -1);
  assert_int_equal (account_parse_passwd ("", 0, &a), -1);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (finds_the_entry_of_the_uid),
    cmocka_unit_test (uid_prefix_does_not_match),
    cmocka_unit_test (empty_shell_is_kept_empty),
    cmocka_unit_test (short_lines_are_skipped),
  };
  return cmocka_run_group_tests_name ("account", tests, NULL, NULL);
}
