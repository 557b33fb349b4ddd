/* The one interface to the decompressors that run here rather than in libarchive: gzip
 * (gunzip.c) and lz4 (unlz4.c), whose checksums libarchive does not verify (gunzip.h,
 * unlz4.h); libarchive then reads the plain tar.
 *
 * Input is kept by pointer until it is used up, output goes through one fixed buffer, and
 * a stream is a run of units (gzip members, lz4 frames) that may be followed by trailing
 * bytes that cannot start another unit, which are ignored, as gzip(1) and libarchive do.
 * A format supplies only how a unit starts, one decompression step and its own end. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DECODER_OUT_SIZE (128 * 1024)

struct decoder;

struct decoder_format
{
  const char *name; /* "gzip": errors say "corrupt gzip stream" */
  /* Can BYTE, the first at a unit boundary, begin another unit? */
  bool (*starts_unit) (unsigned char byte);
  /* Make ready for the next unit after one ended (NULL: nothing to do). */
  void (*restart) (struct decoder *d);
  /* Decompress from d->in (advancing it and d->avail_in) into OUT, of *OUT_LEN bytes,
   * setting *OUT_LEN to what was written: 1 when a unit ended (and was verified), 0 when
   * it goes on, -1 with *WHY on a data error. */
  int (*step) (struct decoder *d, unsigned char *out, size_t *out_len, const char **why);
  /* Release the library's state and D itself. */
  void (*free) (struct decoder *d);
  /* The error when input ends inside a unit. */
  const char *truncated;
};

/* Embedded first in each format's own state. */
struct decoder
{
  const struct decoder_format *format;
  const unsigned char *in;
  size_t avail_in;
  bool in_unit; /* between a unit's first byte and its end */
  bool over;    /* after the last unit, in bytes that cannot start another one */
  unsigned char out[DECODER_OUT_SIZE];
};

/* The decoder the stream's first LEN bytes FIRST call for: gzip's or lz4's; NULL when
 * neither (libarchive reads the stream as it is). */
struct decoder *decoder_new (const unsigned char *first, size_t len);
/* The format's name, for errors: "gzip", "lz4". */
const char *decoder_name (const struct decoder *d);
/* Hand over the next LEN bytes of the stream (kept by pointer until decoder_output has
 * returned 0: the caller refills BUF only then). */
void decoder_input (struct decoder *d, const unsigned char *buf, size_t len);
/* Decompress what was handed over: >0 bytes at *OUT (valid until the next call); 0 when
 * it needs more input, or the data is over (decoder_over); -1 with *WHY on a data error.
 * Concatenated units are one stream. */
ssize_t decoder_output (struct decoder *d, const unsigned char **out, const char **why);
/* The compressed data is over: only trailing bytes may follow. */
bool decoder_over (const struct decoder *d);
/* At the end of input: -1 with *WHY if a unit was cut short. Frees D (NULL: returns 0). */
int decoder_finish (struct decoder *d, const char **why);
