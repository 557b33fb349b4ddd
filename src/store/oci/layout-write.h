/* Writing an image into an OCI image layout directory (push NAME oci:DIR:TAG). */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct layout_out;

/* The layout DIR (created when missing, with its oci-layout file), to tag TAG in. */
struct layout_out *layout_out_open (const char *dir, const char *tag, const char *what);
void layout_out_close (struct layout_out *l);
/* Blob DIGEST of SIZE bytes from FD at OFFSET, or from DATA when FD < 0: written to
 * blobs/sha256/HEX through a temporary file and a rename, unless a file of that size is
 * there already. */
void layout_out_blob (struct layout_out *l, const char *digest, uint64_t size, int fd,
                      off_t offset, const char *data);
/* The manifest as a blob, then index.json with an entry for it named TAG (the entry that
 * had that name replaced), written to a temporary file and renamed: last. */
void layout_out_manifest (struct layout_out *l, const char *media_type, const char *text,
                          size_t len);
