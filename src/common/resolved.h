/* What a create's source resolved to, kept so that `run --ephemeral` can mount a cached
 * image's layers without the store helper (issue 28): enter-devroot links libc only, and
 * the helper's exec alone (its libraries) costs more than the run it serves.
 *
 * After a create from a local source (--from oci:DIR[:TAG], --from docker-archive:FILE,
 * --from FILE, or the default template), enter-devroot-store writes a record of the new
 * root's layers and image config, keyed on the create options that name the source, and
 * stamped with the identity of the file that decides what the source is (DIR/index.json,
 * or the file itself: device, inode, size, mtime and ctime, which any write changes). That
 * file is named as typed (made absolute, its symlinks left in), and its stamp is taken
 * again through that name at each use: a name repointed since (a symlink `current.tar`
 * from a.tar to b.tar, a directory of layouts renamed) is another stamp, as a file
 * replaced or written is, and the record is not used (-v says why):
 *
 *   ${XDG_CACHE_HOME:-~/.cache}/enter-devroot/layers/resolved/KEY.json
 *
 * in the metadata's JSON form (meta.h): the root's metadata, with "name" the stamped file,
 * its stamp and the key's text, one a line. A record whose stamp no longer matches, or whose layers a
 * `cache clean` removed, is not used: the run goes through the helper, which writes it
 * again. Only the caller's own cache is read, as for the layers. */
#pragma once

#include <stdbool.h>

#include "common/cli.h"
#include "common/meta.h"

/* The key of CLI's create options when they name a source a record can stand for (no URL,
 * registry, --template, --sha256, --no-verify, --index, --cacert, --insecure-http or
 * --max-size): "FORMAT\ncwd\nfrom\nplatform\ndefault-template" (the last without --from:
 * ENTER_DEVROOT_DEFAULT_TEMPLATE); NULL otherwise. */
char *resolved_key (const struct cli *cli);

/* PATH (the file a source's stamp is taken of) as a record names it: absolute, from the
 * working directory, with its symlinks left in, so that each use resolves them again; NULL
 * when the working directory is unknown. */
char *resolved_source_file (const char *path);

/* Write the record of root NAME's metadata M for KEY, the source's identity being STAMP
 * (resolved_stamp of STAMP_PATH, taken before the create read it). A failure is a verbose
 * line: the record is an index. */
void resolved_write (const char *key, const struct meta *m, const char *stamp_path,
                     const char *stamp);

/* "dev:ino:size:mtime:ctime" of PATH, or NULL. */
char *resolved_stamp (const char *path);

/* The record for KEY into M (what a root made from the source records: source, sha256,
 * size, image and layers; M->name NULL) when its stamp still matches; false otherwise (M
 * then empty), with a verbose line naming WHAT (the source) and why. */
bool resolved_read (const char *key, const char *what, struct meta *m);
