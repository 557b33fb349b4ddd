/* Creating a devroot from an archive (enter-devroot-store only). */
#pragma once

#include <stdbool.h>

#include "common/meta.h"
#include "common/paths.h"
#include "store/extract/extract.h"
#include "store/source.h"

/* A new devroot NAME from the archive SRC: unpacked into the layer store unless a create
 * from the same bytes put it there already (layers.h), copied (cloned where the filesystem
 * can) into a staging dir; or, for a flat root where the store's files cannot be cloned
 * into it and the layer is not stored, unpacked straight into the staging dir, no layer
 * kept (one write of each file). Then metadata, then an atomic rename into place. Exactly
 * one of two concurrent creates of NAME succeeds. die()s on failure, leaving no root, no
 * staging directory, no metadata and no half-made layer behind. */
void store_create (const char *name, struct source *src, const struct extract_opts *xopts);

struct extractor;

/* An image's N layers, bottom first, for store_create_from_layers. */
struct image_layers
{
  size_t n;
  char *const *diff_ids; /* "sha256:HEX", from the image's config */
  /* Put each layer in the layer store (layer_ensure) and set HEXES[i]. */
  void (*ensure) (char (*hexes)[SHA256_HEX_LEN + 1], void *data);
  /* Apply layer I to X (extract_layer), returning what names it in messages: for a flat
   * root unpacked straight from the blobs, none of whose layers is stored. */
  const char *(*unpack) (struct extractor *x, size_t i, void *data);
  /* Unless NULL: run on the root once its layers are in (the image's WorkingDir). */
  void (*finish) (int rootfd, void *data);
  void *data;
};

/* The same for an image's layers L: stored and then copied, or (as for a tarball)
 * unpacked straight into a flat root when none is stored and the store's files cannot be
 * cloned into it. XOPTS->max_bytes bounds the sum of the layers' sizes. The metadata
 * records ORIGIN, SHA256 (the manifest's digest, as hex), IMAGE and the layers. */
void store_create_from_layers (const char *name, const char *origin, const char *sha256,
                               const struct meta_image *image, const struct image_layers *l,
                               const struct extract_opts *xopts);

/* The same for a root unpacked by UNPACK(X, ROOTFD, DATA): a directory tree copied with
 * tree_copy (no layer).
 * The metadata records ORIGIN, SHA256 (the manifest's digest, as hex) and IMAGE. */
void store_create_layered (const char *name, const char *origin, const char *sha256,
                           const struct meta_image *image,
                           void (*unpack) (struct extractor *x, int rootfd, void *data), void *data,
                           const struct extract_opts *xopts);
