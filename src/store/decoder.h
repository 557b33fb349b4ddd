/* The streaming skeleton gunzip.c and unlz4.c share. Input is kept by pointer until it is
 * used up, output goes through one fixed buffer, and a stream is a run of units (gzip
 * members, lz4 frames) that may be followed by trailing bytes that cannot start another
 * unit, which are ignored, as gzip(1) and libarchive do. A format supplies only how a unit
 * starts and one decompression step; see gunzip.h for the interface built on it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DECODER_OUT_SIZE (128 * 1024)

struct decoder;

struct decoder_format
{
  /* Can BYTE, the first at a unit boundary, begin another unit? */
  bool (*starts_unit) (unsigned char byte);
  /* Make ready for the next unit after one ended (NULL: nothing to do). */
  void (*restart) (struct decoder *d);
  /* Decompress from d->in (advancing it and d->avail_in) into OUT, of *OUT_LEN bytes,
   * setting *OUT_LEN to what was written: 1 when a unit ended (and was verified), 0 when
   * it goes on, -1 with *WHY on a data error. */
  int (*step) (struct decoder *d, unsigned char *out, size_t *out_len, const char **why);
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

void decoder_input (struct decoder *d, const unsigned char *buf, size_t len);
ssize_t decoder_output (struct decoder *d, const unsigned char **out, const char **why);
/* At the end of input: -1 with *WHY if a unit was cut short. Frees nothing. */
int decoder_end (const struct decoder *d, const char **why);
