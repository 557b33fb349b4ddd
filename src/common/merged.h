/* An overlay root's merged tree read straight from its layers in the layer store, without a
 * mount (no user or mount namespace): what create needs to write its own additions (the
 * account, an image's WorkingDir) into a new root's upper directory as overlayfs would have,
 * fd-relative. The lookup is layer-view.h's, the one push compares a root with its base by;
 * a path through anything but directories (a symlink on the way or at the end, a device)
 * is MERGED_OTHER, and the caller mounts the overlay instead. */
#pragma once

#include "common/layer-view.h"

struct merged
{
  struct layer_view_dir root; /* each layer's tree, top first */
};

enum merged_kind
{
  MERGED_ABSENT, /* not there, or whited out */
  MERGED_DIR,
  MERGED_FILE,   /* a regular file */
  MERGED_OTHER,  /* a symlink (on the way or at the end), a device, "." or ".." */
};

/* Open LAYERS (diff_ids "sha256:HEX", bottom first, as the metadata lists them); die()s
 * when one is not in the store. */
void merged_open (struct merged *mv, char *const *layers);
void merged_close (struct merged *mv);

/* What PATH (relative, '/'-separated) is in the merged tree. */
enum merged_kind merged_lookup (const struct merged *mv, const char *path);

/* Before a write to PATH in the upper UPPERFD, do what overlayfs's copy-up does: every
 * directory on the way that the merged tree has and the upper lacks is made with the
 * merged one's mode and times, and PATH itself copied when it is a regular file (content,
 * mode, times). A component that is absent ends it: what is written there is new. */
void merged_copy_up (const struct merged *mv, int upperfd, const char *path);
