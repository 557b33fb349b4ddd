/* lz4 frames are decompressed here, not by libarchive: libarchive 3.6's lz4 reader does not
 * check a frame's content checksum, so a flipped byte in a .tar.lz4 unpacked silently into
 * a damaged root, nor does it notice a frame cut in its trailer, and it refuses skippable
 * frames. liblz4's frame decoder verifies block and content checksums.
 * Same interface as gunzip.h; libarchive then reads the plain tar. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct unlz4;

/* Start decompressing when the stream begins with an lz4 frame (or a skippable frame);
 * NULL otherwise (the legacy format, which has no checksum, is left to libarchive). */
struct unlz4 *unlz4_new (const unsigned char *first, size_t len);
/* See gunzip_input, gunzip_output, gunzip_over and gunzip_finish. Concatenated frames are
 * one stream; bytes after the last frame that cannot start another are ignored. */
void unlz4_input (struct unlz4 *u, const unsigned char *buf, size_t len);
ssize_t unlz4_output (struct unlz4 *u, const unsigned char **out, const char **why);
bool unlz4_over (const struct unlz4 *u);
int unlz4_finish (struct unlz4 *u, const char **why);
