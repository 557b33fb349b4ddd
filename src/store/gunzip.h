/* gzip input is decompressed here, not by libarchive: libarchive's gzip reader does not
 * verify the CRC-32 and length trailer of a member, so a corrupted .tar.gz could unpack
 * "fine" into a damaged root. zlib does verify them, and inflating once here (libarchive
 * then reads a plain tar) costs no more than libarchive's own inflate, where checking
 * beside it cost a second one. xz, bzip2 and zstd carry checks their libraries verify
 * themselves. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct gunzip;

/* Start decompressing when the stream begins with the gzip magic; NULL otherwise. */
struct gunzip *gunzip_new (const unsigned char *first, size_t len);
/* Hand over the next LEN bytes of the stream (kept by pointer until gunzip_output has
 * returned 0: the caller refills BUF only then). */
void gunzip_input (struct gunzip *g, const unsigned char *buf, size_t len);
/* Decompress what was handed over: >0 bytes at *OUT (valid until the next call); 0 when
 * it needs more input, or the gzip data is over (gunzip_over); -1 with *WHY on a data
 * error. Concatenated members are one stream; bytes after the last member that do not
 * start another are ignored, as gzip(1) and libarchive do. */
ssize_t gunzip_output (struct gunzip *g, const unsigned char **out, const char **why);
/* The gzip data is over: only trailing bytes may follow. */
bool gunzip_over (const struct gunzip *g);
/* At the end of input: -1 with *WHY if a member was cut short. Frees G. */
int gunzip_finish (struct gunzip *g, const char **why);
