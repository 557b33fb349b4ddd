/* The store of devroots: create, list, remove, path; locking and staging. */
#pragma once

#include <stdbool.h>

#include "extract.h"
#include "source.h"

/* Unpack SRC into a new devroot NAME: staging dir, metadata, then an atomic rename into
 * place. Exactly one of two concurrent creates of NAME succeeds. die()s on failure, leaving
 * no root, no staging directory and no metadata behind. */
void store_create (const char *name, struct source *src, const struct extract_opts *xopts);
void store_remove (const char *name);
void store_list (bool json);
/* The path of an existing devroot; die()s "cannot WHAT 'NAME': no such devroot" otherwise. */
char *store_existing_root (const char *name, const char *what);

/* Delete NAME under DIRFD recursively without following symlinks, making directories
 * writable as it goes (a root may contain read-only directories). -1 with errno. */
int rm_rf_at (int dirfd, const char *name);
