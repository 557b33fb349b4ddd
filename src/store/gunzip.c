/* Decompressing and verifying gzip input (see gunzip.h for why). */
#include <stdint.h>
#include <stdlib.h>
#include <zlib.h>

#include "common/util.h"
#include "store/gunzip.h"

#define GZIP_WINDOW_BITS (15 + 16) /* 32 KiB window, gzip wrapper only */
#define OUT_SIZE (128 * 1024)

struct gunzip
{
  z_stream z;
  bool in_member; /* inside a member (between header and trailer) */
  bool over;      /* after the last member, in bytes that do not start another one */
  unsigned char out[OUT_SIZE];
};

struct gunzip *
gunzip_new (const unsigned char *first, size_t len)
{
  if (len < 2 || first[0] != 0x1f || first[1] != 0x8b)
    return NULL;
  struct gunzip *g = xcalloc (1, sizeof *g);
  if (inflateInit2 (&g->z, GZIP_WINDOW_BITS) != Z_OK)
    die ("cannot initialise zlib");
  g->in_member = true;
  return g;
}

void
gunzip_input (struct gunzip *g, const unsigned char *buf, size_t len)
{
  g->z.next_in = (unsigned char *) (uintptr_t) buf; /* zlib does not write through it */
  g->z.avail_in = (uInt) len;
}

ssize_t
gunzip_output (struct gunzip *g, const unsigned char **out, const char **why)
{
  while (!g->over && g->z.avail_in > 0)
    {
      if (!g->in_member)
        {
          /* Another member follows (concatenated gzip), or trailing bytes. */
          if (g->z.next_in[0] != 0x1f)
            {
              g->over = true;
              break;
            }
          if (inflateReset (&g->z) != Z_OK)
            die ("cannot reset zlib");
          g->in_member = true;
        }
      g->z.next_out = g->out;
      g->z.avail_out = sizeof g->out;
      int r = inflate (&g->z, Z_NO_FLUSH);
      if (r == Z_STREAM_END)
        g->in_member = false;
      else if (r != Z_OK)
        {
          /* Z_BUF_ERROR with room to write and bytes to read cannot happen; if it
           * did, the stream would never move again. */
          *why = r == Z_DATA_ERROR && g->z.msg != NULL ? g->z.msg : "gzip data error";
          return -1;
        }
      size_t n = sizeof g->out - g->z.avail_out;
      if (n > 0)
        {
          *out = g->out;
          return (ssize_t) n;
        }
    }
  return 0;
}

bool
gunzip_over (const struct gunzip *g)
{
  return g->over;
}

int
gunzip_finish (struct gunzip *g, const char **why)
{
  if (g == NULL)
    return 0;
  bool cut = g->in_member;
  inflateEnd (&g->z);
  free (g);
  if (cut)
    {
      *why = "truncated gzip stream";
      return -1;
    }
  return 0;
}
