/* The layer store: every layer of an image (and every plain tarball, a one-layer image) is
 * unpacked once, by the extractor, into a directory named by its diff_id (the SHA-256 of
 * its uncompressed tar stream, checked while unpacking), shared by every root made of it.
 * Always in the caller's own cache directory, whatever `cache = DIR` says (a tree cannot be
 * verified by its digest before each use, as a download is, so it is never kept where
 * others can write):
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/enter-devroot/layers/
 *     sha256/HEX/tree/       the layer in overlay form (extract.h: overlay_form): a whiteout
 *                            is a 0/0 character device, an opaque directory has
 *                            user.overlay.opaque="y"; nothing writes it once in place
 *     sha256/HEX/meta.json   {"diff_id": "sha256:HEX", "size_bytes": N, "created": ...}
 *     archives/AHEX          a symlink to HEX: the plain tarball whose SHA-256 is AHEX, so a
 *                            second create from it finds its layer without unpacking
 *     .HEX.XXXXXX            one being made; renamed into place whole (debris of an
 *                            interrupted run is removed by `cache clean`)
 *
 * A create (or a push, which compares a root with its base's layers) holds a shared lock
 * (flock) on each layer directory it uses until it exits; `cache clean` removes only layers
 * no root's metadata names and no create or push holds. Roots made of layers record them
 * (meta.h: layers), as does a flat root unpacked straight from its source where the store
 * cannot clone into it (store-create.h), whose layers are then not stored. See LAYERS in
 * README.md. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/util.h"
#include "store/extract/extract.h"
#include "store/source.h"

/* Unpack BLOB (compressed or not) into the store unless the layer DIFF_ID ("sha256:HEX")
 * is there already, in which case BLOB is not read at all (its fd may be -1). DIFF_ID NULL:
 * BLOB is a plain tarball, whose diff_id is computed (and found again through its own
 * SHA-256 when BLOB is a regular file). die()s with one line, leaving nothing, on a
 * diff_id mismatch or a refused entry. Sets HEX (64 hex digits + NUL). Call it inside a
 * create, whose die() cleanup calls layers_cleanup. */
void layer_ensure (struct source *blob, const char *diff_id, const struct extract_opts *x,
                   char hex[65]);

/* The same for a plain tarball, also giving the SHA-256 of its bytes (a root's "sha256"):
 * layer_find_archive, else layer_unpack_archive. */
void layer_ensure_archive (struct source *src, const struct extract_opts *x, char hex[65],
                           char archive_hex[65]);

/* The layer a create from the plain tarball SRC made before: true with HEX and ARCHIVE_HEX
 * set and the layer held (archive_layer). False when none is stored, SRC at its start and
 * ARCHIVE_HEX the SHA-256 of its bytes where it could be hashed first (a regular file),
 * else "". die()s on a mismatch with src->expected_sha256. */
bool layer_find_archive (struct source *src, char hex[65], char archive_hex[65]);

/* Unpack SRC, which layer_find_archive did not find (ARCHIVE_HEX as it left it), into the
 * store, or take the layer a create unpacking it meanwhile made; sets HEX and ARCHIVE_HEX. */
void layer_unpack_archive (struct source *src, const struct extract_opts *x, char hex[65],
                           char archive_hex[65]);

/* Whether a file of the layer store can be cloned by reference (FICLONE) into the
 * directory ROOTFD: then a flat root costs no second write of its data when its layers are
 * unpacked into the store first; elsewhere a create that finds none of them stored unpacks
 * straight into the root (store-create.h). */
bool layers_clone_into (int rootfd);

/* How many of the layers LAYERS names ("sha256:HEX", NULL-terminated) are in the store. */
size_t layers_stored (char *const *layers);

/* die()s with one line unless the layer WHAT unpacked to the diff_id GOT (hex), the one
 * its image's config names, WANT (hex). */
void layer_check_diff_id (const char *what, const char *want, const char *got);

/* The layer a plain tarball whose SHA-256 is AHEX was unpacked into, into HEX, held (as a
 * create holds its layers) until this process exits; false when there is none. */
bool archive_layer (const char *ahex, char hex[65]);

/* Whether the layer HEX is in the store (a create from it then needs no blob). */
bool layer_present (const char *hex);

/* The layer's size in bytes of regular files (its metadata), 0 when unknown. */
uint64_t layer_size (const char *hex);

/* .../layers/sha256/HEX/tree (malloc'd) */
char *layer_tree_path (const char *hex);

/* chroot mode / no overlay: merge the layers HEXES (N, bottom first) into the empty
 * directory ROOTFD, by FICLONE where the filesystem can, else copy_file_range; whiteouts
 * remove, opaque directories hide what is below; user.overlay.* is never copied. Never
 * decompresses. The root directory's own mode and times are left to layers_root_mode.
 * Returns the regular-file bytes copied; die()s on failure. */
/* WHAT (the archive or image the root is made from) starts each error line. */
uint64_t layers_flatten (int rootfd, char *const *hexes, size_t n, const char *what);

/* Give ROOTFD the mode and times of the layer HEX's root directory (the top layer's): once
 * the new root is in place (moving a directory needs write permission on it). */
void layers_root_mode (int rootfd, const char *hex);

/* Remove the layer being unpacked, if any (from a create's die() cleanup). */
void layers_cleanup (void);

/* `cache list` / `cache clean` */
void layers_list (struct strbuf *sb, bool json, bool *first);
/* Removes the layers no root uses and no create holds, and debris; counts what it removed
 * into *LAYERS and *BYTES, and the layers in use or busy into *KEPT. */
void layers_clean (unsigned long *layers, uint64_t *bytes, unsigned long *kept);
