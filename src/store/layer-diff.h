/* One OCI layer holding what a devroot changed from its base image's tree (push.c). */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "store/export.h"

struct layer_blob
{
  int fd;                /* the gzip-compressed layer, in a temporary file already unlinked */
  uint64_t size;         /* its bytes */
  char digest[80];       /* "sha256:HEX" of the compressed bytes */
  char diff_id[80];      /* "sha256:HEX" of the uncompressed tar */
  unsigned long entries; /* tar entries written (whiteouts included) */
};

/* Compare the root at ROOTFD (walked with walk.h, so it may be in use) with the base tree
 * at BASEFD (a private directory the base image's layers were applied to; -1: no base,
 * everything is new) and write what differs as a reproducible tar+gzip layer into a
 * temporary file in TMPDIR: entries in walk order, owners 0:0, mtimes from F (clamped to
 * $SOURCE_DATE_EPOCH when set), what F says create added left out, deletions as
 * ".wh.NAME", a directory replacing a non-directory with ".wh..wh..opq", gzip without a
 * name or time. WHAT begins error lines. dies on failure. */
void layer_diff (int rootfd, int basefd, const struct export_filter *f, const char *what,
                 const char *tmpdir, struct layer_blob *out);
