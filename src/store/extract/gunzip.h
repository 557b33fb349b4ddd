/* gzip input is decompressed here, not by libarchive: libarchive's gzip reader does not
 * verify the CRC-32 and length trailer of a member, so a corrupted .tar.gz could unpack
 * "fine" into a damaged root. zlib does verify them, and inflating once here (libarchive
 * then reads a plain tar) costs no more than libarchive's own inflate, where checking
 * beside it cost a second one. xz, bzip2 and zstd carry checks their libraries verify
 * themselves. */
#pragma once

#include <stddef.h>

#include "store/extract/decoder.h"

/* A gzip decoder (decoder.h) when the stream begins with the gzip magic; NULL otherwise.
 * Concatenated members are one stream, as for gzip(1). */
struct decoder *gunzip_new (const unsigned char *first, size_t len);
