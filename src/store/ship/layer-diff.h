/* One OCI layer holding what a devroot changed from its base image's tree (push.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "store/ship/export.h"
#include "store/progress.h"

struct layer_blob
{
  int fd;                /* the gzip-compressed layer, in a temporary file already unlinked */
  uint64_t size;         /* its bytes */
  char digest[80];       /* "sha256:HEX" of the compressed bytes */
  char diff_id[80];      /* "sha256:HEX" of the uncompressed tar */
  unsigned long entries; /* tar entries written (whiteouts included) */
};

enum layer_diff_mode
{
  LAYER_DIFF_TREE,  /* ROOTFD is the whole tree */
  LAYER_DIFF_UPPER, /* ROOTFD is an overlay root's upper directory over BASE (overlay.h) */
};

/* Compare the root at ROOTFD (walked with walk.h, so it may be in use) with the base image
 * whose layers (diff_ids, bottom first, NULL-terminated; NULL or empty: no base, everything
 * is new) are in the caller's layer store (layer-view.h), and write what differs as a
 * reproducible tar+gzip layer into a temporary file in TMPDIR: entries in walk order,
 * owners 0:0, mtimes from F (clamped to $SOURCE_DATE_EPOCH when set), what F says create
 * added left out, deletions as ".wh.NAME", a directory replacing a non-directory (or made
 * opaque in an upper) with ".wh..wh..opq", gzip without a name or time. The caller holds
 * the layers (layer_ensure) for as long. BAR (progress.h, begun by the caller) counts the
 * bytes of the root read. WHAT begins error lines. dies on failure. */
void layer_diff (int rootfd, char *const *base, enum layer_diff_mode mode,
                 const struct export_filter *f, const char *what, const char *tmpdir,
                 struct progress *bar, struct layer_blob *out);
