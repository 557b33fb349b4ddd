/* A stack of layer trees read as the overlay of them would show it (layer-view.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/overlay.h"
#include "common/util.h"
#include "common/layer-view.h"

#define OPAQUE_XATTR "user.overlay.opaque"

bool
layer_view_is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

bool
layer_view_is_opaque (int dirfd)
{
  char v[2];
  return fgetxattr (dirfd, OPAQUE_XATTR, v, sizeof v) == 1 && v[0] == 'y';
}

static void
dir_push (struct layer_view_dir *d, int fd)
{
  d->fds = xrealloc (d->fds, (d->n + 1) * sizeof *d->fds);
  d->fds[d->n++] = fd;
}

void
layer_view_dir_clear (struct layer_view_dir *d)
{
  for (size_t i = 0; i < d->n; i++)
    close (d->fds[i]);
  free (d->fds);
  *d = (struct layer_view_dir) { 0 };
}

void
layer_view_root (struct layer_view_dir *d, char *const *diff_ids, size_t n, const char *what)
{
  *d = (struct layer_view_dir) { 0 };
  for (size_t i = n; i-- > 0;)
    {
      cleanup_free char *tree = overlay_layer_tree (diff_ids[i]);
      if (tree == NULL)
        die ("%s: invalid layer '%s'", what, diff_ids[i]);
      int fd = open (tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        die_with_error ("%s: cannot open layer %s in the layer store (%s)", what, diff_ids[i],
                        tree);
      dir_push (d, fd);
    }
}

void
layer_view_lookup (const struct layer_view_dir *parent, const char *name, const char *path,
                   struct layer_view_entry *out, const char *what)
{
  *out = (struct layer_view_entry) { .kind = LAYER_VIEW_NONE, .dirfd = -1 };
  for (size_t i = 0; i < parent->n; i++)
    {
      struct stat st;
      if (fstatat (parent->fds[i], name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        {
          if (errno == ENOENT)
            continue;
          die_with_error ("%s: cannot read /%s in the layer store", what, path);
        }
      if (layer_view_is_whiteout (&st))
        break;
      if (!S_ISDIR (st.st_mode))
        {
          /* Not a directory: it is the entry when it is the top one; below a directory it
           * ends the merge. */
          if (out->kind == LAYER_VIEW_NONE)
            *out = (struct layer_view_entry) { .kind = LAYER_VIEW_OTHER, .st = st,
                                               .dirfd = parent->fds[i] };
          break;
        }
      int fd = openat (parent->fds[i], name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        die_with_error ("%s: cannot open /%s in the layer store", what, path);
      if (out->kind == LAYER_VIEW_NONE)
        {
          out->kind = LAYER_VIEW_DIR;
          out->st = st;
        }
      dir_push (&out->dir, fd);
      if (layer_view_is_opaque (fd))
        break;
    }
}

/* A name of one layer's directory: where it was found, whether it is a whiteout. */
struct layer_name
{
  char *name;
  size_t layer;
  bool whiteout;
};

static int
compare_layer_names (const void *a, const void *b)
{
  const struct layer_name *x = a, *y = b;
  int c = strcmp (x->name, y->name);
  if (c != 0)
    return c;
  return x->layer < y->layer ? -1 : x->layer > y->layer;
}

char **
layer_view_names (const struct layer_view_dir *d, const char *path, const char *what)
{
  struct layer_name *all = NULL;
  size_t n = 0, cap = 0;
  for (size_t i = 0; i < d->n; i++)
    {
      int fd = openat (d->fds[i], ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      DIR *dir = fd >= 0 ? fdopendir (fd) : NULL;
      if (dir == NULL)
        {
          if (fd >= 0)
            close (fd);
          die_with_error ("%s: cannot read /%s in the layer store", what, path);
        }
      struct dirent *de;
      while ((de = readdir (dir)) != NULL)
        {
          if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
            continue;
          struct stat st;
          bool whiteout = (de->d_type == DT_CHR || de->d_type == DT_UNKNOWN)
                          && fstatat (dirfd (dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0
                          && layer_view_is_whiteout (&st);
          if (n == cap)
            {
              cap = cap ? 2 * cap : 32;
              all = xrealloc (all, cap * sizeof *all);
            }
          all[n++] = (struct layer_name) { xstrdup (de->d_name), i, whiteout };
        }
      closedir (dir);
    }
  if (n > 0)
    qsort (all, n, sizeof *all, compare_layer_names);
  /* Each name as its top layer has it: gone when that is a whiteout. */
  char **names = xcalloc (n + 1, sizeof *names);
  size_t kept = 0;
  for (size_t i = 0; i < n; i++)
    if ((i == 0 || strcmp (all[i - 1].name, all[i].name) != 0) && !all[i].whiteout)
      names[kept++] = xstrdup (all[i].name);
  for (size_t i = 0; i < n; i++)
    free (all[i].name);
  free (all);
  return names;
}
