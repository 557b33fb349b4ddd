/* Creating a devroot from an archive (enter-devroot-store only). */
#pragma once

#include "store/extract.h"
#include "store/source.h"

/* Unpack SRC into a new devroot NAME: staging dir, metadata, then an atomic rename into
 * place. Exactly one of two concurrent creates of NAME succeeds. die()s on failure, leaving
 * no root, no staging directory and no metadata behind. */
void store_create (const char *name, struct source *src, const struct extract_opts *xopts);
