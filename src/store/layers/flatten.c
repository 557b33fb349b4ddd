/* Flat roots: a root made by merging the layer store's layers into a directory of its own
 * (layers.h: layers_flatten), for chroot mode and wherever an overlay cannot be mounted.
 * Whiteouts (0/0 character devices) remove, an opaque directory hides what is below, data
 * is cloned (FICLONE) where the filesystem can, else copied; nothing is decompressed. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/roots.h"
#include "common/util.h"
#include "store/layers/clone.h"
#include "store/interrupt.h"
#include "store/layers/layers.h"
#include "common/walk.h"

#define OPAQUE_XATTR "user.overlay.opaque"

struct dir_fix
{
  char *path;
  struct stat st;
  size_t seq;
};

struct flattener
{
  struct cloner c;
  const char *what; /* what the root is made from (the archive, the image), for messages */
  const char *hex;  /* the layer being merged, for messages */
  struct dir_fix *fixes;
  size_t n_fixes, cap_fixes;
};

__attribute__((noreturn)) static void
flatten_fail (struct flattener *f, const char *rel)
{
  /* A signal that broke the copy (EINTR) ends it as an interrupted create: 128+N. */
  int saved = errno;
  interrupt_check ();
  errno = saved;
  die_with_error ("%s: cannot copy '%s' of layer %s into the new root", f->what,
                  rel[0] ? rel : ".", f->hex);
}

static bool
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

static bool
is_opaque (int dirfd)
{
  char v[2];
  return fgetxattr (dirfd, OPAQUE_XATTR, v, sizeof v) == 1 && v[0] == 'y';
}

/* A directory stream of its own on DIRFD (REL from the root, for the message). */
static DIR *
open_dir_stream (struct flattener *f, int dirfd, const char *rel)
{
  DIR *d = opendir_dup (dirfd);
  if (d == NULL)
    flatten_fail (f, rel);
  return d;
}

/* Remove everything inside DIRFD (what lower layers left in an opaque directory). */
static void
empty_dir (struct flattener *f, int dirfd, const char *rel)
{
  DIR *d = open_dir_stream (f, dirfd, rel);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        if (rm_rf_at (dirfd, de->d_name) < 0)
          flatten_fail (f, rel);
        rewinddir (d);
      }
  closedir (d);
}

static void
add_fix (struct flattener *f, const char *rel, const struct stat *st)
{
  if (f->n_fixes == f->cap_fixes)
    {
      f->cap_fixes = f->cap_fixes ? 2 * f->cap_fixes : 64;
      f->fixes = xrealloc (f->fixes, f->cap_fixes * sizeof *f->fixes);
    }
  f->fixes[f->n_fixes] = (struct dir_fix) { xstrdup (rel), *st, f->n_fixes };
  f->n_fixes++;
}

/* Merge the layer directory SRC into the root's directory DST (REL from the root). */
static void
merge_dir (struct flattener *f, int src, int dst, const char *rel, int depth)
{
  /* Deeper layers cannot come out of the extractor nor of a walk (walk.h); each level of
   * the merge holds three fds (its directory stream, the source and target below). */
  if (depth > WALK_MAX_DEPTH)
    {
      errno = ELOOP;
      flatten_fail (f, rel);
    }
  DIR *d = open_dir_stream (f, src, rel);
  struct dirent *de;
  while ((errno = 0, de = readdir (d)) != NULL)
    {
      const char *name = de->d_name;
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      interrupt_check ();
      cleanup_free char *path = rel[0] ? xasprintf ("%s/%s", rel, name) : xstrdup (name);
      struct stat st, below;
      if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        flatten_fail (f, path);
      bool exists = fstatat (dst, name, &below, AT_SYMLINK_NOFOLLOW) == 0;
      if (is_whiteout (&st))
        {
          if (exists && rm_rf_at (dst, name) < 0)
            flatten_fail (f, path);
          continue;
        }
      /* A directory its owner cannot read or search (0311, 0000), a file it cannot read:
       * given the permission while it is copied (an overlay's mounter has it through its
       * user namespace; a plain user copying has only this). */
      mode_t need = S_ISDIR (st.st_mode) ? S_IRUSR | S_IXUSR : S_ISREG (st.st_mode) ? S_IRUSR : 0;
      bool opened_up = (st.st_mode & need) != need;
      if (opened_up && fchmodat (src, name, (st.st_mode | need) & 07777, 0) < 0)
        flatten_fail (f, path);
      if (S_ISDIR (st.st_mode))
        {
          cleanup_fd int s = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (s < 0)
            flatten_fail (f, path);
          if (exists && !S_ISDIR (below.st_mode))
            {
              if (unlinkat (dst, name, 0) < 0)
                flatten_fail (f, path);
              exists = false;
            }
          /* Created 0700: the layers above may still write into it; its own mode and
           * times come at the end (flatten_fixups). */
          if (!exists && mkdirat (dst, name, 0700) < 0)
            flatten_fail (f, path);
          cleanup_fd int t = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (t < 0)
            flatten_fail (f, path);
          if (exists && is_opaque (s))
            empty_dir (f, t, path);
          merge_dir (f, s, t, path, depth + 1);
          if (clone_xattrs (s, t) < 0)
            flatten_fail (f, path);
          add_fix (f, path, &st);
        }
      else
        {
          if (exists && rm_rf_at (dst, name) < 0)
            flatten_fail (f, path);
          if (clone_entry (&f->c, src, dst, name, &st, path) < 0)
            flatten_fail (f, path);
        }
      if (opened_up && fchmodat (src, name, st.st_mode & 07777, 0) < 0)
        flatten_fail (f, path);
    }
  if (errno != 0)
    flatten_fail (f, rel);
  closedir (d);
}

static int
compare_fix_path (const void *pa, const void *pb)
{
  const struct dir_fix *a = pa, *b = pb;
  int c = strcmp (a->path, b->path);
  return c != 0 ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static size_t
path_depth (const char *p)
{
  size_t n = 1;
  for (; *p; p++)
    n += *p == '/';
  return n;
}

static int
compare_fix_depth (const void *pa, const void *pb)
{
  const struct dir_fix *a = pa, *b = pb;
  size_t da = path_depth (a->path), db = path_depth (b->path);
  return (da < db) - (da > db); /* deepest first */
}

/* Each directory's mode and times, from the topmost layer that has it, deepest first (a
 * read-only directory cannot block its children's). One a later layer replaced by a file
 * or removed is skipped. */
static void
flatten_fixups (struct flattener *f, int rootfd)
{
  if (f->n_fixes == 0)
    return;
  qsort (f->fixes, f->n_fixes, sizeof *f->fixes, compare_fix_path);
  size_t kept = 0;
  for (size_t i = 0; i < f->n_fixes; i++)
    if (i + 1 < f->n_fixes && strcmp (f->fixes[i].path, f->fixes[i + 1].path) == 0)
      free (f->fixes[i].path);
    else
      f->fixes[kept++] = f->fixes[i];
  f->n_fixes = kept;
  qsort (f->fixes, f->n_fixes, sizeof *f->fixes, compare_fix_depth);
  for (size_t i = 0; i < f->n_fixes; i++)
    {
      const struct dir_fix *x = &f->fixes[i];
      cleanup_fd int fd = open_beneath (rootfd, x->path, O_RDONLY | O_DIRECTORY);
      if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
        continue;
      struct timespec t[2] = { x->st.st_atim, x->st.st_mtim };
      if (fd < 0 || fchmod (fd, x->st.st_mode & 07777) < 0 || futimens (fd, t) < 0)
        die_with_error ("cannot set the mode and times of '%s' in the new root", x->path);
    }
}

uint64_t
layers_flatten (int rootfd, char *const *hexes, size_t n, const char *what)
{
  struct flattener f = { .c = { .dst_root = rootfd }, .what = what };
  for (size_t i = 0; i < n; i++)
    {
      f.hex = hexes[i];
      cleanup_free char *tree = layer_tree_path (hexes[i]);
      cleanup_fd int src = open (tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (src < 0)
        die_with_error ("cannot open layer %s", tree);
      if (i > 0 && is_opaque (src))
        empty_dir (&f, rootfd, "");
      cloner_forget_links (&f.c);
      merge_dir (&f, src, rootfd, "", 0);
    }
  flatten_fixups (&f, rootfd);
  for (size_t i = 0; i < f.n_fixes; i++)
    free (f.fixes[i].path);
  free (f.fixes);
  cloner_forget_links (&f.c);
  return f.c.bytes;
}

void
layers_root_mode (int rootfd, const char *hex)
{
  cleanup_free char *tree = layer_tree_path (hex);
  struct stat st;
  if (stat (tree, &st) < 0)
    die_with_error ("cannot read the mode of %s", tree);
  struct timespec t[2] = { st.st_atim, st.st_mtim };
  if (fchmod (rootfd, st.st_mode & 07777) < 0 || futimens (rootfd, t) < 0)
    die_with_error ("cannot set the mode and times of the new root");
}
