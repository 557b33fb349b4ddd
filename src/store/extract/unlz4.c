/* Decompressing and verifying lz4 frames (see unlz4.h for why); the loop is decoder.c's. */
#include <lz4frame.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/util.h"
#include "store/extract/decoder.h"
#include "store/extract/unlz4.h"

struct unlz4
{
  struct decoder d; /* first: the format's callbacks get it */
  LZ4F_dctx *dctx;
};

/* Little-endian magic numbers: a frame is 0x184D2204, a skippable frame 0x184D2A5?. */
static bool
lz4_starts_frame (unsigned char byte)
{
  return byte == 0x04 || (byte & 0xf0) == 0x50;
}

static bool
starts_frame (const unsigned char *p, size_t len)
{
  if (len < 4 || p[2] != 0x4d || p[3] != 0x18)
    return false;
  return (p[0] == 0x04 && p[1] == 0x22) || ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a);
}

static int
lz4_step (struct decoder *d, unsigned char *out, size_t *out_len, const char **why)
{
  struct unlz4 *u = (struct unlz4 *) d;
  size_t src = d->avail_in;
  size_t r = LZ4F_decompress (u->dctx, out, out_len, d->in, &src, NULL);
  if (LZ4F_isError (r))
    {
      *why = LZ4F_getErrorName (r);
      return -1;
    }
  d->in += src;
  d->avail_in -= src;
  return r == 0; /* the frame is complete and checked; dctx starts anew by itself */
}

static void
lz4_free (struct decoder *d)
{
  struct unlz4 *u = (struct unlz4 *) d;
  LZ4F_freeDecompressionContext (u->dctx);
  free (u);
}

static const struct decoder_format lz4_format = {
  .name = "lz4",
  .starts_unit = lz4_starts_frame,
  .restart = NULL,
  .step = lz4_step,
  .free = lz4_free,
  .truncated = "truncated lz4 stream",
};

struct decoder *
unlz4_new (const unsigned char *first, size_t len)
{
  if (!starts_frame (first, len))
    return NULL;
  struct unlz4 *u = xcalloc (1, sizeof *u);
  if (LZ4F_isError (LZ4F_createDecompressionContext (&u->dctx, LZ4F_VERSION)))
    die ("cannot initialise liblz4");
  u->d.format = &lz4_format;
  return &u->d;
}
