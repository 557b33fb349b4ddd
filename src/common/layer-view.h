/* The tree a stack of the layer store's layers makes (what an overlay of them shows), read
 * one name at a time without mounting anything: push compares a root with its base image
 * this way (layer-diff.c), and create writes its additions into a new overlay root's
 * upper through it (merged.c).
 *
 * The layers are in overlay form (layers.h): a whiteout is a 0/0 character device, an
 * opaque directory has user.overlay.opaque="y". A name is looked up top layer first; a
 * whiteout ends the lookup (the name is gone), so does anything that is not a directory
 * (it hides what is below), and a directory merges with the directories of that name
 * below it down to the first opaque one. Every step is one component from a directory fd
 * (fstatat and openat with O_NOFOLLOW): a symlink in a layer is never followed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/* A directory of the view: the layers' directories of that name, top first. */
struct layer_view_dir
{
  int *fds; /* owned */
  size_t n;
};

enum layer_view_kind
{
  LAYER_VIEW_NONE,  /* not in the view */
  LAYER_VIEW_DIR,   /* a directory: dir holds its layers */
  LAYER_VIEW_OTHER, /* anything else: the name in dirfd */
};

struct layer_view_entry
{
  enum layer_view_kind kind;
  struct stat st;             /* the top layer's entry */
  int dirfd;                  /* LAYER_VIEW_OTHER: the layer directory holding it (borrowed) */
  struct layer_view_dir dir;  /* LAYER_VIEW_DIR: owned, layer_view_dir_clear() it */
};

/* The root of the layers DIFF_IDS ("sha256:HEX", bottom first, N of them) of the caller's
 * layer store. die()s with WHAT first when one cannot be opened. */
void layer_view_root (struct layer_view_dir *d, char *const *diff_ids, size_t n, const char *what);

/* NAME (one component) in the view's directory PARENT (PATH, for messages). */
void layer_view_lookup (const struct layer_view_dir *parent, const char *name, const char *path,
                        struct layer_view_entry *out, const char *what);

/* The names the view's directory D shows, sorted bytewise, NULL-terminated (whiteouts
 * and what they and opaque directories hide left out). */
char **layer_view_names (const struct layer_view_dir *d, const char *path, const char *what);

void layer_view_dir_clear (struct layer_view_dir *d);

/* What overlayfs takes for a whiteout: a 0/0 character device. */
bool layer_view_is_whiteout (const struct stat *st);

/* Whether the directory DIRFD has user.overlay.opaque="y". */
bool layer_view_is_opaque (int dirfd);
