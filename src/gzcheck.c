/* An independent integrity check of gzip input (see gzcheck.h for why). */
#include <stdlib.h>
#include <zlib.h>

#include "gzcheck.h"
#include "util.h"

#define GZIP_WINDOW_BITS (15 + 16) /* 32 KiB window, gzip wrapper only */
#define DISCARD_SIZE (64 * 1024)

struct gzcheck
{
  z_stream z;
  bool in_member;  /* inside a member (between header and trailer) */
  bool trailing;   /* after a member, in bytes that do not start another one */
  unsigned char out[DISCARD_SIZE];
};

struct gzcheck *
gzcheck_new (const unsigned char *first, size_t len)
{
  if (len < 2 || first[0] != 0x1f || first[1] != 0x8b)
    return NULL;
  struct gzcheck *g = xcalloc (1, sizeof *g);
  if (inflateInit2 (&g->z, GZIP_WINDOW_BITS) != Z_OK)
    die ("cannot initialise zlib");
  g->in_member = true;
  return g;
}

int
gzcheck_update (struct gzcheck *g, const unsigned char *buf, size_t len, const char **why)
{
  if (g == NULL || g->trailing)
    return 0;
  g->z.next_in = (unsigned char *) (uintptr_t) buf; /* zlib does not write through it */
  g->z.avail_in = (uInt) len;
  while (g->z.avail_in > 0)
    {
      if (!g->in_member)
        {
          /* Another member follows (concatenated gzip), or trailing bytes that libarchive
           * judges on its own (zero padding). */
          if (g->z.next_in[0] != 0x1f)
            {
              g->trailing = true;
              return 0;
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
      else if (r != Z_OK && r != Z_BUF_ERROR)
        {
          *why = r == Z_DATA_ERROR && g->z.msg != NULL ? g->z.msg : "gzip data error";
          return -1;
        }
    }
  return 0;
}

int
gzcheck_finish (struct gzcheck *g, const char **why)
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
