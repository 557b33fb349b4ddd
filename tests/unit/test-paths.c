/* Where the store lives: XDG_DATA_HOME when absolute, else HOME/.local/share. */
#include "unit.h"

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"

static void
absolute_xdg_data_home_wins (void **state)
{
  char *d = paths_xdg_home ("/data/xdg", "/home/u", ".local/share");
  assert_string_equal (d, "/data/xdg");
  free (d);
}

static void
relative_xdg_data_home_is_ignored (void **state)
{
  char *d = paths_xdg_home ("relative/xdg", "/home/u", ".local/share");
  assert_string_equal (d, "/home/u/.local/share");
  free (d);
}

static void
empty_xdg_data_home_is_ignored (void **state)
{
  char *d = paths_xdg_home ("", "/home/u", ".local/share");
  assert_string_equal (d, "/home/u/.local/share");
  free (d);
}

static void
unset_xdg_data_home_uses_home (void **state)
{
  char *d = paths_xdg_home (NULL, "/home/u", ".local/share");
  assert_string_equal (d, "/home/u/.local/share");
  free (d);
}

static void
no_usable_directory_is_null (void **state)
{
  assert_null (paths_xdg_home (NULL, NULL, ".local/share"));
  assert_null (paths_xdg_home ("rel", "also-relative", ".local/share"));
}

static void
store_layout_is_under_enter_devroot (void **state)
{
  struct store_paths p;
  store_paths_init (&p, "/d");
  assert_string_equal (p.base, "/d/enter-devroot");
  assert_string_equal (p.roots, "/d/enter-devroot/roots");
  assert_string_equal (p.meta, "/d/enter-devroot/meta");
  assert_string_equal (p.staging, "/d/enter-devroot/staging");
  assert_string_equal (p.locks, "/d/enter-devroot/locks");
  char *root = paths_root (&p, "dev");
  char *meta = paths_meta (&p, "dev");
  char *lock = paths_lock (&p, "dev");
  assert_string_equal (root, "/d/enter-devroot/roots/dev");
  assert_string_equal (meta, "/d/enter-devroot/meta/dev.json");
  assert_string_equal (lock, "/d/enter-devroot/locks/dev.lock");
  free (root);
  free (meta);
  free (lock);
  store_paths_clear (&p);
}

static void
environment_is_read (void **state)
{
  struct store_paths p;
  setenv ("XDG_DATA_HOME", "/from/env", 1);
  store_paths_from_env (&p);
  assert_string_equal (p.roots, "/from/env/enter-devroot/roots");
  store_paths_clear (&p);
  setenv ("XDG_DATA_HOME", "not/absolute", 1);
  setenv ("HOME", "/home/someone", 1);
  store_paths_from_env (&p);
  assert_string_equal (p.roots, "/home/someone/.local/share/enter-devroot/roots");
  store_paths_clear (&p);
}

/* The config file's one-key reader (keep-idle and layout): the last line of the key wins,
 * blanks around the value go, a longer key of the same prefix is another key. */
static void
config_value_is_read (void **state)
{
  char dir[] = "/tmp/test-paths-XXXXXX";
  assert_non_null (mkdtemp (dir));
  setenv ("XDG_CONFIG_HOME", dir, 1);
  char *file = NULL;
  char *v = paths_config_value ("layout", &file);
  assert_null (v); /* no file */
  char *sub = xasprintf ("%s/enter-devroot", dir);
  assert_int_equal (mkdir (sub, 0700), 0);
  char *path = xasprintf ("%s/config", sub);
  FILE *f = fopen (path, "w");
  assert_non_null (f);
  fputs ("# comment\nlayout = flat\nlayoutx = overlay\n  layout\t=  overlay \r\nkeep-idle=3\n", f);
  fclose (f);
  free (file);
  v = paths_config_value ("layout", &file);
  assert_string_equal (v, "overlay");
  assert_string_equal (file, path);
  free (v);
  v = paths_config_value ("keep-idle", NULL);
  assert_string_equal (v, "3");
  free (v);
  assert_null (paths_config_value ("index", NULL));
  unlink (path);
  rmdir (sub);
  rmdir (dir);
  free (path);
  free (sub);
  free (file);
  unsetenv ("XDG_CONFIG_HOME");
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (absolute_xdg_data_home_wins),
    cmocka_unit_test (relative_xdg_data_home_is_ignored),
    cmocka_unit_test (empty_xdg_data_home_is_ignored),
    cmocka_unit_test (unset_xdg_data_home_uses_home),
    cmocka_unit_test (no_usable_directory_is_null),
    cmocka_unit_test (store_layout_is_under_enter_devroot),
    cmocka_unit_test (environment_is_read),
    cmocka_unit_test (config_value_is_read),
  };
  return cmocka_run_group_tests_name ("paths", tests, NULL, NULL);
}
