/* Decompressing and verifying lz4 frames (see unlz4.h for why). */
#include <lz4frame.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/util.h"
#include "store/unlz4.h"

#define OUT_SIZE (128 * 1024)

struct unlz4
{
  LZ4F_dctx *dctx;
  const unsigned char *in;
  size_t avail_in;
  bool in_frame; /* between a frame's first byte and its end */
  bool over;     /* after the last frame, in bytes that cannot start another one */
  unsigned char out[OUT_SIZE];
};

/* Little-endian magic numbers: a frame is 0x184D2204, a skippable frame 0x184D2A5?. */
static bool
starts_frame (const unsigned char *p, size_t len)
{
  if (len < 4 || p[2] != 0x4d || p[3] != 0x18)
    return false;
  return (p[0] == 0x04 && p[1] == 0x22) || ((p[0] & 0xf0) == 0x50 && p[1] == 0x2a);
}

struct unlz4 *
unlz4_new (const unsigned char *first, size_t len)
{
  if (!starts_frame (first, len))
    return NULL;
  struct unlz4 *u = xcalloc (1, sizeof *u);
  if (LZ4F_isError (LZ4F_createDecompressionContext (&u->dctx, LZ4F_VERSION)))
    die ("cannot initialise liblz4");
  return u;
}

void
unlz4_input (struct unlz4 *u, const unsigned char *buf, size_t len)
{
  u->in = buf;
  u->avail_in = len;
}

ssize_t
unlz4_output (struct unlz4 *u, const unsigned char **out, const char **why)
{
  while (!u->over && u->avail_in > 0)
    {
      /* A frame boundary: another frame, or trailing bytes. The first byte decides (a
       * magic number cut by the end of a read is then checked by liblz4 itself). */
      if (!u->in_frame)
        {
          unsigned char b = u->in[0];
          if (b != 0x04 && (b & 0xf0) != 0x50)
            {
              u->over = true;
              break;
            }
          u->in_frame = true;
        }
      size_t dst = sizeof u->out, src = u->avail_in;
      size_t r = LZ4F_decompress (u->dctx, u->out, &dst, u->in, &src, NULL);
      if (LZ4F_isError (r))
        {
          *why = LZ4F_getErrorName (r);
          return -1;
        }
      u->in += src;
      u->avail_in -= src;
      if (r == 0)
        u->in_frame = false; /* the frame is complete and checked; dctx starts anew */
      if (dst > 0)
        {
          *out = u->out;
          return (ssize_t) dst;
        }
    }
  return 0;
}

bool
unlz4_over (const struct unlz4 *u)
{
  return u->over;
}

int
unlz4_finish (struct unlz4 *u, const char **why)
{
  if (u == NULL)
    return 0;
  bool cut = u->in_frame;
  LZ4F_freeDecompressionContext (u->dctx);
  free (u);
  if (cut)
    {
      *why = "truncated lz4 stream";
      return -1;
    }
  return 0;
}
