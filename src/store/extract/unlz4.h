/* lz4 frames are decompressed here, not by libarchive: libarchive 3.6's lz4 reader does not
 * check a frame's content checksum, so a flipped byte in a .tar.lz4 unpacked silently into
 * a damaged root, nor does it notice a frame cut in its trailer, and it refuses skippable
 * frames. liblz4's frame decoder verifies block and content checksums.
 * libarchive then reads the plain tar. */
#pragma once

#include <stddef.h>

#include "store/extract/decoder.h"

/* An lz4 decoder (decoder.h) when the stream begins with an lz4 frame (or a skippable
 * frame); NULL otherwise (the legacy format, which has no checksum, is left to
 * libarchive). Concatenated frames are one stream. */
struct decoder *unlz4_new (const unsigned char *first, size_t len);
