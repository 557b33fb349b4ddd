/* --bind SRC:DST[:ro] (see bind.h). SRC is a directory (a CI job's checkout, its
 * artifacts), or a file or a socket (~/.gitconfig, ~/.netrc, $SSH_AUTH_SOCK): a missing
 * DST is created as a directory or an empty file to match. A bound file pins one inode:
 * an editor that replaces the file on the host by renaming a new one over it is not seen
 * inside (bind its directory for that). SRC is the caller's own host path and is followed
 * like any path they type; DST is inside the root, where anything may have planted a
 * symlink, so it is walked component by component from the root's fd with O_NOFOLLOW
 * (what openat2's RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS would do, on every kernel), and
 * the mount goes on the fd the walk ended with, not on a path looked up again.
 *
 * The Landlock domain (confine.c) needs no rule of its own: a path-beneath rule is checked
 * by walking up from the accessed file across mount points, so the rule on the root
 * covers whatever is mounted beneath it, and nothing else of the host. A :ro bind is
 * read-only in the kernel's mount table (MOUNT_ATTR_RDONLY, recursively), which no
 * Landlock right overrides. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "common/verbose.h"
#include "enter/bind.h"

#define RO_SUFFIX ":ro"

void
bind_free (struct bind *binds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      free (binds[i].src);
      free (binds[i].dst);
    }
  free (binds);
}

/* DST's components one at a time: *POS advances; NULL at the end. "" and "." are skipped. */
static char *
next_component (const char *path, size_t *pos)
{
  for (;;)
    {
      while (path[*pos] == '/')
        (*pos)++;
      if (path[*pos] == '\0')
        return NULL;
      size_t start = *pos;
      while (path[*pos] != '/' && path[*pos] != '\0')
        (*pos)++;
      size_t len = *pos - start;
      if (len == 1 && path[start] == '.')
        continue;
      char *c = strndup (path + start, len);
      if (c == NULL)
        die ("out of memory");
      return c;
    }
}

static void
parse_one (const char *spec, struct bind *b)
{
  cleanup_free char *s = xstrdup (spec);
  size_t len = strlen (s);
  b->ro = len > strlen (RO_SUFFIX) && strcmp (s + len - strlen (RO_SUFFIX), RO_SUFFIX) == 0;
  if (b->ro)
    s[len - strlen (RO_SUFFIX)] = '\0';
  char *colon = strchr (s, ':');
  if (colon == NULL)
    die ("invalid --bind '%s': expected SRC:DST or SRC:DST:ro", spec);
  *colon = '\0';
  const char *src = s, *dst = colon + 1;

  if (src[0] != '/')
    die ("invalid --bind '%s': SRC '%s' is not an absolute path", spec, src);
  struct stat st;
  if (stat (src, &st) < 0)
    die ("invalid --bind '%s': SRC %s: %s", spec, src, strerror (errno));
  if (S_ISBLK (st.st_mode) || S_ISCHR (st.st_mode))
    die ("invalid --bind '%s': SRC %s is a device (directories, files and sockets can be "
         "bound)", spec, src);
  b->dir = S_ISDIR (st.st_mode);

  if (dst[0] != '/')
    die ("invalid --bind '%s': DST '%s' is not an absolute path inside the root", spec, dst);
  size_t pos = 0, n = 0;
  for (char *c; (c = next_component (dst, &pos)) != NULL; n++)
    {
      bool dotdot = strcmp (c, "..") == 0;
      free (c);
      if (dotdot)
        die ("invalid --bind '%s': DST '%s' has a '..' component", spec, dst);
    }
  if (n == 0)
    die ("invalid --bind '%s': DST cannot be the root itself", spec);
  b->src = xstrdup (src);
  b->dst = xstrdup (dst);
}

struct bind *
bind_parse_all (char **specs, size_t *n_out)
{
  size_t n = strv_length (specs);
  struct bind *binds = xcalloc (n + 1, sizeof *binds);
  for (size_t i = 0; i < n; i++)
    parse_one (specs[i], &binds[i]);
  *n_out = n;
  return binds;
}

/* B's DST cannot be made or used in the root, for the reason FORMAT gives: a --bind ends
 * the run there, one line naming it; an optional bind (bind.h) is left out, that line a
 * warning: -1. */
__attribute__((format (printf, 3, 4))) static int
dst_refused (const char *name, const struct bind *b, const char *format, ...)
{
  va_list ap;
  va_start (ap, format);
  cleanup_free char *why = xvasprintf (format, ap);
  va_end (ap);
  if (!b->optional)
    die ("cannot bind %s on %s in root '%s': %s", b->src, b->dst, name, why);
  warn ("root '%s': %s is not bound on %s: %s", name, b->src, b->dst, why);
  return -1;
}

/* DST's last component COMP under CUR when SRC is not a directory: an existing file,
 * socket or FIFO, or with CREATE an empty file made for it; -1 (errno ENOENT) when
 * missing and not CREATE. A symlink or a directory is refused (dst_refused). */
static int
open_dst_leaf (const char *name, const struct bind *b, int cur, const char *comp, bool create)
{
  cleanup_fd int fd = openat (cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      if (!create)
        return -1;
      int made = openat (cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (made < 0 && errno != EEXIST)
        return dst_refused (name, b, "cannot create %s: %s", comp, strerror (errno));
      if (made >= 0)
        close (made);
      fd = openat (cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
    }
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return dst_refused (name, b, "%s: %s", comp, strerror (errno));
  if (S_ISLNK (st.st_mode))
    return dst_refused (name, b, "'%s' is a symlink in the root (never followed)", comp);
  if (S_ISDIR (st.st_mode))
    return dst_refused (name, b, "'%s' is a directory, and %s is not", comp, b->src);
  return steal_fd (&fd);
}

/* Open B's DST from the working directory (the root) one component at a time, never
 * following a symlink. With CREATE false, stop at the first missing component (-1 with
 * errno ENOENT); with CREATE true, make it. A symlink, a non-directory on the way, or a
 * last component whose kind is not SRC's (a directory for a directory) is refused
 * (dst_refused). */
static int
open_dst (const char *name, const struct bind *b, bool create)
{
  cleanup_fd int cur = open (".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    die_with_error ("cannot enter root '%s': open the root", name);
  size_t pos = 0;
  /* Both owned by scope: a die() below must not leave the lookahead unreachable. */
  cleanup_free char *next = next_component (b->dst, &pos);
  while (next != NULL)
    {
      cleanup_free char *comp = steal_pointer (&next);
      next = next_component (b->dst, &pos);
      if (next == NULL && !b->dir)
        {
          int fd = open_dst_leaf (name, b, cur, comp, create);
          if (fd < 0)
            return -1;
          close (cur);
          cur = fd;
          break;
        }
      int fd = openat (cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0 && errno == ENOENT)
        {
          if (!create)
            return -1;
          if (mkdirat (cur, comp, 0755) < 0 && errno != EEXIST)
            return dst_refused (name, b, "cannot create %s: %s", comp, strerror (errno));
          fd = openat (cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      if (fd < 0)
        {
          int errsv = errno;
          struct stat st;
          if (fstatat (cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK (st.st_mode))
            return dst_refused (name, b, "'%s' is a symlink in the root (never followed)",
                                comp);
          if (errsv == ENOTDIR)
            return dst_refused (name, b, "'%s' is not a directory", comp);
          return dst_refused (name, b, "%s: %s", comp, strerror (errsv));
        }
      close (cur);
      cur = fd;
    }
  return steal_fd (&cur);
}

static void
mount_one (const char *name, const struct bind *b)
{
  cleanup_fd int dst = open_dst (name, b, true);
  if (dst < 0)
    return; /* an optional bind, left out: open_dst said why */
  cleanup_fd int tree = (int) syscall (SYS_open_tree, AT_FDCWD, b->src,
                                       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC
                                       | (b->shallow ? 0 : AT_RECURSIVE));
  if (tree < 0)
    {
      dst_refused (name, b, "open_tree: %s", strerror (errno));
      return;
    }
  struct mount_attr attr = { .attr_set = (b->ro ? MOUNT_ATTR_RDONLY : 0) | b->attrs };
  if (attr.attr_set != 0
      && syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
                  sizeof attr) < 0)
    die_with_error ("cannot bind %s on %s in root '%s': cannot make it %s", b->src, b->dst,
                    name, b->ro ? "read-only" : "nosuid, nodev or noexec");
  verbose ("mount %s -> %s (bind%s%s%s%s%s)", b->src, b->dst, b->shallow ? "" : ", recursive",
           b->ro ? ", read-only" : "", b->attrs & MOUNT_ATTR_NOSUID ? ", nosuid" : "",
           b->attrs & MOUNT_ATTR_NODEV ? ", nodev" : "",
           b->attrs & MOUNT_ATTR_NOEXEC ? ", noexec" : "");
  if (syscall (SYS_move_mount, tree, "", dst, "",
               MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
    dst_refused (name, b, "move_mount: %s", strerror (errno));
}

void
bind_check_all (const char *name, const struct bind *binds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    {
      if (binds[i].optional)
        continue; /* never ends the run: mount_one leaves it out if it cannot be made */
      int fd = open_dst (name, &binds[i], false);
      if (fd >= 0)
        close (fd);
    }
}

void
bind_mount_all (const char *name, const struct bind *binds, size_t n)
{
  for (size_t i = 0; i < n; i++)
    mount_one (name, &binds[i]);
}
