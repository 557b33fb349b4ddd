/* libFuzzer target: the extractor (src/store/extract.c), fed each input as a rootfs archive from
 * a memfd, into a fresh root under a private parent directory, which is then removed.
 *
 * Invariants checked after every input, accepted or refused:
 *   - nothing was created outside the root: the parent holds the root and nothing else;
 *   - an accepted archive leaks no fd and leaves a root whose every entry is a directory,
 *     a regular file or a symlink (never a device, FIFO, socket or setuid/setgid file).
 *
 * The extractor die()s on a refused entry, as the tool does. Here die()'s cleanup hook
 * longjmp()s back instead of exiting, so one process can try millions of inputs. The
 * libarchive reader, the extractor and the gzip checker it held are found through linker
 * wraps (-Wl,--wrap=archive_read_open,...: see Makefile.am) and freed; the fds the skipped
 * frames held are closed by comparing with the fds open before the run. What a skipped
 * frame had malloc'd leaks (a few short strings per refused input): run with
 * -detect_leaks=0 (fuzz/run does). */
#include <archive.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract.h"
#include "store/gunzip.h"
#include "store/unlz4.h"

/* Archives small enough for a fuzzer still describe big files: cap what one unpacks. */
#define FUZZ_MAX_UNPACKED (16 * 1024 * 1024)
/* fds are allocated lowest first and every run's are closed: they stay far below this. */
#define FUZZ_MAX_FD 256

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

/* ---- What the extractor holds, found through the linker wraps. */
static struct archive *live_archive;
static struct extractor *live_extractor;
static struct gunzip *live_gz;
static struct unlz4 *live_lz4;

int __real_archive_read_open (struct archive *a, void *data, archive_open_callback *o,
                              archive_read_callback *r, archive_close_callback *c);
int __wrap_archive_read_open (struct archive *a, void *data, archive_open_callback *o,
                              archive_read_callback *r, archive_close_callback *c);
int __real_archive_read_free (struct archive *a);
int __wrap_archive_read_free (struct archive *a);
struct gunzip *__real_gunzip_new (const unsigned char *first, size_t len);
struct gunzip *__wrap_gunzip_new (const unsigned char *first, size_t len);
int __real_gunzip_finish (struct gunzip *g, const char **why);
int __wrap_gunzip_finish (struct gunzip *g, const char **why);
struct unlz4 *__real_unlz4_new (const unsigned char *first, size_t len);
struct unlz4 *__wrap_unlz4_new (const unsigned char *first, size_t len);
int __real_unlz4_finish (struct unlz4 *u, const char **why);
int __wrap_unlz4_finish (struct unlz4 *u, const char **why);

int
__wrap_archive_read_open (struct archive *a, void *data, archive_open_callback *o,
                          archive_read_callback *r, archive_close_callback *c)
{
  live_archive = a;
  live_extractor = data;
  return __real_archive_read_open (a, data, o, r, c);
}

int
__wrap_archive_read_free (struct archive *a)
{
  if (a == live_archive)
    live_archive = NULL;
  return __real_archive_read_free (a);
}

struct gunzip *
__wrap_gunzip_new (const unsigned char *first, size_t len)
{
  live_gz = __real_gunzip_new (first, len);
  return live_gz;
}

int
__wrap_gunzip_finish (struct gunzip *g, const char **why)
{
  if (g == live_gz)
    live_gz = NULL;
  return __real_gunzip_finish (g, why);
}

struct unlz4 *
__wrap_unlz4_new (const unsigned char *first, size_t len)
{
  live_lz4 = __real_unlz4_new (first, len);
  return live_lz4;
}

int
__wrap_unlz4_finish (struct unlz4 *u, const char **why)
{
  if (u == live_lz4)
    live_lz4 = NULL;
  return __real_unlz4_finish (u, why);
}

/* ---- die() returns here. */
static jmp_buf on_die;

static void
longjmp_on_die (void)
{
  longjmp (on_die, 1);
}

/* ---- The private parent directory and the fds open before any run. */
static char *parent;
static bool fd_was_open[FUZZ_MAX_FD];

int
LLVMFuzzerInitialize (int *argc, char ***argv)
{
  const char *tmp = getenv ("TMPDIR");
  parent = xasprintf ("%s/fuzz-extract.XXXXXX", tmp != NULL && *tmp != '\0' ? tmp : "/tmp");
  if (mkdtemp (parent) == NULL)
    {
      perror (parent);
      abort ();
    }
  umask (022);
  return 0;
}

static void
note_open_fds (void)
{
  for (int fd = 0; fd < FUZZ_MAX_FD; fd++)
    fd_was_open[fd] = fcntl (fd, F_GETFD) >= 0;
}

/* Close fds opened since note_open_fds but KEEP1 and KEEP2; how many there were. */
static int
close_new_fds (int keep1, int keep2)
{
  int n = 0;
  for (int fd = 0; fd < FUZZ_MAX_FD; fd++)
    if (!fd_was_open[fd] && fd != keep1 && fd != keep2 && fcntl (fd, F_GETFD) >= 0)
      {
        close (fd);
        n++;
      }
  return n;
}

/* Remove DIRFD's contents, making each directory writable and searchable first (the
 * archive may have made it read-only). */
static void
remove_contents (int dirfd)
{
  DIR *d = fdopendir (dirfd);
  assert (d != NULL);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      struct stat st;
      assert (fstatat (dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
      if (S_ISDIR (st.st_mode))
        {
          assert (fchmodat (dirfd, de->d_name, 0700, 0) == 0);
          int sub = openat (dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          assert (sub >= 0);
          remove_contents (sub);
          assert (unlinkat (dirfd, de->d_name, AT_REMOVEDIR) == 0);
        }
      else
        assert (unlinkat (dirfd, de->d_name, 0) == 0);
    }
  closedir (d);
}

/* Only directories, regular files without setuid/setgid, symlinks and FIFOs (made since
 * the extractor imports what podman imports); never a device node or a socket. */
static void
check_tree (int dirfd)
{
  DIR *d = fdopendir (dirfd);
  assert (d != NULL);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      struct stat st;
      assert (fstatat (dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
      assert (S_ISDIR (st.st_mode) || S_ISREG (st.st_mode) || S_ISLNK (st.st_mode)
              || S_ISFIFO (st.st_mode));
      assert ((st.st_mode & (S_ISUID | S_ISGID)) == 0);
      if (S_ISDIR (st.st_mode))
        {
          (void) fchmodat (dirfd, de->d_name, st.st_mode | 0700, 0);
          int sub = openat (dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          assert (sub >= 0);
          check_tree (sub);
        }
    }
  closedir (d);
}

/* The parent holds exactly one entry, "root". */
static void
check_parent (void)
{
  DIR *d = opendir (parent);
  assert (d != NULL);
  struct dirent *de;
  int others = 0;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0
        && strcmp (de->d_name, "root") != 0)
      {
        fprintf (stderr, "fuzz-extract: '%s' was created outside the root\n", de->d_name);
        others++;
      }
  closedir (d);
  assert (others == 0);
}

/* Free what a die() left behind; a second die() while doing so only leaks. */
static void
release_after_die (void)
{
  if (setjmp (on_die) != 0)
    return;
  set_die_cleanup (longjmp_on_die);
  if (live_archive != NULL)
    __wrap_archive_read_free (live_archive);
  if (live_gz != NULL)
    {
      const char *why;
      (void) __wrap_gunzip_finish (live_gz, &why);
    }
  if (live_lz4 != NULL)
    {
      const char *why;
      (void) __wrap_unlz4_finish (live_lz4, &why);
    }
  if (live_extractor != NULL)
    {
      struct extractor *x = live_extractor;
      live_extractor = NULL;
      extract_finish_root (x);
    }
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static bool started;
  if (!started)
    {
      note_open_fds ();
      started = true;
    }

  int memfd = memfd_create ("fuzz-input", MFD_CLOEXEC);
  assert (memfd >= 0);
  assert (write_all (memfd, data, size) == 0);
  assert (lseek (memfd, 0, SEEK_SET) == 0);

  char *root = xasprintf ("%s/root", parent);
  assert (mkdir (root, 0700) == 0);
  int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert (rootfd >= 0);

  static char description[] = "fuzz-input";
  struct source src = { .fd = memfd, .description = description };
  struct extract_opts opts = { .max_bytes = FUZZ_MAX_UNPACKED };
  struct extract_result result;
  live_archive = NULL;
  live_extractor = NULL;
  live_gz = NULL;
  volatile bool accepted = false;
  if (setjmp (on_die) == 0)
    {
      set_die_cleanup (longjmp_on_die);
      struct extractor *x = extract_archive (rootfd, &src, &opts, &result);
      extract_finish (x);
      live_extractor = NULL; /* extract_finish_root frees it, unless it dies first */
      extract_finish_root (x);
      accepted = true;
    }
  else
    release_after_die ();
  set_die_cleanup (NULL);

  /* Any other fd still open is a leak when the archive was accepted. */
  int leaked = close_new_fds (memfd, rootfd);
  close (memfd);
  if (accepted)
    {
      assert (leaked == 0);
      assert (result.size_bytes <= FUZZ_MAX_UNPACKED);
      assert (fchmod (rootfd, 0700) == 0);
      int fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      assert (fd >= 0);
      check_tree (fd);
    }
  check_parent ();
  close (rootfd);

  int fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert (fd >= 0);
  assert (fchmod (fd, 0700) == 0);
  remove_contents (fd);
  assert (rmdir (root) == 0);
  free (root);
  return 0;
}
