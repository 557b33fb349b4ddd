/* Opening a path beneath a directory through no symlink (see beneath.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/beneath.h"

static bool no_openat2;

/* See beneath.h. The fallback opens each component by itself with O_NOFOLLOW, so neither a
 * symlink nor ".." anywhere on the way is followed: RESOLVE_BENEATH's and
 * RESOLVE_NO_SYMLINKS's answers, ELOOP (ENOTDIR for a symlink on the way) and EXDEV. */
int
open_beneath (int dirfd, const char *path, int flags)
{
  flags |= O_NOFOLLOW | O_CLOEXEC;
#ifdef SYS_openat2
  if (!no_openat2)
    {
      struct open_how how = {
        .flags = (uint64_t) flags,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
      };
      int fd = (int) syscall (SYS_openat2, dirfd, path, &how, sizeof how);
      if (fd >= 0 || errno != ENOSYS)
        return fd;
      no_openat2 = true;
    }
#endif
  if (path[0] == '\0')
    {
      errno = ENOENT; /* as openat2 says */
      return -1;
    }
  if (path[0] == '/')
    {
      errno = EXDEV;
      return -1;
    }
  int fd = -1; /* -1: still DIRFD itself */
  for (const char *p = path;;)
    {
      p += strspn (p, "/");
      size_t len = strcspn (p, "/");
      const char *next = p + len + strspn (p + len, "/");
      bool last = *next == '\0';
      char name[NAME_MAX + 1];
      if (len > NAME_MAX)
        {
          errno = ENAMETOOLONG;
          goto fail;
        }
      memcpy (name, p, len);
      name[len] = '\0';
      if (strcmp (name, "..") == 0)
        {
          errno = EXDEV;
          goto fail;
        }
      int at = fd < 0 ? dirfd : fd;
      int nfd = last ? openat (at, len > 0 ? name : ".", flags)
                     : openat (at, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (nfd < 0)
        goto fail;
      if (fd >= 0)
        close (fd);
      fd = nfd;
      if (last)
        return fd;
      p = next;
    }
fail:
  {
    int saved = errno;
    if (fd >= 0)
      close (fd);
    errno = saved;
  }
  return -1;
}
