/* Unpacked copies of archives, so that a second create from the same archive does not
 * unpack it again. Under ${XDG_CACHE_HOME:-~/.cache}/enter-devroot, whatever `cache = DIR`
 * says:
 *
 *   unpacked/HEX/root       the tree a create from the archive whose SHA-256 is HEX made
 *   unpacked/HEX/meta.json  its metadata (source, size) for the roots cloned from it
 *   unpacked/.HEX.XXXXXX    one being made; renamed into place whole, so a copy is never
 *                           half there (debris of an interrupted run is removed by `cache
 *                           clean`)
 *
 * A copy is kept only where the filesystem clones a file by reference (FICLONE: btrfs,
 * XFS with reflink, bcachefs, ...): there it costs no data blocks, and a create from it
 * writes only metadata. On ext4 nothing is kept and every create unpacks (a full copy of
 * the tree would cost as much as the unpacking it saves, and the disk twice). */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "common/util.h"

/* Whether any unpacked copy is kept (else there is no point hashing an archive first). */
bool unpacked_any (void);

/* Clone the unpacked copy of the archive HEX into the empty directory ROOTFD: true with
 * *SIZE_BYTES and *ROOT (the copy's root directory: its mode and times, to apply once
 * the new root is in place) set when there is one
 * and the clone succeeded; false (ROOTFD emptied again) otherwise, and the caller unpacks.
 * Never die()s on a clone failure: the copy is an optimisation. */
bool unpacked_clone_into (const char *hex, int rootfd, uint64_t *size_bytes,
                          struct stat *root);

/* Whether a copy of a root unpacked into ROOTFD (a directory of the store) could be kept:
 * the unpacked-copy directory can be created and the filesystem clones from ROOTFD into it
 * by reference. A cheap probe (two unnamed one-byte files). */
bool unpacked_can_keep (int rootfd);

/* After a create from the archive HEX: keep a copy of what was unpacked, when the
 * filesystem can clone by reference and none is kept yet. Two steps around the moment the
 * root is put in place: unpacked_keep_begin clones the staging directory ROOTFD, before
 * the rename, while nothing but this create can enter it (code running in a root already
 * in place could plant files in the copy, and so in every later root cloned from it);
 * unpacked_keep_end, once the root is in place with its own mode and times (which it may
 * get only then, extract.h), gives them to the copy's root directory, fstat()ed through
 * ROOTFD, and renames the copy into place. NULL from begin: nothing to keep. Failures are
 * one warning line at most (none when the filesystem cannot clone); a create failing in
 * between calls unpacked_keep_cancel. */
struct unpacked_keeping;
struct unpacked_keeping *unpacked_keep_begin (const char *hex, int rootfd);
void unpacked_keep_end (struct unpacked_keeping *k, int rootfd, const char *source,
                        uint64_t size_bytes);
void unpacked_keep_cancel (struct unpacked_keeping *k);

/* For `cache list` / `cache clean`: the copies are always in the caller's own cache
 * directory, even when downloads go to a `cache = DIR` (a tree cannot be verified by its
 * digest before each use, as a download is, so it is never kept where others can write). */
void unpacked_list (struct strbuf *sb, bool json, bool *first);
unsigned long unpacked_clean (void);
