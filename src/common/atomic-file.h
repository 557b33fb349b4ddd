/* A file replaced whole or not at all: written to a temporary beside it, then renamed over
 * it. A reader sees the old file or the new one, never a part; a failure, die() or an
 * interrupt leaves the old one and no temporary. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct atomic_file
{
  int dirfd;    /* TARGET is relative to it (AT_FDCWD: a path) */
  char *target;
  char *tmp;    /* the temporary beside TARGET; NULL once renamed or removed */
  int fd;       /* open on the temporary (on TARGET after the commit); -1 when closed */
  struct atomic_file *next; /* the temporaries die() removes (atomic-file.c) */
};

/* atomic_file_commit's flags. */
#define ATOMIC_FSYNC 1u     /* the data reaches the disk before the rename (metadata, archives) */
#define ATOMIC_NOREPLACE 2u /* an existing TARGET stays, and the commit fails with EEXIST */

/* Create a new temporary beside TARGET in DIRFD (MODE less the umask; O_EXCL, O_NOFOLLOW,
 * a name nobody can guess, so a file another user planted is never written) and register
 * it for removal on die(). -1 with errno (ENOMEM too: nothing here dies, for the Slurm
 * plugin inside slurmstepd), nothing created. F is set whatever it returns, so
 * atomic_file_discard (cleanup_atomic_file) is always right after it. */
int atomic_file_open (struct atomic_file *f, int dirfd, const char *target, mode_t mode);
/* Like atomic_file_open, but the temporary is a hard link to the file open as SRCFD, by the
 * fd (AT_EMPTY_PATH, which needs CAP_DAC_READ_SEARCH) else by SRCPATH, and kept only when
 * it is that very inode (SRCPATH may name another file by now): a file placed without a
 * copy. f->fd is -1 (nothing to fsync: the data was written before). -1 with errno
 * (EXDEV across filesystems, EPERM where links are refused, ESTALE when SRCPATH names
 * another file), nothing left: the caller then copies through atomic_file_open. */
int atomic_file_link (struct atomic_file *f, int dirfd, const char *target, int srcfd,
                      const char *srcpath);
/* Put the temporary in TARGET's place; f->fd stays open on it (for fstat) until
 * atomic_file_discard. -1 with errno when it failed, the temporary then removed. */
int atomic_file_commit (struct atomic_file *f, unsigned flags);
/* Close, and remove the temporary unless it was committed. Safe to call twice. */
void atomic_file_discard (struct atomic_file *f);
#define cleanup_atomic_file __attribute__((cleanup (atomic_file_discard)))

/* The whole of it in one call: TARGET holds LEN bytes of DATA, or is left as it was and
 * -1 is returned with errno. */
int atomic_file_write (int dirfd, const char *target, const void *data, size_t len, mode_t mode,
                       unsigned flags);

/* NAME in DIRFD replaced whole by a symlink to TARGET: made at a fresh temporary beside it,
 * then renamed over it (a file or a symlink; never a directory: EISDIR). 0, or -1 with
 * errno and nothing left. */
int atomic_symlink (int dirfd, const char *name, const char *target);
