/* Creating a devroot from an archive (enter-devroot-store only). */
#pragma once

#include <stdbool.h>

#include "common/meta.h"
#include "common/paths.h"
#include "store/extract.h"
#include "store/source.h"

/* A new devroot NAME from the archive SRC: unpacked into the layer store unless a create
 * from the same bytes put it there already (layers.h), copied into a staging dir, metadata,
 * then an atomic rename into place. Exactly one of two concurrent creates of NAME
 * succeeds. die()s on failure, leaving no root, no staging directory, no metadata and no
 * half-made layer behind. */
void store_create (const char *name, struct source *src, const struct extract_opts *xopts);

/* The same for an image's N layers: ENSURE(HEXES, DATA) puts each in the layer store
 * (layer_ensure) and sets HEXES[i] (bottom first); FINISH(ROOTFD, DATA), unless NULL,
 * then runs on the flat root (the image's WorkingDir). XOPTS->max_bytes bounds the sum of
 * the layers' sizes. The metadata records ORIGIN, SHA256
 * (the manifest's digest, as hex), IMAGE and the layers. */
void store_create_from_layers (const char *name, const char *origin, const char *sha256,
                               const struct meta_image *image, size_t n,
                               void (*ensure) (char (*hexes)[SHA256_HEX_LEN + 1], void *data),
                               void (*finish) (int rootfd, void *data), void *data,
                               const struct extract_opts *xopts);

/* The same for a root unpacked by UNPACK(X, ROOTFD, DATA): a directory tree copied with
 * tree_copy (no layer).
 * The metadata records ORIGIN, SHA256 (the manifest's digest, as hex) and IMAGE. */
void store_create_layered (const char *name, const char *origin, const char *sha256,
                           const struct meta_image *image,
                           void (*unpack) (struct extractor *x, int rootfd, void *data), void *data,
                           const struct extract_opts *xopts);
