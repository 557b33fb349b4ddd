/* An independent integrity check of gzip input: libarchive's gzip reader does not verify
 * the CRC-32 and length trailer of a member, so a corrupted .tar.gz can unpack "fine" into
 * a damaged root. The same bytes libarchive reads are inflated again here (output discarded)
 * by zlib, which does verify them. xz, bzip2, zstd and lz4 carry checks their libraries
 * verify themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct gzcheck;

/* Start checking when the stream begins with the gzip magic; NULL otherwise (then the
 * other calls accept NULL and do nothing). */
struct gzcheck *gzcheck_new (const unsigned char *first, size_t len);
/* Feed the next bytes of the stream; -1 with *why on a data error. */
int gzcheck_update (struct gzcheck *g, const unsigned char *buf, size_t len, const char **why);
/* At the end of input: -1 with *why if a member was cut short. Frees G. */
int gzcheck_finish (struct gzcheck *g, const char **why);
