/* Unpacking an untrusted rootfs archive into a private directory. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "store/source.h"

struct extract_opts
{
  /* Stop with an error once the entries' sizes add up to more than this; 0 means no limit.
   * (Issue 5 gives it a default and a command-line option.) */
  uint64_t max_bytes;
  /* Called with the number of archive bytes read by each read, for a progress bar; NULL for
   * none. */
  void (*progress) (uint64_t bytes_read, void *data);
  void *progress_data;
  /* create (store-create.h): make the root an overlay of the stored layers rather than a
   * flat copy of them (overlay_layout_wanted decided). The extractor does not read it. */
  bool overlay;
  /* create --keep-layers: store the layers even where a flat root could be unpacked
   * straight (store-create.c: unpack_straight), for roots made again and again. */
  bool keep_layers;
  /* Start the writeback of each file as soon as it is written (sync_file_range, which
   * waits for nothing): set when an unpacked copy will be cloned from the new root, whose
   * FICLONE then finds the data on disk already (clone.h). */
  bool start_writeback;
  /* Unpacking one layer into the layer store (layers.h): whiteouts are kept in overlay form
   * (".wh.NAME" becomes a 0/0 character device NAME, ".wh..wh..opq" the xattr
   * user.overlay.opaque="y" on its directory) instead of being applied. An entry's own
   * trusted.overlay.* or user.overlay.* xattrs are dropped, as always (one warning): a
   * layer is an overlay's lowerdir, where such an xattr would steer the overlay. */
  bool overlay_form;
  /* With overlay_form, for an image's layer: the trees of the layers below it, top first
   * (NULL-terminated; NULL for none). A hard link to a file none of this layer's entries
   * made is to one of theirs: it becomes a copy of that file (a layer is a directory of
   * its own, which a link cannot leave). */
  char *const *lowers;
  /* Hash the uncompressed tar stream into result.diff_id (always done with overlay_form): a
   * flat root unpacked straight from its source (store-create.h) records its layers by
   * it, as one made from the layer store does. */
  bool diff_id;
};

struct extract_result
{
  uint64_t size_bytes;                 /* regular-file bytes unpacked */
  char sha256[SHA256_HEX_LEN + 1];     /* of every byte read from the source */
  char diff_id[SHA256_HEX_LEN + 1];    /* of the uncompressed tar stream (the last archive's),
                                        * with overlay_form or diff_id; else "" */
  unsigned long skipped_special;       /* device nodes and sockets (and links to them) not made */
  unsigned long skipped_self_links;    /* duplicates stored as a hard link to themselves */
};

struct extractor;
struct archive;

/* A libarchive reader for the tar family with every in-library decompressor this tool
 * accepts (never an external program); die()s when one is missing. */
struct archive *extract_tar_reader (void);
/* libarchive's reason for A's last error, which some read paths (a gzip stream cut in its
 * trailer) leave unset: never "(null)". */
const char *archive_why (struct archive *a);

/* Unpack SRC into the directory ROOTFD (which the caller created private, 0700), checking
 * its digest against src->expected_sha256 when set. Directory modes and times are not
 * applied yet, so the caller can still write into the tree: extract_finish does that.
 * die()s on any refused entry, corrupt input or digest mismatch. */
struct extractor *extract_archive (int rootfd, struct source *src,
                                   const struct extract_opts *opts,
                                   struct extract_result *result);
/* OCI image layers: an extractor for ROOTFD with nothing unpacked yet, then each layer in
 * order (src->expected_sha256 is required: the blob's digest), with the whiteout rules at
 * the top of extract.c. result->sha256 is left empty: an image is named by its manifest. */
struct extractor *extract_begin (int rootfd, const struct extract_opts *opts,
                                 struct extract_result *result);
/* Each layer ends with its own warnings (what was skipped, the extended attributes
 * dropped), naming it. */
void extract_layer (struct extractor *x, struct source *src);
/* One entry E of another source (tree.c's walk of a directory), under the same rules; a
 * regular file's data (archive_entry_size bytes) is read from FD, at its start, never by
 * name. DESC names the source in messages. */
struct archive_entry;
void extract_entry_fd (struct extractor *x, const char *desc, struct archive_entry *e, int fd);
/* One warning line for what was skipped so far (device nodes, sockets, self-links). */
void extract_warn_skipped (struct extractor *x);
/* Apply directory modes and times, deepest first, all but the root's own (one per
 * directory: its last entry's); then the one warning for the extended attributes dropped. */
void extract_finish (struct extractor *x);
/* Apply the root directory's mode and time (from the archive's "./" entry, else 0755) and
 * free the extractor. Call it once the root is in place: moving a directory to another
 * parent needs write permission on it, and the archive may make the root read-only. */
void extract_finish_root (struct extractor *x);

/* Turn an archive member name into a path relative to the root: leading '/' stripped (as
 * bsdtar and GNU tar do; *was_absolute tells), empty and "." components dropped, ".."
 * refused, components over NAME_MAX and paths that would not fit in PATH_MAX (as "/" plus
 * the path) refused. "" means the root itself. 0 and *out (caller frees), or -1 and *why. */
int archive_path_normalize (const char *in, char **out, bool *was_absolute, const char **why);
