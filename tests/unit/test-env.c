/* The environment inside a devroot: what passes through, what is set, --env, --clear-env. */
#include "unit.h"

#include "common/util.h"
#include "enter/env.h"

static char caller_term[] = "TERM=xterm-256color";
static char caller_lang[] = "LANG=fr_FR.UTF-8";
static char caller_lc[] = "LC_TIME=C";
static char caller_tz[] = "TZ=Europe/Paris";
static char caller_path[] = "PATH=/host/bin";
static char caller_preload[] = "LD_PRELOAD=/host/lib/evil.so";
static char caller_home[] = "HOME=/host/home";
static char caller_display[] = "DISPLAY=:0";
static char *caller[] = { caller_term, caller_lang, caller_lc, caller_tz, caller_path,
                          caller_preload, caller_home, caller_display, NULL };

static const struct env_user user = { .home = "/home/u", .user = "u", .shell = "/bin/sh" };

static const char *
lookup (char **env, const char *key)
{
  size_t len = strlen (key);
  const char *found = NULL;
  for (size_t i = 0; env[i] != NULL; i++)
    if (strncmp (env[i], key, len) == 0 && env[i][len] == '=')
      {
        if (found != NULL)
          fail_msg ("%s appears twice", key);
        found = env[i] + len + 1;
      }
  return found;
}

static void
keeps_terminal_and_locale_variables (void **state)
{
  struct env_opts o = { 0 };
  char **env = env_build (caller, &o, NULL, &user);
  assert_string_equal (lookup (env, "TERM"), "xterm-256color");
  assert_string_equal (lookup (env, "LANG"), "fr_FR.UTF-8");
  assert_string_equal (lookup (env, "LC_TIME"), "C");
  assert_string_equal (lookup (env, "TZ"), "Europe/Paris");
  strv_free (env);
}

static void
drops_host_only_variables (void **state)
{
  struct env_opts o = { 0 };
  char **env = env_build (caller, &o, NULL, &user);
  assert_null (lookup (env, "LD_PRELOAD"));
  assert_null (lookup (env, "DISPLAY"));
  strv_free (env);
}

static void
sets_path_home_user_and_shell (void **state)
{
  struct env_opts o = { 0 };
  char **env = env_build (caller, &o, NULL, &user);
  assert_string_equal (lookup (env, "PATH"), DEFAULT_PATH);
  assert_string_equal (lookup (env, "HOME"), "/home/u");
  assert_string_equal (lookup (env, "USER"), "u");
  assert_string_equal (lookup (env, "LOGNAME"), "u");
  assert_string_equal (lookup (env, "SHELL"), "/bin/sh");
  strv_free (env);
}

static void
unknown_user_leaves_user_unset (void **state)
{
  struct env_opts o = { 0 };
  const struct env_user nobody = { .home = "/", .user = NULL, .shell = "/bin/sh" };
  char **env = env_build (caller, &o, NULL, &nobody);
  assert_string_equal (lookup (env, "HOME"), "/");
  assert_null (lookup (env, "USER"));
  strv_free (env);
}

static void
env_assignments_override_and_add (void **state)
{
  char a1[] = "PATH=/opt/bin", a2[] = "FOO=bar=baz", a3[] = "FOO=last", a4[] = "EMPTY=";
  char *assignments[] = { a1, a2, a3, a4, NULL };
  struct env_opts o = { .assignments = assignments };
  char **env = env_build (caller, &o, NULL, &user);
  assert_string_equal (lookup (env, "PATH"), "/opt/bin");
  assert_string_equal (lookup (env, "FOO"), "last");
  assert_string_equal (lookup (env, "EMPTY"), "");
  strv_free (env);
}

static void
clear_env_keeps_only_path_and_assignments (void **state)
{
  char a1[] = "ONLY=this";
  char *assignments[] = { a1, NULL };
  struct env_opts o = { .clear_env = true, .assignments = assignments };
  char **env = env_build (caller, &o, NULL, &user);
  assert_int_equal (strv_length (env), 2);
  assert_string_equal (lookup (env, "PATH"), DEFAULT_PATH);
  assert_string_equal (lookup (env, "ONLY"), "this");
  strv_free (env);
}

static void
bad_assignments_are_refused (void **state)
{
  const char *why = NULL;
  assert_int_equal (env_check_assignment ("NOEQUALS", &why), -1);
  assert_non_null (why);
  why = NULL;
  assert_int_equal (env_check_assignment ("=value", &why), -1);
  assert_non_null (why);
  assert_int_equal (env_check_assignment ("", &why), -1);
  assert_int_equal (env_check_assignment ("K=", &why), 0);
  assert_int_equal (env_check_assignment ("K=a=b", &why), 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (keeps_terminal_and_locale_variables),
    cmocka_unit_test (drops_host_only_variables),
    cmocka_unit_test (sets_path_home_user_and_shell),
    cmocka_unit_test (unknown_user_leaves_user_unset),
    cmocka_unit_test (env_assignments_override_and_add),
    cmocka_unit_test (clear_env_keeps_only_path_and_assignments),
    cmocka_unit_test (bad_assignments_are_refused),
  };
  return cmocka_run_group_tests_name ("env", tests, NULL, NULL);
}
