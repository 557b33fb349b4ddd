/* Writing an image as a docker save archive (push NAME docker-archive:FILE[:REPO:TAG]). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct archive_out;

/* The archive FILE to write, tagged REPO_TAG ("REPO:TAG", or NULL: no RepoTags); layers
 * are staged uncompressed in TMPDIR. WHAT begins every error line. */
struct archive_out *archive_out_open (const char *path, const char *repo_tag,
                                      const char *tmpdir, const char *what);
void archive_out_close (struct archive_out *a);
/* The next layer: SIZE bytes of FD from OFFSET, compressed (any way libarchive reads) or
 * not; staged uncompressed, and dies unless those bytes have digest DIFF_ID. */
void archive_out_layer (struct archive_out *a, const char *diff_id, int fd, off_t offset,
                        uint64_t size);
/* The archive, every layer staged: written beside FILE and renamed over it. */
void archive_out_finish (struct archive_out *a, const char *config_digest, const char *config,
                         size_t config_len);
/* From a die() cleanup: remove the temporary file archive_out_finish was writing, if any. */
void archive_out_abandon (struct archive_out *a);
