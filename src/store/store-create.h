/* Creating a devroot from an archive (enter-devroot-store only). */
#pragma once

#include "common/meta.h"
#include "store/extract.h"
#include "store/source.h"

/* Unpack SRC into a new devroot NAME: staging dir, metadata, then an atomic rename into
 * place. Exactly one of two concurrent creates of NAME succeeds. die()s on failure, leaving
 * no root, no staging directory and no metadata behind. */
void store_create (const char *name, struct source *src, const struct extract_opts *xopts);

/* The same for a root unpacked by UNPACK(X, ROOTFD, DATA): an image's layers applied with
 * extract_layer, or a directory tree copied with tree_copy.
 * The metadata records ORIGIN, SHA256 (the manifest's digest, as hex) and IMAGE. */
void store_create_layered (const char *name, const char *origin, const char *sha256,
                           const struct meta_image *image,
                           void (*unpack) (struct extractor *x, int rootfd, void *data), void *data,
                           const struct extract_opts *xopts);
