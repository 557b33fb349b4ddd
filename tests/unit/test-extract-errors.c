/* The extractor's error-returning interface (extract-internal.h): bad input gives back -1
 * and the one-line message the CLI prints (tests/host/extract-hostile.bats checks the CLI
 * side), with every fd released, instead of ending the process. */
#include "unit.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/roots.h"
#include "common/util.h"
#include "store/extract/extract-internal.h"

struct member
{
  const char *name;
  mode_t type;          /* AE_IFREG, AE_IFDIR; 0 ends the list */
  const char *hardlink; /* or NULL */
};

/* A memfd holding a ustar archive of MEMBERS (regular files hold "x"). */
static int
make_tar (const struct member *members)
{
  int fd = memfd_create ("test-tar", MFD_CLOEXEC);
  assert_true (fd >= 0);
  struct archive *a = archive_write_new ();
  assert_int_equal (archive_write_set_format_ustar (a), ARCHIVE_OK);
  assert_int_equal (archive_write_open_fd (a, fd), ARCHIVE_OK);
  for (const struct member *m = members; m->type != 0; m++)
    {
      struct archive_entry *e = archive_entry_new ();
      archive_entry_set_pathname (e, m->name);
      archive_entry_set_filetype (e, m->type);
      archive_entry_set_perm (e, 0644);
      if (m->hardlink != NULL)
        archive_entry_set_hardlink (e, m->hardlink);
      bool data = m->type == AE_IFREG && m->hardlink == NULL;
      archive_entry_set_size (e, data ? 1 : 0);
      assert_int_equal (archive_write_header (a, e), ARCHIVE_OK);
      if (data)
        assert_int_equal (archive_write_data (a, "x", 1), 1);
      archive_entry_free (e);
    }
  assert_int_equal (archive_write_close (a), ARCHIVE_OK);
  archive_write_free (a);
  assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
  return fd;
}

static int
count_fds (void)
{
  DIR *d = opendir ("/proc/self/fd");
  assert_non_null (d);
  int n = 0;
  while (readdir (d) != NULL)
    n++;
  closedir (d);
  return n;
}

/* Unpack the archive in FD into a fresh root; the message (caller frees) or NULL. Checks
 * that the extractor left no fd open, accepted or refused. */
static char *
unpack (int fd)
{
  char dir[] = "/tmp/test-extract-errors.XXXXXX";
  assert_non_null (mkdtemp (dir));
  int rootfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert_true (rootfd >= 0);
  int fds_before = count_fds ();

  static char description[] = "t.tar";
  struct source src = { .fd = fd, .description = description };
  struct extract_opts opts = { 0 };
  struct extract_result result;
  struct extractor *x = extractor_new (rootfd, &opts, &result);
  bool ok = extractor_unpack (x, &src, result.sha256) == 0 && extractor_fix_dirs (x) == 0
            && extractor_fix_root (x) == 0;
  char *message = ok ? NULL : xstrdup (extractor_error (x));
  extractor_free (x);

  assert_int_equal (count_fds (), fds_before);
  close (rootfd);
  close (fd);
  assert_int_equal (rm_rf_at (AT_FDCWD, dir), 0);
  return message;
}

static void
good_archive_is_accepted (void **state)
{
  (void) state;
  static const struct member m[] = {
    { "etc", AE_IFDIR, NULL }, { "etc/passwd", AE_IFREG, NULL },
    { "etc/group", AE_IFREG, "etc/passwd" }, { NULL, 0, NULL },
  };
  assert_null (unpack (make_tar (m)));
}

static void
dotdot_entry_returns_the_message (void **state)
{
  (void) state;
  static const struct member m[] = {
    { "etc", AE_IFDIR, NULL }, { "../evil", AE_IFREG, NULL }, { NULL, 0, NULL },
  };
  char *message = unpack (make_tar (m));
  assert_string_equal (message, "t.tar: refusing entry '../evil': it contains a '..' component");
  free (message);
}

static void
dangling_hardlink_returns_the_message (void **state)
{
  (void) state;
  static const struct member m[] = {
    { "a", AE_IFREG, NULL }, { "b", AE_IFREG, "nope" }, { NULL, 0, NULL },
  };
  char *message = unpack (make_tar (m));
  assert_string_equal (message, "t.tar: refusing entry 'b': hardlink target 'nope' is not an "
                                "earlier entry of the archive");
  free (message);
}

static void
corrupt_gzip_returns_the_message (void **state)
{
  (void) state;
  int fd = memfd_create ("test-gz", MFD_CLOEXEC);
  /* A gzip header (deflate, no flags), then bytes that are no deflate stream. */
  static const unsigned char bad[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3,
                                       0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
  assert_int_equal (write_all (fd, bad, sizeof bad), 0);
  assert_int_equal (lseek (fd, 0, SEEK_SET), 0);
  char *message = unpack (fd);
  assert_non_null (message);
  assert_true (strncmp (message, "t.tar: ", 7) == 0);
  assert_null (strchr (message, '\n'));
  free (message);
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (good_archive_is_accepted),
    cmocka_unit_test (dotdot_entry_returns_the_message),
    cmocka_unit_test (dangling_hardlink_returns_the_message),
    cmocka_unit_test (corrupt_gzip_returns_the_message),
  };
  return cmocka_run_group_tests_name ("extract-errors", tests, NULL, NULL);
}
