/* Archive member names: how each is turned into a path inside the root, or refused. */
#include "unit.h"

#include <limits.h>

#include "common/util.h"
#include "store/extract/extract.h"
#include "common/walk.h"

struct accepted
{
  const char *in, *out;
  bool absolute;
};

static const struct accepted accepted[] = {
  { "etc/passwd", "etc/passwd", false },
  { "./etc/passwd", "etc/passwd", false },
  { "etc//passwd", "etc/passwd", false },
  { "etc/./passwd", "etc/passwd", false },
  { "etc/passwd/", "etc/passwd", false },
  { "/etc/passwd", "etc/passwd", true },
  { "///etc/passwd", "etc/passwd", true },
  { "./", "", false },
  { ".", "", false },
  { "/", "", true },
  { "a..b/..c/c..", "a..b/..c/c..", false },
  { "...", "...", false },
  { ".hidden/.x", ".hidden/.x", false },
};

static const char *const refused[] = {
  "..", "../x", "x/..", "x/../y", "/..", "//..", "//../etc/passwd", "./../x", "a/./../b",
  "x/../../../../etc/shadow", "../", "/../../",
};

static void
normal_names_are_normalised (void **state)
{
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++)
    {
      char *out = NULL;
      bool absolute = !accepted[i].absolute;
      const char *why = NULL;
      if (archive_path_normalize (accepted[i].in, &out, &absolute, &why) != 0)
        fail_msg ("refused '%s': %s", accepted[i].in, why);
      assert_string_equal (out, accepted[i].out);
      if (absolute != accepted[i].absolute)
        fail_msg ("'%s': wrong absolute flag", accepted[i].in);
      free (out);
    }
}

static void
dotdot_components_are_refused (void **state)
{
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
    {
      char *out = NULL;
      bool absolute;
      const char *why = NULL;
      if (archive_path_normalize (refused[i], &out, &absolute, &why) == 0)
        fail_msg ("accepted '%s' as '%s'", refused[i], out);
      assert_non_null (why);
      assert_null (out);
    }
}

static void
overlong_component_is_refused (void **state)
{
  char name[NAME_MAX + 8];
  memset (name, 'a', NAME_MAX + 1);
  name[NAME_MAX + 1] = '\0';
  char *out = NULL;
  bool absolute;
  const char *why = NULL;
  assert_int_equal (archive_path_normalize (name, &out, &absolute, &why), -1);
  name[NAME_MAX] = '\0';
  assert_int_equal (archive_path_normalize (name, &out, &absolute, &why), 0);
  free (out);
}

static void
path_longer_than_path_max_is_refused (void **state)
{
  /* "aaa...a/aaa...a/..." : 200 bytes per component, 21 components */
  size_t len = PATH_MAX + 16;
  char *name = malloc (len + 1);
  for (size_t i = 0; i < len; i++)
    name[i] = i % 200 == 199 ? '/' : 'a';
  name[len] = '\0';
  char *out = NULL;
  bool absolute;
  const char *why = NULL;
  assert_int_equal (archive_path_normalize (name, &out, &absolute, &why), -1);
  assert_non_null (why);
  /* The same name made shorter than PATH_MAX ("/" + path + NUL must fit) is fine. */
  name[PATH_MAX - 3] = '\0';
  assert_int_equal (archive_path_normalize (name, &out, &absolute, &why), 0);
  free (out);
  free (name);
}

/* "d/d/.../d" of N components. */
static char *
deep_name (size_t n)
{
  char *name = malloc (2 * n);
  for (size_t i = 0; i < n; i++)
    {
      name[2 * i] = 'd';
      name[2 * i + 1] = i + 1 < n ? '/' : '\0';
    }
  return name;
}

static void
more_than_walk_max_depth_components_are_refused (void **state)
{
  char *out = NULL;
  bool absolute;
  const char *why = NULL;
  char *name = deep_name (WALK_MAX_DEPTH);
  assert_int_equal (archive_path_normalize (name, &out, &absolute, &why), 0);
  assert_string_equal (out, name);
  free (out);
  free (name);
  /* One more, even spelled with "./" and "//" (which are not components), is refused. */
  char *deeper = deep_name (WALK_MAX_DEPTH + 1);
  name = xasprintf ("./%s//./", deeper);
  out = NULL;
  assert_int_equal (archive_path_normalize (name, &out, &absolute, &why), -1);
  assert_null (out);
  assert_string_equal (why, "it is more than 256 levels deep");
  free (name);
  free (deeper);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (normal_names_are_normalised),
    cmocka_unit_test (dotdot_components_are_refused),
    cmocka_unit_test (overlong_component_is_refused),
    cmocka_unit_test (path_longer_than_path_max_is_refused),
    cmocka_unit_test (more_than_walk_max_depth_components_are_refused),
  };
  return cmocka_run_group_tests_name ("archive-path", tests, NULL, NULL);
}
