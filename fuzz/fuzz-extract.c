/* libFuzzer target: the extractor (src/store/extract*.c), fed each input as a rootfs archive
 * from a memfd, into a fresh root under a private parent directory, which is then removed.
 *
 * It calls the extractor's error-returning interface (extract-internal.h), which gives
 * control back with the one-line message on any refused entry or corrupt input, having
 * released what it held: no longjmp, no linker wraps, and LeakSanitizer on (fuzz/run).
 *
 * Invariants checked after every input, accepted or refused:
 *   - nothing was created outside the root: the parent holds the root and nothing else;
 *   - no fd is left open, and a refusal comes with a one-line message;
 *   - an accepted archive leaves a root whose every entry is a directory, a regular file,
 *     a symlink or a FIFO (never a device, socket or setuid/setgid file). */
#include <archive.h>
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract/extract.h"
#include "store/extract/extract-internal.h"

/* Archives small enough for a fuzzer still describe big files: cap what one unpacks. */
#define FUZZ_MAX_UNPACKED (16 * 1024 * 1024)
/* fds are allocated lowest first and every run's are closed: they stay far below this. */
#define FUZZ_MAX_FD 256

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);
int LLVMFuzzerInitialize (int *argc, char ***argv);

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
 * archive may have made it read-only). With CHECK (an accepted archive), each entry must
 * be a directory, a regular file without setuid/setgid, a symlink or a FIFO (made since
 * the extractor imports what podman imports); never a device node or a socket.
 *
 * Depth first without recursion, holding one directory fd whatever the depth: the extractor
 * goes one component at a time, so an accepted archive may nest deeper than the fd limit
 * (ulimit -n 1024 in CI) or the stack. Going up is by "..", which nothing else renames. */
static void
empty_tree (int fd, bool check)
{
  char **names = NULL; /* the directories entered, from the top: names[depth - 1] is ours */
  size_t depth = 0, cap = 0;
  for (;;)
    {
      DIR *d = fdopendir (fd);
      assert (d != NULL);
      char *subdir = NULL;
      struct dirent *de;
      while ((de = readdir (d)) != NULL)
        {
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          struct stat st;
          assert (fstatat (fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
          assert (!check || S_ISDIR (st.st_mode) || S_ISREG (st.st_mode)
                  || S_ISLNK (st.st_mode) || S_ISFIFO (st.st_mode));
          assert (!check || (st.st_mode & (S_ISUID | S_ISGID)) == 0);
          if (!S_ISDIR (st.st_mode))
            assert (unlinkat (fd, de->d_name, 0) == 0);
          else if (subdir == NULL)
            subdir = xstrdup (de->d_name); /* the others when we are back */
        }
      int next;
      if (subdir != NULL)
        {
          assert (fchmodat (fd, subdir, 0700, 0) == 0);
          next = openat (fd, subdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          assert (next >= 0);
          if (depth == cap)
            {
              cap = cap == 0 ? 64 : 2 * cap;
              names = realloc (names, cap * sizeof *names);
              assert (names != NULL);
            }
          names[depth++] = subdir;
        }
      else if (depth > 0)
        {
          next = openat (fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
          assert (next >= 0);
          char *name = names[--depth];
          assert (unlinkat (next, name, AT_REMOVEDIR) == 0);
          free (name);
        }
      else
        next = -1;
      closedir (d);
      if (next < 0)
        break;
      fd = next;
    }
  free (names);
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
  struct extractor *x = extractor_new (rootfd, &opts, &result);
  bool accepted = extractor_unpack (x, &src, result.sha256) == 0
                  && extractor_fix_dirs (x) == 0 && extractor_fix_root (x) == 0;
  /* A refusal says why, in one line. */
  const char *error = extractor_error (x);
  assert (accepted || (error != NULL && strchr (error, '\n') == NULL));
  extractor_free (x);

  /* Accepted or refused, the extractor closed every fd it opened. */
  assert (close_new_fds (memfd, rootfd) == 0);
  close (memfd);
  if (accepted)
    assert (result.size_bytes <= FUZZ_MAX_UNPACKED);
  check_parent ();
  close (rootfd);

  int fd = open (root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  assert (fd >= 0);
  assert (fchmod (fd, 0700) == 0);
  empty_tree (fd, accepted);
  assert (rmdir (root) == 0);
  free (root);
  return 0;
}
