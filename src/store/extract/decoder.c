/* The loop gzip and lz4 decompression share (see decoder.h). */
#include "store/extract/decoder.h"
#include "store/extract/gunzip.h"
#include "store/extract/unlz4.h"

struct decoder *
decoder_new (const unsigned char *first, size_t len)
{
  struct decoder *d = gunzip_new (first, len);
  return d != NULL ? d : unlz4_new (first, len);
}

const char *
decoder_name (const struct decoder *d)
{
  return d->format->name;
}

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

bool
decoder_over (const struct decoder *d)
{
  return d->over;
}

int
decoder_finish (struct decoder *d, const char **why)
{
  if (d == NULL)
    return 0;
  int r = 0;
  if (d->in_unit)
    {
      *why = d->format->truncated;
      r = -1;
    }
  d->format->free (d);
  return r;
}
