/* Creating a root in the store: a private staging directory under NAME's lock, metadata,
 * an atomic rename into place; an overlay root's upper and work directories. Linked into
 * both programs: enter-devroot-store creates every kind of root (store-create.h), and
 * enter-devroot itself makes an overlay root of a recorded image (resolved.h) whose layers
 * are in the store, without the helper (enter/create.c). */
#pragma once

#include <stdbool.h>

#include "common/merged.h"
#include "common/meta.h"
#include "common/paths.h"

/* A create under way: NAME's lock held, its private staging directory open. */
struct creation
{
  struct store_paths p;
  const char *name;
  int lockfd;
  char *root;
  char *staging;
  char *meta_path;
  int rootfd;
  /* Called just before and just after the rename into place, when not NULL (the store's
   * interrupt handling: interrupt.h). */
  void (*before_rename) (void);
  void (*after_rename) (void);
};

/* Check NAME, take its lock, clean stale staging and abandoned throwaway roots, make the
 * staging directory; die()s if NAME exists. A die() from here until the commit removes
 * what the create made, and runs UNDO (when not NULL) first. */
void creation_begin (struct creation *c, const char *name, void (*undo) (void));

/* Write M as NAME's metadata and move the staging directory into place. */
void creation_commit (struct creation *c, const struct meta *m);

/* Remove what C made so far (nothing is in place) and end it. */
void creation_abort (struct creation *c);

void creation_end (struct creation *c);

/* An overlay root's upper and work directories, made in a staging directory of their own
 * (moved to overlays/NAME by overlay_commit); the upper's mode is TOP's (the top layer's
 * root directory), which the merged root shows. Returns the staging directory. */
char *overlay_stage (struct creation *c, const char *top);

/* Move the staged upper and work (STAGED, consumed) to overlays/NAME. */
void overlay_commit (struct creation *c, char *staged);

/* Whether a create's own finishing step has nothing to do in the merged tree MV of M. */
typedef bool creation_idle_fn (const struct merged *mv, const struct meta *m, void *data);

/* The image config of an exported OCI-made root is not in the layers (nothing to take). */
creation_idle_fn creation_no_image_config;
/* The image names no WorkingDir, or the layers have it as a directory. */
creation_idle_fn creation_workdir_present;
/* Both. */
creation_idle_fn creation_nothing_to_finish;

/* Finish C as an overlay root of M's layers (M->layers set, bottom first), in O(layers),
 * create's additions (the account) written straight into the new upper, fd-relative, as
 * overlayfs would have (merged.h; the upper is new, empty and ours), then committed. False,
 * with nothing made, when the layers have something on the account's paths that merged.c
 * does not read or FINISH_IDLE (NULL: nothing to finish) says the finishing step has work:
 * the caller then mounts the overlay for them. */
bool creation_commit_overlay_direct (struct creation *c, struct meta *m,
                                     creation_idle_fn *finish_idle, void *data);

/* On a terminal and without QUIET, one line on stderr saying root NAME was made and how to
 * enter it (not for a throwaway root, whose run lock is held). */
void creation_announce (const char *name, bool quiet);
