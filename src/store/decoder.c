/* The loop gzip and lz4 decompression share (see decoder.h). */
#include "store/decoder.h"

void
decoder_input (struct decoder *d, const unsigned char *buf, size_t len)
{
  d->in = buf;
  d->avail_in = len;
}

ssize_t
decoder_output (struct decoder *d, const unsigned char **out, const char **why)
{
  while (!d->over && d->avail_in > 0)
    {
      /* A unit boundary: another unit, or trailing bytes. The first byte decides (a
       * magic number cut by the end of a read is then checked by the library itself). */
      if (!d->in_unit)
        {
          if (!d->format->starts_unit (d->in[0]))
            {
              d->over = true;
              break;
            }
          if (d->format->restart != NULL)
            d->format->restart (d);
          d->in_unit = true;
        }
      size_t n = sizeof d->out;
      int r = d->format->step (d, d->out, &n, why);
      if (r < 0)
        return -1;
      if (r > 0)
        d->in_unit = false;
      if (n > 0)
        {
          *out = d->out;
          return (ssize_t) n;
        }
    }
  return 0;
}

int
decoder_end (const struct decoder *d, const char **why)
{
  if (d->in_unit)
    {
      *why = d->format->truncated;
      return -1;
    }
  return 0;
}
