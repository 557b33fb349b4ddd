/* A file replaced whole or not at all (src/common/atomic-file.c): the target holds the old
 * bytes or the new ones, and no temporary is left by a commit, a failure or die(); a tree
 * put in place (tree_place, util.h) never over another. */
#include "unit.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/util.h"

static char dir[] = "/tmp/test-atomic-file.XXXXXX";
static int dirfd_ = -1;

static int
setup (void **state)
{
  (void) state;
  if (mkdtemp (dir) == NULL)
    return -1;
  dirfd_ = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  return dirfd_ < 0 ? -1 : 0;
}

static int
teardown (void **state)
{
  (void) state;
  DIR *d = opendir (dir);
  for (struct dirent *de; d != NULL && (de = readdir (d)) != NULL;)
    unlinkat (dirfd_, de->d_name, 0);
  if (d != NULL)
    closedir (d);
  close (dirfd_);
  return rmdir (dir);
}

/* Names in the directory, "." and ".." aside. */
static int
entries (void)
{
  int n = 0;
  DIR *d = opendir (dir);
  for (struct dirent *de; d != NULL && (de = readdir (d)) != NULL;)
    n += strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0;
  closedir (d);
  return n;
}

static void
read_back (const char *name, const char *want)
{
  char buf[64] = { 0 };
  int fd = openat (dirfd_, name, O_RDONLY | O_CLOEXEC);
  assert_true (fd >= 0);
  assert_true (read (fd, buf, sizeof buf - 1) >= 0);
  close (fd);
  assert_string_equal (buf, want);
}

static void
write_replaces_and_leaves_no_temporary (void **state)
{
  (void) state;
  assert_int_equal (atomic_file_write (dirfd_, "f", "old", 3, 0600, 0), 0);
  assert_int_equal (atomic_file_write (dirfd_, "f", "new", 3, 0600, ATOMIC_FSYNC), 0);
  read_back ("f", "new");
  assert_int_equal (entries (), 1);
  unlinkat (dirfd_, "f", 0);
}

static void
noreplace_keeps_the_existing_file (void **state)
{
  (void) state;
  assert_int_equal (atomic_file_write (dirfd_, "f", "first", 5, 0600, 0), 0);
  assert_int_equal (atomic_file_write (dirfd_, "f", "second", 6, 0600, ATOMIC_NOREPLACE), -1);
  assert_int_equal (errno, EEXIST);
  read_back ("f", "first");
  assert_int_equal (entries (), 1);
  unlinkat (dirfd_, "f", 0);
}

static void
discard_removes_the_temporary (void **state)
{
  (void) state;
  struct atomic_file f;
  assert_int_equal (atomic_file_open (&f, dirfd_, "f", 0600), 0);
  assert_int_equal (entries (), 1);
  atomic_file_discard (&f);
  atomic_file_discard (&f); /* twice is harmless */
  assert_int_equal (entries (), 0);
}

static void
failed_rename_removes_the_temporary (void **state)
{
  (void) state;
  assert_int_equal (mkdirat (dirfd_, "d", 0700), 0);
  assert_int_equal (mkdirat (dirfd_, "d/sub", 0700), 0);
  /* A file cannot replace a non-empty directory. */
  assert_int_equal (atomic_file_write (dirfd_, "d", "x", 1, 0600, 0), -1);
  assert_int_equal (entries (), 1);
  unlinkat (dirfd_, "d/sub", AT_REMOVEDIR);
  unlinkat (dirfd_, "d", AT_REMOVEDIR);
}

static void
die_removes_the_temporary (void **state)
{
  (void) state;
  pid_t pid = fork ();
  assert_true (pid >= 0);
  if (pid == 0)
    {
      int err = open ("/dev/null", O_WRONLY);
      dup2 (err, 2);
      struct atomic_file f;
      if (atomic_file_open (&f, dirfd_, "f", 0600) < 0 || entries () != 1)
        _exit (1);
      die ("test: dying mid-write");
    }
  int status;
  assert_int_equal (waitpid (pid, &status, 0), pid);
  assert_true (WIFEXITED (status));
  assert_int_equal (WEXITSTATUS (status), EXIT_TOOL_FAILURE);
  assert_int_equal (entries (), 0);
}

/* A file placed by a link: TARGET becomes the very inode of the source, no copy made. */
static void
link_places_the_same_inode (void **state)
{
  (void) state;
  assert_int_equal (atomic_file_write (dirfd_, "src", "linked", 6, 0600, 0), 0);
  int src = openat (dirfd_, "src", O_RDONLY | O_CLOEXEC);
  assert_true (src >= 0);
  cleanup_free char *path = xasprintf ("%s/src", dir);
  struct atomic_file f;
  assert_int_equal (atomic_file_link (&f, dirfd_, "dst", src, path), 0);
  assert_int_equal (entries (), 2); /* src and the temporary */
  assert_int_equal (atomic_file_commit (&f, ATOMIC_FSYNC), 0);
  atomic_file_discard (&f);
  struct stat a, b;
  assert_int_equal (fstat (src, &a), 0);
  assert_int_equal (fstatat (dirfd_, "dst", &b, AT_SYMLINK_NOFOLLOW), 0);
  assert_true (a.st_dev == b.st_dev && a.st_ino == b.st_ino);
  assert_int_equal (entries (), 2); /* src and dst */
  close (src);
  unlinkat (dirfd_, "src", 0);
  unlinkat (dirfd_, "dst", 0);
}

/* The source's name swapped for another file after it was opened (the caller hashed the
 * fd): the link by name would place the other file, so nothing is placed and nothing left. */
static void
link_refuses_a_name_that_is_another_file_now (void **state)
{
  (void) state;
  assert_int_equal (atomic_file_write (dirfd_, "src", "hashed", 6, 0600, 0), 0);
  int src = openat (dirfd_, "src", O_RDONLY | O_CLOEXEC);
  assert_true (src >= 0);
  assert_int_equal (atomic_file_write (dirfd_, "src", "other!", 6, 0600, 0), 0);
  cleanup_free char *path = xasprintf ("%s/src", dir);
  struct atomic_file f;
  int rc = atomic_file_link (&f, dirfd_, "dst", src, path);
  int errsv = errno;
  atomic_file_discard (&f);
  if (rc == 0)
    skip (); /* linked by the fd (CAP_DAC_READ_SEARCH): the right inode, nothing to test */
  assert_int_equal (errsv, ESTALE);
  assert_int_equal (entries (), 1); /* src only: no temporary, no dst */
  close (src);
  unlinkat (dirfd_, "src", 0);
}

/* A finished tree never goes over another, not even an empty directory (rename(2) would
 * replace that); with the name free, it is in place whole. */
static void
tree_place_never_replaces_a_directory (void **state)
{
  (void) state;
  cleanup_free char *staged = xasprintf ("%s/t.new", dir);
  cleanup_free char *final = xasprintf ("%s/t", dir);
  assert_int_equal (mkdir (staged, 0700), 0);
  assert_int_equal (atomic_file_write (dirfd_, "t.new/f", "tree", 4, 0600, 0), 0);
  assert_int_equal (mkdir (final, 0700), 0);
  assert_int_equal (tree_place (staged, final), -1);
  assert_int_equal (errno, EEXIST);
  read_back ("t.new/f", "tree");
  assert_int_equal (rmdir (final), 0);
  assert_int_equal (tree_place (staged, final), 0);
  read_back ("t/f", "tree");
  assert_int_equal (entries (), 1);
  unlinkat (dirfd_, "t/f", 0);
  unlinkat (dirfd_, "t", AT_REMOVEDIR);
}

/* A symlink replaced whole: the old one, then the new one, never none; no temporary. */
static void
symlink_replaces_and_leaves_no_temporary (void **state)
{
  (void) state;
  char buf[16] = { 0 };
  assert_int_equal (atomic_symlink (dirfd_, "l", "one"), 0);
  assert_int_equal (atomic_symlink (dirfd_, "l", "two"), 0);
  assert_int_equal (readlinkat (dirfd_, "l", buf, sizeof buf - 1), 3);
  assert_string_equal (buf, "two");
  assert_int_equal (entries (), 1);
  assert_int_equal (mkdirat (dirfd_, "d", 0700), 0);
  assert_int_equal (mkdirat (dirfd_, "d/sub", 0700), 0);
  assert_int_equal (atomic_symlink (dirfd_, "d", "x"), -1);
  assert_int_equal (entries (), 2); /* l and d: no temporary */
  unlinkat (dirfd_, "d/sub", AT_REMOVEDIR);
  unlinkat (dirfd_, "d", AT_REMOVEDIR);
  unlinkat (dirfd_, "l", 0);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (write_replaces_and_leaves_no_temporary),
    cmocka_unit_test (noreplace_keeps_the_existing_file),
    cmocka_unit_test (discard_removes_the_temporary),
    cmocka_unit_test (failed_rename_removes_the_temporary),
    cmocka_unit_test (die_removes_the_temporary),
    cmocka_unit_test (link_places_the_same_inode),
    cmocka_unit_test (link_refuses_a_name_that_is_another_file_now),
    cmocka_unit_test (tree_place_never_replaces_a_directory),
    cmocka_unit_test (symlink_replaces_and_leaves_no_temporary),
  };
  return cmocka_run_group_tests (tests, setup, teardown);
}
