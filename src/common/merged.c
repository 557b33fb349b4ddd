/* An overlay root's merged tree read from its layers, without mounting it (merged.h): a
 * path is looked up one component at a time through layer-view.c, from each layer's
 * directory fd, so the rules are overlayfs's (layer-view.h) and nothing is followed. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/merged.h"
#include "common/util.h"

#define COPY_UP_FILE_MAX (16 * 1024 * 1024)

void
merged_open (struct merged *mv, char *const *layers)
{
  layer_view_root (&mv->root, layers, strv_length (layers), "cannot create the root");
}

void
merged_close (struct merged *mv)
{
  layer_view_dir_clear (&mv->root);
}

/* A walk down one path of the merged tree: the directory reached (DIR: owned unless it is
 * the root) and what the last component looked up is. */
struct merged_walk
{
  struct layer_view_dir dir;
  bool owned;
  struct layer_view_entry entry;
  enum merged_kind kind;
};

static void
walk_begin (struct merged_walk *w, const struct merged *mv)
{
  *w = (struct merged_walk) { .dir = mv->root, .kind = MERGED_DIR, .entry = { .dirfd = -1 } };
}

static void
walk_end (struct merged_walk *w)
{
  if (w->owned)
    layer_view_dir_clear (&w->dir);
  layer_view_dir_clear (&w->entry.dir);
}

/* Look up NAME (AT: the path so far) in the directory reached; a directory becomes the one
 * reached. */
static enum merged_kind
walk_step (struct merged_walk *w, const char *name, const char *at)
{
  if (w->kind != MERGED_DIR)
    return w->kind = w->kind == MERGED_FILE ? MERGED_ABSENT : MERGED_OTHER; /* ENOTDIR */
  if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
    return w->kind = MERGED_OTHER;
  layer_view_dir_clear (&w->entry.dir);
  layer_view_lookup (&w->dir, name, at, &w->entry, "cannot create the root");
  switch (w->entry.kind)
    {
    case LAYER_VIEW_NONE:
      return w->kind = MERGED_ABSENT;
    case LAYER_VIEW_OTHER:
      return w->kind = S_ISREG (w->entry.st.st_mode) ? MERGED_FILE : MERGED_OTHER;
    case LAYER_VIEW_DIR:
      if (w->owned)
        layer_view_dir_clear (&w->dir);
      w->dir = w->entry.dir;
      w->owned = true;
      w->entry.dir = (struct layer_view_dir) { 0 };
      return w->kind = MERGED_DIR;
    }
  return w->kind = MERGED_OTHER;
}

enum merged_kind
merged_lookup (const struct merged *mv, const char *path)
{
  struct merged_walk w;
  walk_begin (&w, mv);
  cleanup_free char *copy = xstrdup (path);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL && w.kind != MERGED_ABSENT
                                              && w.kind != MERGED_OTHER;
       c = strtok_r (NULL, "/", &save))
    walk_step (&w, c, path);
  walk_end (&w);
  return w.kind;
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

/* Copy the regular file NAME of the layer directory DIRFD (ST) to PATH in the upper. */
static void
copy_file (int dirfd, const char *name, int upperfd, const char *path, const struct stat *st)
{
  size_t len;
  cleanup_free char *data = load_regular_file_at (dirfd, name, COPY_UP_FILE_MAX, &len);
  cleanup_fd int out = openat (upperfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                               0600);
  if (data == NULL || out < 0 || write_all (out, data, len) < 0)
    die_with_error ("cannot copy %s into the new root's upper directory", path);
  copy_attrs (upperfd, path, st);
}

void
merged_copy_up (const struct merged *mv, int upperfd, const char *path)
{
  struct merged_walk w;
  walk_begin (&w, mv);
  cleanup_free char *copy = xstrdup (path);
  struct strbuf at = { 0 };
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      strbuf_append (&at, at.len > 0 ? "/" : "");
      strbuf_append (&at, c);
      enum merged_kind kind = walk_step (&w, c, at.str);
      struct stat up;
      if (kind != MERGED_DIR && kind != MERGED_FILE)
        break; /* nothing to copy: what is written there is new */
      if (fstatat (upperfd, at.str, &up, AT_SYMLINK_NOFOLLOW) == 0)
        continue; /* copied up already */
      if (kind == MERGED_FILE)
        {
          copy_file (w.entry.dirfd, c, upperfd, at.str, &w.entry.st);
          break;
        }
      if (mkdirat (upperfd, at.str, 0700) < 0)
        die_with_error ("cannot create %s in the new root's upper directory", at.str);
      copy_attrs (upperfd, at.str, &w.entry.st);
    }
  free (at.str);
  walk_end (&w);
}
