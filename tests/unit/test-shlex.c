/* ci/shlex.c: the Actions runner's step arguments split back into words as the reference
 * docker hook's shlex.split does. (The host's ci-engines.bats runs it on real steps.) */
#include "unit.h"

#include <stdio.h>

#include "ci/shlex.h"
#include "common/util.h"

/* What the runner sends for ARGS (N of them) of an action's `args:`: each wrapped in "..."
 * with its double quotes escaped (ContainerActionHandler.cs), joined, split on ' ', each
 * piece trimmed, empty ones dropped (HookInput.cs); then joined by spaces again, as the
 * docker hook does before its shlex.split. */
static char *
runner_form (const char *const *args, size_t n)
{
  struct strbuf joined = { 0 };
  for (size_t i = 0; i < n; i++)
    {
      strbuf_append (&joined, " \"");
      for (const char *c = args[i]; *c != '\0'; c++)
        {
          if (*c == '"')
            strbuf_append_c (&joined, '\\');
          strbuf_append_c (&joined, *c);
        }
      strbuf_append_c (&joined, '"');
    }
  cleanup_free char *s = strbuf_steal (&joined);
  struct strbuf out = { 0 };
  for (char *save = NULL, *piece = strtok_r (s, " ", &save); piece != NULL;
       piece = strtok_r (NULL, " ", &save))
    {
      /* .Trim(): the ASCII whitespace at either end. */
      size_t len = strlen (piece);
      while (len > 0 && strchr ("\t\n\r\v\f", piece[len - 1]) != NULL)
        len--;
      size_t start = strspn (piece, "\t\n\r\v\f");
      if (start >= len)
        continue;
      if (out.len > 0)
        strbuf_append_c (&out, ' ');
      strbuf_append_len (&out, piece + start, len - start);
    }
  return strbuf_steal (&out);
}

static void
expect (const char *text, const char *const *want, size_t n)
{
  const char *why = NULL;
  char **got = ci_shlex_split (text, &why);
  if (got == NULL)
    fail_msg ("[%s]: %s", text, why);
  assert_int_equal (strv_length (got), n);
  for (size_t i = 0; i < n; i++)
    assert_string_equal (got[i], want[i]);
  strv_free (got);
}

#define EXPECT(text, ...)                                                           \
  do                                                                                \
    {                                                                               \
      const char *const w_[] = { __VA_ARGS__ };                                     \
      expect (text, w_, N_ELEMENTS (w_));                                           \
    }                                                                               \
  while (0)

static void
refused (const char *text, const char *why_part)
{
  const char *why = NULL;
  char **got = ci_shlex_split (text, &why);
  if (got != NULL)
    fail_msg ("[%s] was split", text);
  assert_non_null (strstr (why, why_part));
}

static void
test_runner_round_trip (void **state)
{
  (void) state;
  static const char *const args[] = {
    "hello world", "", "say \"hi\"", "it's", "$HOME and `id`", "a\tb", "multi\nline",
    "*", "--flag=x y", "unicode \xc3\xa9t\xc3\xa9",
  };
  cleanup_free char *form = runner_form (args, N_ELEMENTS (args));
  /* What reaches the hook: "\"hello world\" \"\" ..." split on its spaces. */
  assert_string_equal (form, "\"hello world\" \"\" \"say \\\"hi\\\"\" \"it's\" \"$HOME and `id`\" "
                             "\"a\tb\" \"multi\nline\" \"*\" \"--flag=x y\" "
                             "\"unicode \xc3\xa9t\xc3\xa9\"");
  expect (form, args, N_ELEMENTS (args));
}

static void
test_runner_losses (void **state)
{
  (void) state;
  /* What the runner's split and trim lose is lost: a run of spaces, whitespace by a space. */
  static const char *const spaced[] = { "a  b", "c \n d" };
  cleanup_free char *form = runner_form (spaced, 2);
  EXPECT (form, "a b", "c d");
  /* The runner escapes no backslash: \\ and \" in an argument lose theirs. */
  static const char *const slashes[] = { "C:\\\\dir", "a\\b" };
  cleanup_free char *form2 = runner_form (slashes, 2);
  EXPECT (form2, "C:\\dir", "a\\b");
  /* One ending an argument escapes its closing quote: the words run on, unclosed. */
  static const char *const trailing[] = { "dir\\" };
  cleanup_free char *form3 = runner_form (trailing, 1);
  refused (form3, "\" is not closed");
}

static void
test_quoting (void **state)
{
  (void) state;
  EXPECT ("-e /__w/_temp/x.sh", "-e", "/__w/_temp/x.sh");
  EXPECT ("  lead\t\ttrail \n", "lead", "trail");
  EXPECT ("\"/__w/_actions/o/r/v1/my dir/index.js\"", "/__w/_actions/o/r/v1/my dir/index.js");
  EXPECT ("'single \"kept\" \\n' x", "single \"kept\" \\n", "x");
  EXPECT ("\"dq \\\\ \\\" \\n \\$ kept\"", "dq \\ \" \\n \\$ kept");
  EXPECT ("un\\ quoted \\\"x\\\" \\\\", "un quoted", "\"x\"", "\\");
  EXPECT ("a\"b\"'c'd", "abcd");
  EXPECT ("\"\" '' x", "", "", "x");
  EXPECT ("a\\\nb \"c\\\nd\"", "ab", "cd");
  expect ("\\\n", NULL, 0);
  expect ("", NULL, 0);
  EXPECT ("$HOME $ a$ $x", "$HOME", "$", "a$", "$x");
  EXPECT ("$\"loc \\\" x\" \\$'not'", "loc \" x", "$not");
  EXPECT ("'$'\"$'\"", "$$'");
}

static void
test_ansi_c (void **state)
{
  (void) state;
  EXPECT ("$'a\\tb\\nc\\\\d\\'e\\\"f\\?'", "a\tb\nc\\d'e\"f?");
  EXPECT ("$'\\a\\b\\e\\E\\f\\r\\v'", "\a\b\033\033\f\r\v");
  EXPECT ("$'\\101\\0101\\x41\\x4a1\\u00e9\\U0001F600'", "A\b1AJ1\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT ("$'\\cA\\c?\\q\\x'", "\001\177\\q\\x");
  EXPECT ("pre$'x y'post", "prex ypost");
  refused ("$'\\0'", "NUL");
  refused ("$'\\x00'", "NUL");
  refused ("$'\\U00110000'", "no character");
  refused ("$'\\ud800'", "no character");
}

static void
test_refused (void **state)
{
  (void) state;
  refused ("\"open", "\" is not closed");
  refused ("'open", "' is not closed");
  refused ("$'open", "$' is not closed");
  refused ("$'open\\", "$' is not closed");
  refused ("\"open\\", "\" is not closed");
  refused ("end\\", "backslash at the end");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (test_runner_round_trip),
    cmocka_unit_test (test_runner_losses),
    cmocka_unit_test (test_quoting),
    cmocka_unit_test (test_ansi_c),
    cmocka_unit_test (test_refused),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
