/* The template catalogue format, the index URL precedence and relative URL resolution. */
#include <stdio.h>

#include "unit.h"

#include "store/cache/catalog.h"
#include "store/cache/userconfig.h"

#define HEX_A "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define HEX_B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static struct catalog cat;
static char *error;

static int
reset (void **state)
{
  catalog_clear (&cat);
  free (error);
  error = NULL;
  return 0;
}

static int
parse (const char *text)
{
  return catalog_parse (text, strlen (text), &cat, &error);
}

/* The text must be refused with an error starting "line LINE: " and containing NEEDLE. */
static void
assert_refused (const char *text, unsigned line, const char *needle)
{
  if (parse (text) == 0)
    fail_msg ("accepted:\n%s", text);
  char prefix[32];
  snprintf (prefix, sizeof prefix, "line %u: ", line);
  if (strncmp (error, prefix, strlen (prefix)) != 0 || strstr (error, needle) == NULL)
    fail_msg ("error '%s' does not start with '%s' or lacks '%s'", error, prefix, needle);
  assert_int_equal (cat.n_entries, 0);
}

static void
parses_the_documented_example (void **state)
{
  assert_int_equal (parse ("# comment\n"
                           "[debian-bookworm-build]\n"
                           "url = debian-bookworm-build.tar.zst\n"
                           "sha256 = " HEX_A "\n"
                           "size = 123456789\n"
                           "description = Debian 12 with build-essential, git and pkg-config\n"),
                    0);
  assert_int_equal (cat.n_entries, 1);
  const struct catalog_entry *e = catalog_find (&cat, "debian-bookworm-build");
  assert_non_null (e);
  assert_string_equal (e->url, "debian-bookworm-build.tar.zst");
  assert_string_equal (e->sha256, HEX_A);
  assert_true (e->has_size);
  assert_int_equal (e->size, 123456789);
  assert_string_equal (e->description, "Debian 12 with build-essential, git and pkg-config");
  assert_int_equal (e->line, 2);
}

static void
parses_several_templates_in_order (void **state)
{
  assert_int_equal (parse ("[a]\nurl=a.tar\nsha256=" HEX_A "\n\n[b]\nurl=https://x/b\nsha256="
                           HEX_B "\n"), 0);
  assert_int_equal (cat.n_entries, 2);
  assert_string_equal (cat.entries[0].name, "a");
  assert_string_equal (cat.entries[1].name, "b");
  assert_string_equal (cat.entries[1].url, "https://x/b");
  assert_false (cat.entries[0].has_size);
  assert_string_equal (cat.entries[0].description, "");
  assert_null (catalog_find (&cat, "c"));
}

static void
allows_comments_blank_lines_spaces_and_crlf (void **state)
{
  assert_int_equal (parse ("  # indented comment\r\n; semicolon comment\r\n\r\n"
                           "[ spaced ]\r\n\turl\t=  u.tar  \r\nsha256 =" HEX_A "\r\n"), 0);
  assert_int_equal (cat.n_entries, 1);
  assert_string_equal (cat.entries[0].name, "spaced");
  assert_string_equal (cat.entries[0].url, "u.tar");
  assert_string_equal (cat.entries[0].sha256, HEX_A);
}

static void
keeps_equals_signs_in_values (void **state)
{
  assert_int_equal (parse ("[a]\nurl = https://h/x?y=1&z=2\nsha256 = " HEX_A "\n"), 0);
  assert_string_equal (cat.entries[0].url, "https://h/x?y=1&z=2");
}

static void
ignores_unknown_keys (void **state)
{
  assert_int_equal (parse ("[a]\narch = amd64\nurl = a\nfuture-key = x = y\nsha256 = " HEX_A "\n"),
                    0);
  assert_int_equal (cat.n_entries, 1);
}

static void
an_empty_catalogue_has_no_templates (void **state)
{
  assert_int_equal (parse ("# nothing yet\n"), 0);
  assert_int_equal (cat.n_entries, 0);
  assert_int_equal (parse (""), 0);
  assert_int_equal (cat.n_entries, 0);
}

static void
refuses_a_missing_url (void **state)
{
  assert_refused ("[a]\nurl = a\nsha256 = " HEX_A "\n\n[b]\nsha256 = " HEX_A "\n", 5,
                  "template 'b' has no url");
}

static void
refuses_a_missing_sha256 (void **state)
{
  assert_refused ("# x\n[a]\nurl = a\n", 2, "template 'a' has no sha256");
}

static void
refuses_bad_digests (void **state)
{
  const char *bad[] = {
    HEX_A "0",                                                   /* 65 digits */
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde", /* 63 */
    "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", /* uppercase */
    "0123456789abcdeg0123456789abcdef0123456789abcdef0123456789abcdef", /* not hex */
    "",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    {
      char text[256];
      snprintf (text, sizeof text, "[a]\nurl = a\nsha256 = %s\n", bad[i]);
      assert_refused (text, 3, "bad sha256");
      reset (state);
    }
}

static void
refuses_a_bad_size (void **state)
{
  assert_refused ("[a]\nurl=a\nsha256=" HEX_A "\nsize = 12k\n", 4, "bad size '12k'");
  reset (state);
  assert_refused ("[a]\nurl=a\nsha256=" HEX_A "\nsize = -1\n", 4, "bad size");
  reset (state);
  assert_refused ("[a]\nurl=a\nsha256=" HEX_A "\nsize = 99999999999999999999999\n", 4, "bad size");
}

static void
refuses_a_duplicate_name (void **state)
{
  assert_refused ("[a]\nurl=a\nsha256=" HEX_A "\n[b]\nurl=b\nsha256=" HEX_A "\n[a]\nurl=c\nsha256="
                  HEX_B "\n", 7, "duplicate template 'a' (first defined on line 1)");
}

static void
refuses_a_key_given_twice (void **state)
{
  assert_refused ("[a]\nurl = a\nurl = b\nsha256 = " HEX_A "\n", 3, "duplicate key 'url'");
}

static void
refuses_malformed_lines (void **state)
{
  assert_refused ("[a]\nurl = a\njust words\n", 3, "malformed line");
  reset (state);
  assert_refused ("[a\n", 1, "malformed section header");
  reset (state);
  assert_refused ("[a]\n= value\n", 2, "malformed line");
  reset (state);
  assert_refused ("[a]\nur l = x\n", 2, "malformed line");
  reset (state);
  assert_refused ("url = a\n", 1, "outside any [template] section");
  reset (state);
  assert_refused ("[../etc]\nurl = a\nsha256 = " HEX_A "\n", 1, "invalid template name");
  reset (state);
  assert_refused ("[]\n", 1, "invalid template name");
}

static void
refuses_nul_bytes (void **state)
{
  static const char text[] = "[a]\nurl = a\0b\nsha256 = " HEX_A "\n";
  assert_int_equal (catalog_parse (text, sizeof text - 1, &cat, &error), -1);
  assert_non_null (strstr (error, "line 2: "));
}

static void
error_messages_never_echo_control_characters (void **state)
{
  assert_refused ("[a]\nurl = a\nsha256 = \033[2J" HEX_A "\n", 3, "bad sha256 '?[2J");
  assert_null (strchr (error, '\033'));
}

static void
printable_copy_replaces_everything_but_printable_ascii (void **state)
{
  char *s = printable_copy ("ok \033]0;title\007 caf\xc3\xa9\t!");
  assert_string_equal (s, "ok ?]0;title? caf\?\?\?!");
  free (s);
}

static void
resolves_relative_urls_against_the_catalogue (void **state)
{
  static const struct { const char *base, *ref, *want; } cases[] = {
    { "https://h.example/t/index", "a.tar.zst", "https://h.example/t/a.tar.zst" },
    { "https://h.example/t/index", "../b.tar.zst", "https://h.example/b.tar.zst" },
    { "https://h.example/t/index", "/c.tar.zst", "https://h.example/c.tar.zst" },
    { "https://h.example/t/index", "http://other/d", "http://other/d" },
    { "file:///srv/templates/index", "e.tar.zst", "file:///srv/templates/e.tar.zst" },
    { "http://127.0.0.1:8080/x/index?v=1", "f.tar", "http://127.0.0.1:8080/x/f.tar" },
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      char *out = NULL, *err = NULL;
      if (url_resolve (cases[i].base, cases[i].ref, &out, &err) < 0)
        fail_msg ("%s + %s: %s", cases[i].base, cases[i].ref, err);
      assert_string_equal (out, cases[i].want);
      free (out);
    }
}

static void
refuses_an_invalid_base_url (void **state)
{
  char *out = NULL, *err = NULL;
  assert_int_equal (url_resolve ("not a url", "a.tar", &out, &err), -1);
  assert_non_null (strstr (err, "invalid URL 'not a url'"));
  free (err);
}

static void
index_precedence_is_option_env_file_built_in (void **state)
{
  struct index_sources s = { .built_in = "B", .config_file = "F", .env = "E", .option = "O" };
  assert_string_equal (config_pick_index (&s), "O");
  s.option = NULL;
  assert_string_equal (config_pick_index (&s), "E");
  s.env = "";
  assert_string_equal (config_pick_index (&s), "F");
  s.config_file = NULL;
  assert_string_equal (config_pick_index (&s), "B");
  s.built_in = "";
  assert_null (config_pick_index (&s));
}

static void
config_file_gives_the_last_index_line (void **state)
{
  char *index = NULL, *err = NULL;
  assert_int_equal (config_parse_value ("# c\n\nother = 1\nindex = http://a/\n  index=  https://b/i  \n",
                                        "index", &index, &err), 0);
  assert_string_equal (index, "https://b/i");
  free (index);
  assert_int_equal (config_parse_value ("# nothing\n", "index", &index, &err), 0);
  assert_null (index);
  assert_int_equal (config_parse_value ("\n\nindex\n", "index", &index, &err), -1);
  assert_string_equal (err, "line 3: malformed line (expected 'key = value')");
  free (err);
}

static void
config_file_gives_each_key_its_own_value (void **state)
{
  char *value = NULL, *err = NULL;
  const char *text = "index = http://a/\ncache = /shared/cache\n";
  assert_int_equal (config_parse_value (text, "cache", &value, &err), 0);
  assert_string_equal (value, "/shared/cache");
  free (value);
  assert_int_equal (config_parse_value (text, "index", &value, &err), 0);
  assert_string_equal (value, "http://a/");
  free (value);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_teardown (parses_the_documented_example, reset),
    cmocka_unit_test_teardown (parses_several_templates_in_order, reset),
    cmocka_unit_test_teardown (allows_comments_blank_lines_spaces_and_crlf, reset),
    cmocka_unit_test_teardown (keeps_equals_signs_in_values, reset),
    cmocka_unit_test_teardown (ignores_unknown_keys, reset),
    cmocka_unit_test_teardown (an_empty_catalogue_has_no_templates, reset),
    cmocka_unit_test_teardown (refuses_a_missing_url, reset),
    cmocka_unit_test_teardown (refuses_a_missing_sha256, reset),
    cmocka_unit_test_teardown (refuses_bad_digests, reset),
    cmocka_unit_test_teardown (refuses_a_bad_size, reset),
    cmocka_unit_test_teardown (refuses_a_duplicate_name, reset),
    cmocka_unit_test_teardown (refuses_a_key_given_twice, reset),
    cmocka_unit_test_teardown (refuses_malformed_lines, reset),
    cmocka_unit_test_teardown (refuses_nul_bytes, reset),
    cmocka_unit_test_teardown (error_messages_never_echo_control_characters, reset),
    cmocka_unit_test (printable_copy_replaces_everything_but_printable_ascii),
    cmocka_unit_test (resolves_relative_urls_against_the_catalogue),
    cmocka_unit_test (refuses_an_invalid_base_url),
    cmocka_unit_test (index_precedence_is_option_env_file_built_in),
    cmocka_unit_test (config_file_gives_the_last_index_line),
    cmocka_unit_test (config_file_gives_each_key_its_own_value),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
