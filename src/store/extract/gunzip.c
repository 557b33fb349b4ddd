/* Decompressing and verifying gzip input (see gunzip.h for why); the loop is decoder.c's. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "common/util.h"
#include "store/extract/decoder.h"
#include "store/extract/gunzip.h"

#define GZIP_WINDOW_BITS (15 + 16) /* 32 KiB window, gzip wrapper only */
#define GZIP_MAGIC0 0x1f
#define GZIP_MAGIC1 0x8b

struct gunzip
{
  struct decoder d; /* first: the format's callbacks get it */
  z_stream z;
};

static bool
gzip_starts_member (unsigned char byte)
{
  return byte == GZIP_MAGIC0;
}

static void
gzip_restart (struct decoder *d)
{
  struct gunzip *g = (struct gunzip *) d;
  if (inflateReset (&g->z) != Z_OK)
    die ("cannot reset zlib");
}

static int
gzip_step (struct decoder *d, unsigned char *out, size_t *out_len, const char **why)
{
  struct gunzip *g = (struct gunzip *) d;
  uInt avail_in = d->avail_in < UINT_MAX ? (uInt) d->avail_in : UINT_MAX;
  g->z.next_in = (unsigned char *) (uintptr_t) d->in; /* zlib does not write through it */
  g->z.avail_in = avail_in;
  g->z.next_out = out;
  g->z.avail_out = (uInt) *out_len;
  int r = inflate (&g->z, Z_NO_FLUSH);
  d->in += avail_in - g->z.avail_in;
  d->avail_in -= avail_in - g->z.avail_in;
  *out_len -= g->z.avail_out;
  if (r == Z_STREAM_END)
    return 1;
  if (r != Z_OK)
    {
      /* Z_BUF_ERROR with room to write and bytes to read cannot happen; if it did, the
       * stream would never move again. */
      *why = r == Z_DATA_ERROR && g->z.msg != NULL ? g->z.msg : "gzip data error";
      return -1;
    }
  return 0;
}

static void
gzip_free (struct decoder *d)
{
  struct gunzip *g = (struct gunzip *) d;
  inflateEnd (&g->z);
  free (g);
}

static const struct decoder_format gzip_format = {
  .name = "gzip",
  .starts_unit = gzip_starts_member,
  .restart = gzip_restart,
  .step = gzip_step,
  .free = gzip_free,
  .truncated = "truncated gzip stream",
};

struct decoder *
gunzip_new (const unsigned char *first, size_t len)
{
  if (len < 2 || first[0] != GZIP_MAGIC0 || first[1] != GZIP_MAGIC1)
    return NULL;
  struct gunzip *g = xcalloc (1, sizeof *g);
  if (inflateInit2 (&g->z, GZIP_WINDOW_BITS) != Z_OK)
    die ("cannot initialise zlib");
  g->d.format = &gzip_format;
  g->d.in_unit = true; /* the magic number above began the first member */
  return &g->d;
}
