/* Replace a file whole (atomic-file.h). The one way the tools write a file others read:
 * metadata, catalogues, validators, layouts, exported archives, and the Slurm plugin's
 * records. The plugin runs inside slurmstepd, which must never exit for it: nothing here
 * die()s, running out of memory included (ENOMEM). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/util.h"

/* Tries at a fresh random name before giving up (each EEXIST: a name already there). */
#define TEMP_TRIES 100

/* The temporaries not yet committed or discarded, newest first: what die() removes. */
static struct atomic_file *pending;

static void
remove_pending (void)
{
  for (struct atomic_file *f = pending; f != NULL; f = f->next)
    if (f->tmp != NULL)
      unlinkat (f->dirfd, f->tmp, 0);
  pending = NULL;
}

/* F's temporary, now made, is one die() removes. */
static void
track (struct atomic_file *f)
{
  f->next = pending;
  pending = f;
  set_die_temp_cleanup (remove_pending);
}

static void
forget (struct atomic_file *f)
{
  for (struct atomic_file **p = &pending; *p != NULL; p = &(*p)->next)
    if (*p == f)
      {
        *p = f->next;
        break;
      }
  f->next = NULL;
}

/* TARGET's directory part and a new name ".BASE.XXXXXXXX" there; NULL with errno ENOMEM. */
static char *
temp_name (const char *target)
{
  const char *slash = strrchr (target, '/');
  int dirlen = slash != NULL ? (int) (slash - target + 1) : 0;
  uint32_t r;
  if (getrandom (&r, sizeof r, GRND_NONBLOCK) != sizeof r)
    {
      static uint32_t serial;
      r = (uint32_t) getpid () * 2654435761u + serial++;
    }
  char *name;
  if (asprintf (&name, "%.*s.%s.%08x", dirlen, target, target + dirlen, r) < 0)
    return NULL;
  return name;
}

int
atomic_file_open (struct atomic_file *f, int dirfd, const char *target, mode_t mode)
{
  *f = (struct atomic_file) { .dirfd = dirfd, .fd = -1 };
  f->target = strdup (target);
  if (f->target == NULL)
    return -1;
  for (int i = 0; i < TEMP_TRIES; i++)
    {
      char *tmp = temp_name (target);
      if (tmp == NULL)
        return -1;
      int fd = openat (dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
      if (fd >= 0)
        {
          f->tmp = tmp;
          f->fd = fd;
          track (f);
          return 0;
        }
      int errsv = errno;
      free (tmp);
      errno = errsv;
      if (errno != EEXIST)
        return -1;
    }
  return -1;
}

/* FD's inode linked as a fresh temporary beside F->target: 0, -1 with errno; EEXIST only
 * when the name was taken (another try). */
static int
link_temp (struct atomic_file *f, int srcfd, const char *srcpath, const struct stat *want)
{
  char *tmp = temp_name (f->target);
  if (tmp == NULL)
    return -1;
  if (linkat (srcfd, "", f->dirfd, tmp, AT_EMPTY_PATH) < 0
      && (errno == EEXIST || srcpath == NULL || linkat (AT_FDCWD, srcpath, f->dirfd, tmp, 0) < 0))
    {
      int errsv = errno;
      free (tmp);
      errno = errsv;
      return -1;
    }
  struct stat there;
  if (fstatat (f->dirfd, tmp, &there, AT_SYMLINK_NOFOLLOW) < 0 || there.st_dev != want->st_dev
      || there.st_ino != want->st_ino)
    {
      unlinkat (f->dirfd, tmp, 0);
      free (tmp);
      errno = ESTALE;
      return -1;
    }
  f->tmp = tmp;
  return 0;
}

int
atomic_file_link (struct atomic_file *f, int dirfd, const char *target, int srcfd,
                  const char *srcpath)
{
  *f = (struct atomic_file) { .dirfd = dirfd, .fd = -1 };
  struct stat want;
  if (fstat (srcfd, &want) < 0)
    return -1;
  f->target = strdup (target);
  if (f->target == NULL)
    return -1;
  for (int i = 0; i < TEMP_TRIES; i++)
    {
      if (link_temp (f, srcfd, srcpath, &want) == 0)
        {
          track (f);
          return 0;
        }
      if (errno != EEXIST)
        return -1;
    }
  return -1;
}

/* renameat2 (RENAME_NOREPLACE), or where the filesystem has no such rename, a hard link
 * (which never replaces either) and the temporary's removal. */
static int
rename_noreplace (struct atomic_file *f)
{
  if (renameat2 (f->dirfd, f->tmp, f->dirfd, f->target, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL && errno != ENOSYS)
    return -1;
  if (linkat (f->dirfd, f->tmp, f->dirfd, f->target, 0) < 0)
    return -1;
  unlinkat (f->dirfd, f->tmp, 0);
  return 0;
}

int
atomic_file_commit (struct atomic_file *f, unsigned flags)
{
  int rc;
  if ((flags & ATOMIC_FSYNC) != 0 && f->fd >= 0 && fsync (f->fd) < 0)
    rc = -1;
  else if ((flags & ATOMIC_NOREPLACE) != 0)
    rc = rename_noreplace (f);
  else
    rc = renameat (f->dirfd, f->tmp, f->dirfd, f->target);
  int errsv = errno;
  if (rc < 0)
    unlinkat (f->dirfd, f->tmp, 0);
  forget (f);
  free (f->tmp);
  f->tmp = NULL;
  errno = errsv;
  return rc;
}

void
atomic_file_discard (struct atomic_file *f)
{
  int errsv = errno;
  if (f->tmp != NULL)
    unlinkat (f->dirfd, f->tmp, 0);
  forget (f);
  free (f->tmp);
  f->tmp = NULL;
  free (f->target);
  f->target = NULL;
  if (f->fd >= 0)
    close (f->fd);
  f->fd = -1;
  errno = errsv;
}

int
atomic_file_write (int dirfd, const char *target, const void *data, size_t len, mode_t mode,
                   unsigned flags)
{
  cleanup_atomic_file struct atomic_file f;
  if (atomic_file_open (&f, dirfd, target, mode) < 0)
    return -1;
  if (write_all (f.fd, data, len) < 0)
    return -1;
  return atomic_file_commit (&f, flags);
}

int
atomic_symlink (int dirfd, const char *name, const char *target)
{
  for (int i = 0; i < TEMP_TRIES; i++)
    {
      char *tmp = temp_name (name);
      if (tmp == NULL)
        return -1;
      if (symlinkat (target, dirfd, tmp) < 0)
        {
          int errsv = errno;
          free (tmp);
          errno = errsv;
          if (errno == EEXIST)
            continue;
          return -1;
        }
      int rc = renameat (dirfd, tmp, dirfd, name);
      int errsv = errno;
      if (rc < 0)
        unlinkat (dirfd, tmp, 0);
      free (tmp);
      errno = errsv;
      return rc;
    }
  return -1;
}
