/* Copying the files of a layer of the layer store into a root (see clone.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "store/layers/clone.h"

struct hardlink
{
  dev_t dev;
  ino_t ino;
  char *path; /* relative to the destination root */
};

void
cloner_forget_links (struct cloner *c)
{
  for (size_t i = 0; i < c->n_links; i++)
    free (c->links[i].path);
  free (c->links);
  c->links = NULL;
  c->n_links = c->cap_links = 0;
}

int
clone_set_times (int dirfd, const char *name, const struct stat *st)
{
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  return utimensat (dirfd, name, t, AT_SYMLINK_NOFOLLOW);
}

/* A non-directory linked more than once (a file, a symlink or a FIFO): 1 once linked to
 * the copy of its first path (-1 with errno if that fails), 0 when this is the first,
 * remembered for the next ones. */
static int
link_earlier (struct cloner *c, int dst, const char *name, const struct stat *st,
              const char *rel)
{
  if (st->st_nlink < 2)
    return 0;
  for (size_t i = 0; i < c->n_links; i++)
    if (c->links[i].dev == st->st_dev && c->links[i].ino == st->st_ino)
      return linkat (c->dst_root, c->links[i].path, dst, name, 0) < 0 ? -1 : 1;
  if (c->n_links == c->cap_links)
    {
      c->cap_links = c->cap_links ? 2 * c->cap_links : 16;
      c->links = xrealloc (c->links, c->cap_links * sizeof *c->links);
    }
  c->links[c->n_links++] = (struct hardlink) { st->st_dev, st->st_ino, xstrdup (rel) };
  return 0;
}

int
clone_xattrs (int in, int out)
{
  static char names[XATTR_LIST_MAX];
  ssize_t len = flistxattr (in, names, sizeof names);
  if (len < 0)
    return errno == EOPNOTSUPP ? 0 : -1;
  for (const char *n = names; n < names + len; n += strlen (n) + 1)
    {
      if ((!str_has_prefix (n, "user.") && strcmp (n, "security.capability") != 0)
          || str_has_prefix (n, "user.overlay."))
        continue;
      static char value[XATTR_SIZE_MAX];
      ssize_t size = fgetxattr (in, n, value, sizeof value);
      if (size < 0 || fsetxattr (out, n, value, (size_t) size, 0) < 0)
        return -1;
    }
  return 0;
}

/* A FIFO: made again (mkfifoat needs no privilege); mode and times through an fd (a read
 * open with O_NONBLOCK never waits for a writer). */
static int
clone_fifo (int dst, const char *name, const struct stat *st)
{
  if (mkfifoat (dst, name, 0600) < 0)
    return -1;
  cleanup_fd int out = openat (dst, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  return out < 0 || fchmod (out, st->st_mode & 01777) < 0 || futimens (out, t) < 0 ? -1 : 0;
}

static int
clone_file (struct cloner *c, int src, int dst, const char *name, const struct stat *st)
{
  cleanup_fd int in = openat (src, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (in < 0)
    return -1;
  cleanup_fd int out = openat (dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0600);
  if (out < 0 || (st->st_size > 0 && copy_fd_data (in, out, &c->reflink_failed) < 0)
      || fchmod (out, st->st_mode & 01777) < 0 || clone_xattrs (in, out) < 0)
    return -1;
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  if (futimens (out, t) < 0)
    return -1;
  c->bytes += (uint64_t) st->st_size;
  return 0;
}

int
clone_entry (struct cloner *c, int src, int dst, const char *name, const struct stat *st,
             const char *rel)
{
  int r = link_earlier (c, dst, name, st, rel);
  if (r != 0)
    return r < 0 ? -1 : 0;
  if (S_ISREG (st->st_mode))
    return clone_file (c, src, dst, name, st);
  if (S_ISFIFO (st->st_mode))
    return clone_fifo (dst, name, st);
  if (S_ISLNK (st->st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (src, name, target, sizeof target - 1);
      if (n < 0)
        return -1;
      target[n] = '\0';
      return symlinkat (target, dst, name) < 0 || clone_set_times (dst, name, st) < 0 ? -1 : 0;
    }
  /* Nothing else is ever unpacked (devices and sockets are skipped; a whiteout is handled
   * by the caller): the layer was tampered with; do not make a root that differs from it. */
  errno = EINVAL;
  return -1;
}
