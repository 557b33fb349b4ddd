/* Unpacked copies of archives and cloning them (see clone.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "store/cache.h"
#include "store/clone.h"
#include "store/interrupt.h"

#define UNPACKED_DIR_MODE 0700
/* Deeper trees are unpacked instead (each level holds two fds). */
#define CLONE_MAX_DEPTH 256

struct hardlink
{
  dev_t dev;
  ino_t ino;
  char *path; /* relative to the destination root */
};

struct cloner
{
  bool reflink_only; /* fail (EOPNOTSUPP) rather than copy data */
  bool reflink_failed;
  int dst_root;
  uint64_t bytes;
  struct hardlink *links;
  size_t n_links, cap_links;
};

static void
cloner_clear (struct cloner *c)
{
  for (size_t i = 0; i < c->n_links; i++)
    free (c->links[i].path);
  free (c->links);
}

static bool
no_reflink_errno (int e)
{
  return e == EOPNOTSUPP || e == ENOTTY || e == EXDEV || e == EINVAL || e == ENOSYS;
}

/* Copy IN's data into OUT: by reference when the filesystem can, else in the kernel,
 * else by hand. */
static int
copy_data (struct cloner *c, int in, int out, off_t size)
{
  if (size == 0)
    return 0;
  if (!c->reflink_failed)
    {
      if (ioctl (out, FICLONE, in) == 0)
        return 0;
      if (!no_reflink_errno (errno))
        return -1;
      c->reflink_failed = true;
    }
  if (c->reflink_only)
    {
      errno = EOPNOTSUPP;
      return -1;
    }
  off_t left = size;
  while (left > 0)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, (size_t) left, 0);
      if (n < 0 && no_reflink_errno (errno))
        break;
      if (n < 0)
        return -1;
      if (n == 0)
        return 0; /* the file shrank under us */
      left -= n;
    }
  static char buf[128 * 1024];
  for (;;)
    {
      ssize_t n = read (in, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return (int) n;
      for (ssize_t done = 0; done < n;)
        {
          ssize_t w = write (out, buf + done, (size_t) (n - done));
          if (w < 0 && errno == EINTR)
            continue;
          if (w < 0)
            return -1;
          done += w;
        }
    }
}

static int
set_times (int dirfd, const char *name, const struct stat *st)
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

/* Copy the extended attributes the extractor restores (user.* and security.capability,
 * extract.c) from IN to OUT, fd to fd. After the data: a write clears a capability. A
 * capability the kernel refuses here (a plain user) fails the clone, which then unpacks. */
static int
copy_xattrs (int in, int out)
{
  static char names[XATTR_LIST_MAX];
  ssize_t len = flistxattr (in, names, sizeof names);
  if (len < 0)
    return errno == EOPNOTSUPP ? 0 : -1;
  for (const char *n = names; n < names + len; n += strlen (n) + 1)
    {
      if (!str_has_prefix (n, "user.") && strcmp (n, "security.capability") != 0)
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
  if (out < 0 || copy_data (c, in, out, st->st_size) < 0
      || fchmod (out, st->st_mode & 01777) < 0 || copy_xattrs (in, out) < 0)
    return -1;
  struct timespec t[2] = { st->st_atim, st->st_mtim };
  if (futimens (out, t) < 0)
    return -1;
  c->bytes += (uint64_t) st->st_size;
  return 0;
}

/* Clone the directory SRC's entries into DST (both fds), depth first; each directory's
 * mode and times are set after its entries are in. REL is SRC's path from the root. */
static int
clone_dir (struct cloner *c, int src, int dst, const char *rel, int depth)
{
  if (depth > CLONE_MAX_DEPTH)
    {
      errno = ELOOP;
      return -1;
    }
  int dfd = dup (src);
  if (dfd < 0)
    return -1;
  DIR *d = fdopendir (dfd);
  if (d == NULL)
    {
      close (dfd);
      return -1;
    }
  int r = 0;
  struct dirent *de;
  while (r == 0 && (errno = 0, de = readdir (d)) != NULL)
    {
      const char *name = de->d_name;
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      interrupt_check ();
      cleanup_free char *path = rel[0] ? xasprintf ("%s/%s", rel, name) : xstrdup (name);
      struct stat st;
      if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        r = -1;
      else if (S_ISDIR (st.st_mode))
        {
          if (mkdirat (dst, name, 0700) < 0)
            {
              r = -1;
              break;
            }
          cleanup_fd int s = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          cleanup_fd int t = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (s < 0 || t < 0 || clone_dir (c, s, t, path, depth + 1) < 0
              || copy_xattrs (s, t) < 0 || fchmod (t, st.st_mode & 01777) < 0
              || set_times (dst, name, &st) < 0)
            r = -1;
        }
      else if ((r = link_earlier (c, dst, name, &st, path)) != 0)
        r = r < 0 ? -1 : 0;
      else if (S_ISREG (st.st_mode))
        r = clone_file (c, src, dst, name, &st);
      else if (S_ISFIFO (st.st_mode))
        r = clone_fifo (dst, name, &st);
      else if (S_ISLNK (st.st_mode))
        {
          char target[PATH_MAX];
          ssize_t n = readlinkat (src, name, target, sizeof target - 1);
          if (n < 0)
            r = -1;
          else
            {
              target[n] = '\0';
              r = symlinkat (target, dst, name) < 0 || set_times (dst, name, &st) < 0 ? -1 : 0;
            }
        }
      else
        {
          /* Nothing else is ever unpacked (devices and sockets are skipped): the
           * copy was tampered with; do not make a root that differs from the archive. */
          errno = EINVAL;
          r = -1;
        }
    }
  if (r == 0 && errno != 0)
    r = -1;
  int errsv = errno;
  closedir (d);
  errno = errsv;
  return r;
}

/* Remove everything inside DIRFD (not DIRFD itself). */
static void
empty_dir (int dirfd)
{
  int dfd = dup (dirfd);
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      return;
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        if (rm_rf_at (dirfd, de->d_name) < 0)
          warn ("cannot remove %s after a failed clone: %s", de->d_name, strerror (errno));
        rewinddir (d);
      }
  closedir (d);
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static char *
unpacked_dir (void)
{
  cleanup_free char *home = paths_xdg_dir ("XDG_CACHE_HOME", ".cache");
  return xasprintf ("%s/enter-devroot/unpacked", home);
}

bool
unpacked_any (void)
{
  cleanup_free char *dir = unpacked_dir ();
  DIR *d = opendir (dir);
  if (d == NULL)
    return false;
  bool any = false;
  struct dirent *de;
  while (!any && (de = readdir (d)) != NULL)
    any = de->d_name[0] != '.';
  closedir (d);
  return any;
}

bool
unpacked_clone_into (const char *hex, int rootfd, uint64_t *size_bytes, struct stat *root)
{
  cleanup_free char *dir = unpacked_dir ();
  cleanup_free char *meta_path = xasprintf ("%s/%s/meta.json", dir, hex);
  cleanup_free char *tree = xasprintf ("%s/%s/root", dir, hex);
  struct meta m = { 0 };
  if (meta_read (meta_path, &m) < 0)
    return false;
  uint64_t size = m.size_bytes;
  meta_clear (&m);
  cleanup_fd int src = open (tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (src < 0 || fstat (src, &st) < 0)
    return false;
  struct cloner c = { .dst_root = rootfd };
  int r = clone_dir (&c, src, rootfd, "", 0);
  int errsv = errno;
  cloner_clear (&c);
  if (r < 0)
    {
      warn ("cannot clone the unpacked copy %s (%s): unpacking instead", tree, strerror (errsv));
      empty_dir (rootfd);
      return false;
    }
  *size_bytes = size;
  *root = st;
  return true;
}

bool
unpacked_can_keep (int rootfd)
{
  cleanup_free char *dir = unpacked_dir ();
  if (mkdir_p (dir, UNPACKED_DIR_MODE) < 0)
    return false;
  /* Two unnamed files (O_TMPFILE: nothing to clean up), one byte, one clone. */
  cleanup_fd int from = openat (rootfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  cleanup_fd int to = open (dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  return from >= 0 && to >= 0 && write_all (from, "", 1) == 0 && ioctl (to, FICLONE, from) == 0;
}

struct unpacked_keeping
{
  char *hex;
  char *dir;   /* the unpacked-copy directory */
  char *tmp;   /* DIR/.HEX.XXXXXX, holding root/ */
  int tmpfd, dst;
};

static void
keeping_free (struct unpacked_keeping *k)
{
  if (k->tmpfd >= 0)
    close (k->tmpfd);
  if (k->dst >= 0)
    close (k->dst);
  free (k->hex);
  free (k->dir);
  free (k->tmp);
  free (k);
}

void
unpacked_keep_cancel (struct unpacked_keeping *k)
{
  if (rm_rf_at (AT_FDCWD, k->tmp) < 0)
    warn ("cannot remove %s: %s", k->tmp, strerror (errno));
  keeping_free (k);
}

struct unpacked_keeping *
unpacked_keep_begin (const char *hex, int rootfd)
{
  cleanup_free char *dir = unpacked_dir ();
  cleanup_free char *final = xasprintf ("%s/%s", dir, hex);
  struct stat st;
  if (lstat (final, &st) == 0)
    return NULL;
  if (mkdir_p (dir, UNPACKED_DIR_MODE) < 0)
    return NULL;
  struct unpacked_keeping *k = xcalloc (1, sizeof *k);
  k->hex = xstrdup (hex);
  k->tmp = xasprintf ("%s/.%s.XXXXXX", dir, hex);
  k->dir = steal_pointer (&dir);
  k->tmpfd = k->dst = -1;
  if (mkdtemp (k->tmp) == NULL)
    {
      keeping_free (k);
      return NULL;
    }
  k->tmpfd = open (k->tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  struct cloner c = { .reflink_only = true };
  int r = -1;
  if (k->tmpfd >= 0 && mkdirat (k->tmpfd, "root", 0700) == 0
      && (k->dst = openat (k->tmpfd, "root", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
    {
      c.dst_root = k->dst;
      /* Sharing extents needs the source's data on disk, and FICLONE writes back each
       * source file's own dirty pages before it shares them (generic_remap_file_range_prep),
       * so the copy only ever names data that is on disk: nothing else needs flushing, and
       * above all not the whole filesystem (syncfs), whose other dirty data is not ours to
       * wait for. The unpacking started the writeback of every file as it wrote it
       * (extract_opts.start_writeback), so these flushes mostly find it done. The copy's
       * metadata is fsync()ed and renamed into place last: a crash before leaves debris
       * `cache clean` removes, never a copy that is trusted and incomplete. */
      r = clone_dir (&c, rootfd, k->dst, "", 0);
    }
  int errsv = errno;
  cloner_clear (&c);
  if (r == 0)
    return k;
  if (!(c.reflink_failed && errsv == EOPNOTSUPP) && errsv != ELOOP)
    warn ("cannot keep an unpacked copy of %s in %s: %s", hex, k->dir, strerror (errsv));
  unpacked_keep_cancel (k);
  return NULL;
}

void
unpacked_keep_end (struct unpacked_keeping *k, int rootfd, const char *source,
                   uint64_t size_bytes)
{
  /* Only the root directory's own mode and times, through the fd of the directory itself:
   * nothing in the root is read now that code may run in it. */
  struct stat st;
  if (fstat (rootfd, &st) < 0 || fchmod (k->dst, st.st_mode & 01777) < 0
      || set_times (k->tmpfd, "root", &st) < 0)
    {
      warn ("cannot keep an unpacked copy of %s in %s: %s", k->hex, k->dir, strerror (errno));
      unpacked_keep_cancel (k);
      return;
    }
  cleanup_free char *meta_path = xasprintf ("%s/meta.json", k->tmp);
  struct meta m = {
    .name = xstrdup (k->hex),
    .source = xstrdup (source),
    .sha256 = xstrdup (k->hex),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = size_bytes,
  };
  meta_write (meta_path, &m);
  meta_clear (&m);
  cleanup_free char *final = xasprintf ("%s/%s", k->dir, k->hex);
  if (rename (k->tmp, final) == 0)
    {
      keeping_free (k);
      return;
    }
  /* ENOTEMPTY/EEXIST: a concurrent create kept one first */
  if (errno != ENOTEMPTY && errno != EEXIST)
    warn ("cannot keep an unpacked copy of %s in %s: %s", k->hex, k->dir, strerror (errno));
  unpacked_keep_cancel (k);
}

void
unpacked_list (struct strbuf *sb, bool json, bool *first)
{
  cleanup_free char *dir = unpacked_dir ();
  DIR *d = opendir (dir);
  if (d == NULL)
    return;
  struct dirent *de;
  cleanup_strv char **names = xcalloc (1, sizeof *names);
  size_t n = 0;
  while ((de = readdir (d)) != NULL)
    if (de->d_name[0] != '.')
      {
        names = xrealloc (names, (n + 2) * sizeof *names);
        names[n++] = xstrdup (de->d_name);
        names[n] = NULL;
      }
  closedir (d);
  if (n > 0) /* qsort may not be handed a NULL array */
    qsort (names, n, sizeof *names, compare_strings);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *meta_path = xasprintf ("%s/%s/meta.json", dir, names[i]);
      cleanup_free char *tree = xasprintf ("%s/%s/root", dir, names[i]);
      struct meta m = { 0 };
      if (meta_read (meta_path, &m) < 0)
        continue;
      if (json)
        {
          strbuf_append (sb, *first ? "\n  {" : ",\n  {");
          strbuf_append (sb, "\"sha256\": ");
          json_append_string (sb, names[i]);
          strbuf_appendf (sb, ", \"size_bytes\": %" PRIu64 ", \"origin\": ", m.size_bytes);
          json_append_string (sb, m.source);
          strbuf_append (sb, ", \"path\": ");
          json_append_string (sb, tree);
          strbuf_append (sb, ", \"unpacked\": true}");
        }
      else
        strbuf_appendf (sb, "%s  %12" PRIu64 "  unpacked copy of %s\n", names[i], m.size_bytes,
                        m.source);
      *first = false;
      meta_clear (&m);
    }
}

unsigned long
unpacked_clean (void)
{
  cleanup_free char *dir = unpacked_dir ();
  DIR *d = opendir (dir);
  if (d == NULL)
    return 0;
  unsigned long removed = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      /* A create cloning from it fails, warns and unpacks instead. */
      if (rm_rf_at (dirfd (d), de->d_name) < 0)
        die_with_error ("cannot delete %s/%s", dir, de->d_name);
      if (de->d_name[0] != '.')
        removed++;
      rewinddir (d);
    }
  closedir (d);
  return removed;
}
