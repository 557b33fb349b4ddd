/* ci/volumes.c: the Actions hooks' chroot-mode copies, into a root and back, with the
 * root's side hostile. (The guest's ci-engines.bats runs them around real steps.) */
#include "unit.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/volumes.h"
#include "common/roots.h"
#include "common/util.h"

static char *dir;

static char *
at (const char *rel)
{
  return xasprintf ("%s/%s", dir, rel);
}

static void
put (const char *rel, const char *text)
{
  cleanup_free char *p = at (rel);
  FILE *f = fopen (p, "w");
  assert_non_null (f);
  fputs (text, f);
  fclose (f);
}

/* The file REL holds exactly WANT. */
static void
assert_holds (const char *rel, const char *want)
{
  cleanup_free char *p = at (rel);
  size_t len;
  cleanup_free char *got = load_file_at (AT_FDCWD, p, 4096, &len);
  assert_non_null (got);
  assert_string_equal (got, want);
}

static char *
link_of (const char *rel)
{
  cleanup_free char *p = at (rel);
  static char buf[256];
  ssize_t n = readlink (p, buf, sizeof buf - 1);
  if (n < 0)
    return NULL;
  buf[n] = '\0';
  return buf;
}

static bool
exists (const char *rel)
{
  cleanup_free char *p = at (rel);
  struct stat st;
  return lstat (p, &st) == 0;
}

static void
mk (const char *rel)
{
  cleanup_free char *p = at (rel);
  assert_int_equal (mkdir_p (p, 0755), 0);
}

static int
setup (void **state)
{
  (void) state;
  const char *tmp = getenv ("TMPDIR");
  dir = xasprintf ("%s/test-volumes.XXXXXX", tmp != NULL ? tmp : "/tmp");
  assert_non_null (mkdtemp (dir));
  mk ("host/work/sub");
  mk ("host/work/_temp");
  mk ("host/ext");
  mk ("root");
  mk ("outside");
  put ("outside/secret", "kept");
  put ("host/work/a", "runner-a");
  put ("host/work/sub/b", "runner-b");
  put ("host/work/_temp/out", "");
  put ("host/ext/tool", "tool");
  return 0;
}

static int
teardown (void **state)
{
  (void) state;
  rm_rf_at (AT_FDCWD, dir);
  free (dir);
  return 0;
}

static void
volumes (struct ci_volume v[3])
{
  v[0] = (struct ci_volume) { .source = at ("host/work"), .target = xstrdup ("/__w") };
  v[1] = (struct ci_volume) { .source = at ("host/ext"), .target = xstrdup ("/__e"),
                              .read_only = true };
  v[2] = (struct ci_volume) { .source = at ("host/work/_temp"),
                              .target = xstrdup ("/__w/_temp") };
}

static void
volumes_free (struct ci_volume v[3])
{
  for (int i = 0; i < 3; i++)
    {
      free (v[i].source);
      free (v[i].target);
    }
}

/* V, the volumes, copied into the root as before a job's first step; the root's path. */
static char *
copied_in (struct ci_volume v[3])
{
  volumes (v);
  char *root = at ("root");
  ci_volumes_copy_in (root, v, 3);
  return root;
}

/* In, a step's changes, back: what the step wrote is the runner's, removals mirrored,
 * readOnly never copied back; then what the runner changed reaches the root. */
static void
test_in_and_back (void **state)
{
  (void) state;
  struct ci_volume v[3];
  cleanup_free char *root = copied_in (v);
  assert_holds ("root/__w/a", "runner-a");
  assert_holds ("root/__w/sub/b", "runner-b");
  assert_true (exists ("root/__w/_temp/out"));
  assert_holds ("root/__e/tool", "tool");

  /* The step. */
  put ("root/__w/_temp/out", "answer=42\n");
  put ("root/__w/new", "made-inside");
  cleanup_free char *old = at ("root/__w/sub/b");
  assert_int_equal (unlink (old), 0);
  put ("root/__e/tool", "written-inside");
  assert_true (ci_volumes_copy_back (root, v, 3));
  assert_holds ("host/work/_temp/out", "answer=42\n");
  assert_holds ("host/work/new", "made-inside");
  assert_false (exists ("host/work/sub/b"));
  assert_holds ("host/ext/tool", "tool");

  /* The runner's change between steps, and readOnly restored inside. */
  cleanup_free char *hn = at ("host/work/new");
  assert_int_equal (unlink (hn), 0);
  put ("host/work/a", "runner-changed");
  ci_volumes_copy_in (root, v, 3);
  assert_false (exists ("root/__w/new"));
  assert_holds ("root/__w/a", "runner-changed");
  assert_holds ("root/__e/tool", "tool");
  volumes_free (v);
}

/* The root's symlinks are copied as symlinks, never followed; a FIFO is not copied; a
 * symlink swapped for a directory is replaced on the host, never written through; a
 * target the step replaced is not copied back and the runner's directory stays whole. */
static void
test_hostile (void **state)
{
  (void) state;
  struct ci_volume v[3];
  cleanup_free char *root = copied_in (v);
  cleanup_free char *outside = at ("outside");
  cleanup_free char *l1 = at ("root/__w/passwd");
  cleanup_free char *l2 = at ("root/__w/escape");
  cleanup_free char *fifo = at ("root/__w/fifo");
  assert_int_equal (symlink ("/etc/passwd", l1), 0);
  assert_int_equal (symlink (outside, l2), 0);
  assert_int_equal (mkfifo (fifo, 0600), 0);
  assert_true (ci_volumes_copy_back (root, v, 3));
  assert_string_equal (link_of ("host/work/passwd"), "/etc/passwd");
  assert_string_equal (link_of ("host/work/escape"), outside);
  assert_false (exists ("host/work/fifo"));

  /* Next step: files where the symlinks were. */
  assert_int_equal (unlink (l1), 0);
  assert_int_equal (unlink (l2), 0);
  put ("root/__w/passwd", "planted");
  mk ("root/__w/escape");
  put ("root/__w/escape/secret", "planted");
  assert_true (ci_volumes_copy_back (root, v, 3));
  assert_null (link_of ("host/work/passwd"));
  assert_holds ("host/work/passwd", "planted");
  assert_holds ("host/work/escape/secret", "planted");
  assert_holds ("outside/secret", "kept");

  /* The step replaces /__w/_temp with a symlink to outside. */
  cleanup_free char *t = at ("root/__w/_temp");
  assert_int_equal (rm_rf_at (AT_FDCWD, t), 0);
  assert_int_equal (symlink (outside, t), 0);
  assert_false (ci_volumes_copy_back (root, v, 3));
  assert_true (exists ("host/work/_temp/out"));
  assert_false (exists ("outside/out"));
  volumes_free (v);
}

static void
test_target_valid (void **state)
{
  (void) state;
  char *n = NULL;
  assert_true (ci_volume_target_valid ("//__w//_temp/", &n));
  assert_string_equal (n, "/__w/_temp");
  free (n);
  assert_false (ci_volume_target_valid ("/__w/../etc", &n));
  assert_false (ci_volume_target_valid ("/./x", &n));
  assert_false (ci_volume_target_valid ("/", &n));
  assert_false (ci_volume_target_valid ("relative", &n));
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown (test_in_and_back, setup, teardown),
    cmocka_unit_test_setup_teardown (test_hostile, setup, teardown),
    cmocka_unit_test (test_target_valid),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
