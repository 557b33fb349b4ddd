/* An overlay root's merged tree read from its layers, without mounting it (merged.h).
 *
 * The rules are overlayfs's, for the forms the layer store writes: a directory merges with
 * the same directory of every layer below it, down to the first one that is opaque
 * (user.overlay.opaque "y") or that the next layer hides (a whiteout, a 0/0 character
 * device, or anything that is not a directory); the first entry found top down is the one
 * shown. Anything else on a path asked about (a symlink on the way, an opaque value other
 * than "y") is MERGED_OTHER: the caller then mounts the overlay instead. */
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
#include "common/merged.h"

#define OPAQUE_XATTR "user.overlay.opaque"
#define COPY_UP_FILE_MAX (16 * 1024 * 1024)

void
merged_open (struct merged *mv, char *const *layers)
{
  size_t n = strv_length (layers);
  *mv = (struct merged) { .fds = xcalloc (n + 1, sizeof (int)), .n = n };
  for (size_t i = 0; i < n; i++)
    {
      /* Top first: the metadata lists them bottom first. */
      cleanup_free char *tree = overlay_layer_tree (layers[n - 1 - i]);
      mv->fds[i] = tree != NULL ? open (tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
                                : -1;
      if (mv->fds[i] < 0)
        die_with_error ("cannot open the layer %s", tree != NULL ? tree : layers[n - 1 - i]);
    }
}

void
merged_close (struct merged *mv)
{
  for (size_t i = 0; i < mv->n; i++)
    close (mv->fds[i]);
  free (mv->fds);
  *mv = (struct merged) { 0 };
}

static bool
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

/* 1 when directory PATH of layer FD is opaque, 0 when not, -1 when its mark is one we do
 * not read. */
static int
opaque_at (int fd, const char *path)
{
  cleanup_fd int dfd = openat (fd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  char v[2];
  ssize_t len = dfd >= 0 ? fgetxattr (dfd, OPAQUE_XATTR, v, sizeof v) : -1;
  if (len < 0)
    return dfd >= 0 && (errno == ENODATA || errno == ENOTSUP) ? 0 : -1;
  return len == 1 && v[0] == 'y' ? 1 : -1;
}

enum merged_kind
merged_lookup (const struct merged *mv, const char *path, size_t *layer, struct stat *st)
{
  /* LIVE[i]: layer i's copy of the directory reached so far is part of the merge. */
  cleanup_free bool *live = xcalloc (mv->n + 1, sizeof (bool));
  for (size_t i = 0; i < mv->n; i++)
    live[i] = true;
  struct strbuf at = { 0 };
  cleanup_free char *copy = xstrdup (path);
  enum merged_kind kind = MERGED_DIR;
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      if (kind != MERGED_DIR)
        {
          kind = kind == MERGED_FILE ? MERGED_ABSENT : MERGED_OTHER; /* ENOTDIR, or a symlink */
          break;
        }
      if (strcmp (c, ".") == 0 || strcmp (c, "..") == 0)
        {
          kind = MERGED_OTHER;
          break;
        }
      strbuf_append (&at, at.len > 0 ? "/" : "");
      strbuf_append (&at, c);
      bool found = false, below_hidden = false;
      for (size_t i = 0; i < mv->n; i++)
        {
          bool was_live = live[i];
          live[i] = false;
          struct stat s;
          if (!was_live || below_hidden)
            continue;
          if (fstatat (mv->fds[i], at.str, &s, AT_SYMLINK_NOFOLLOW) < 0)
            {
              if (errno != ENOENT)
                die_with_error ("cannot read %s in the layer store", at.str);
              continue;
            }
          if (!found)
            {
              found = true;
              *layer = i;
              *st = s;
              kind = is_whiteout (&s) ? MERGED_ABSENT
                     : S_ISDIR (s.st_mode) ? MERGED_DIR
                     : S_ISREG (s.st_mode) ? MERGED_FILE : MERGED_OTHER;
            }
          if (!S_ISDIR (s.st_mode) || kind != MERGED_DIR)
            {
              below_hidden = true;
              continue;
            }
          live[i] = true;
          int opaque = opaque_at (mv->fds[i], at.str);
          if (opaque < 0)
            kind = MERGED_OTHER;
          below_hidden = opaque != 0;
        }
      if (!found)
        kind = MERGED_ABSENT;
      if (kind == MERGED_ABSENT || kind == MERGED_OTHER)
        break;
    }
  free (at.str);
  return kind;
}

/* Give the upper's PATH the mode and times of the merged entry ST. */
static void
copy_attrs (int upperfd, const char *path, const struct stat *st)
{
  struct timespec times[2] = { st->st_atim, st->st_mtim };
  if (fchmodat (upperfd, path, st->st_mode & 07777, 0) < 0
      || utimensat (upperfd, path, times, AT_SYMLINK_NOFOLLOW) < 0)
    die_with_error ("cannot copy the attributes of %s into the new root's upper directory",
                    path);
}

/* Copy the regular file PATH (ST, of layer FD) into the upper. */
static void
copy_file (int fd, int upperfd, const char *path, const struct stat *st)
{
  size_t len;
  cleanup_free char *data = load_file_at (fd, path, COPY_UP_FILE_MAX, &len);
  cleanup_fd int out = openat (upperfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0600);
  if (data == NULL || out < 0 || write_all (out, data, len) < 0)
    die_with_error ("cannot copy %s into the new root's upper directory", path);
  copy_attrs (upperfd, path, st);
}

void
merged_copy_up (const struct merged *mv, int upperfd, const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  struct strbuf at = { 0 };
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      strbuf_append (&at, at.len > 0 ? "/" : "");
      strbuf_append (&at, c);
      size_t layer;
      struct stat st, up;
      enum merged_kind kind = merged_lookup (mv, at.str, &layer, &st);
      if (kind != MERGED_DIR && kind != MERGED_FILE)
        break; /* nothing to copy: what is written there is new */
      if (fstatat (upperfd, at.str, &up, AT_SYMLINK_NOFOLLOW) == 0)
        continue; /* copied up already */
      if (kind == MERGED_FILE)
        {
          copy_file (mv->fds[layer], upperfd, at.str, &st);
          break;
        }
      if (mkdirat (upperfd, at.str, 0700) < 0)
        die_with_error ("cannot create %s in the new root's upper directory", at.str);
      copy_attrs (upperfd, at.str, &st);
    }
  free (at.str);
}
