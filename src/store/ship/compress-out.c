/* export's compressors (compress-out.h). zstd and xz run here rather than in libarchive:
 * libarchive's zstd filter uses one core, and its xz filter gives liblzma's threads no
 * timeout, so a write waited for a whole block (24 MiB, seconds of work each) before a
 * caught ^C was looked at. */
#include <errno.h>
#include <lzma.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "common/util.h"
#include "store/ship/compress-out.h"
#include "store/interrupt.h"

#define ZSTD_EXPORT_LEVEL 3 /* zstd's default: fast; `zstd -19` the result for a smaller file */
/* How long liblzma may keep a write waiting for its threads before we look for a signal. */
#define XZ_TIMEOUT_MS 100
#define XZ_OUT_SIZE (256 * 1024)

struct compress_out
{
  int fd;
  const char *note;
  bool xz;
  ZSTD_CCtx *cctx;
  lzma_stream lz;
  void *buf;
  size_t cap;
};

/* ---- zstd */

static int
zstd_flush (struct compress_out *z, ZSTD_inBuffer *in, ZSTD_EndDirective mode)
{
  for (;;)
    {
      ZSTD_outBuffer out = { z->buf, z->cap, 0 };
      size_t left = ZSTD_compressStream2 (z->cctx, &out, in, mode);
      if (ZSTD_isError (left))
        {
          errno = EIO;
          return -1;
        }
      if (write_all (z->fd, z->buf, out.pos) < 0)
        return -1;
      if (mode == ZSTD_e_end ? left == 0 : in->pos == in->size)
        return 0;
      interrupt_check_note (z->note);
    }
}

/* ---- xz */

static int
xz_flush (struct compress_out *c, const void *buf, size_t len, lzma_action action)
{
  c->lz.next_in = buf;
  c->lz.avail_in = len;
  for (;;)
    {
      c->lz.next_out = c->buf;
      c->lz.avail_out = c->cap;
      lzma_ret r = lzma_code (&c->lz, action);
      if (r != LZMA_OK && r != LZMA_STREAM_END)
        {
          errno = r == LZMA_MEM_ERROR ? ENOMEM : EIO;
          return -1;
        }
      if (write_all (c->fd, c->buf, c->cap - c->lz.avail_out) < 0)
        return -1;
      if (action == LZMA_FINISH ? r == LZMA_STREAM_END : c->lz.avail_in == 0)
        return 0;
      /* Out of output space, or the threads' timeout: look for a signal, then go on. */
      interrupt_check_note (c->note);
    }
}

/* ---- libarchive's callbacks */

static la_ssize_t
write_cb (struct archive *a, void *data, const void *buf, size_t len)
{
  struct compress_out *c = data;
  ZSTD_inBuffer in = { buf, len, 0 };
  if (c->xz ? xz_flush (c, buf, len, LZMA_RUN) : zstd_flush (c, &in, ZSTD_e_continue))
    {
      archive_set_error (a, errno, "%s: %s", c->xz ? "xz" : "zstd", strerror (errno));
      return -1;
    }
  return (la_ssize_t) len;
}

static int
close_cb (struct archive *a, void *data)
{
  struct compress_out *c = data;
  ZSTD_inBuffer in = { NULL, 0, 0 };
  if (c->xz ? xz_flush (c, NULL, 0, LZMA_FINISH) : zstd_flush (c, &in, ZSTD_e_end))
    {
      archive_set_error (a, errno, "%s: %s", c->xz ? "xz" : "zstd", strerror (errno));
      return ARCHIVE_FATAL;
    }
  return ARCHIVE_OK;
}

static void
open_check (struct archive *a, int r, const char *what, const char *compress)
{
  if (r < ARCHIVE_WARN)
    die ("%s: %s compression: %s", what, compress, archive_error_string (a));
}

struct compress_out *
compress_out_open (struct archive *a, const char *compress, int fd, const char *what,
                   const char *note)
{
  struct compress_out *c = xcalloc (1, sizeof *c);
  c->fd = fd;
  c->note = note;
  long cores = sysconf (_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    cores = 1;
  if (strcmp (compress, "gzip") == 0 || strcmp (compress, "none") == 0)
    {
      if (strcmp (compress, "gzip") == 0)
        {
          open_check (a, archive_write_add_filter_gzip (a), what, compress);
          open_check (a, archive_write_set_filter_option (a, "gzip", "timestamp", NULL), what,
                      compress);
        }
      open_check (a, archive_write_open_fd (a, fd), what, compress);
      return c;
    }
  if (strcmp (compress, "xz") == 0)
    {
      /* The threaded encoder even on one core: its blocks, and so its bytes, do not depend
       * on how many threads made them. */
      c->xz = true;
      c->cap = XZ_OUT_SIZE;
      c->lz = (lzma_stream) LZMA_STREAM_INIT;
      lzma_mt mt = { .threads = (uint32_t) cores, .timeout = XZ_TIMEOUT_MS,
                     .preset = LZMA_PRESET_DEFAULT, .check = LZMA_CHECK_CRC64 };
      lzma_ret r = lzma_stream_encoder_mt (&c->lz, &mt);
      if (r != LZMA_OK)
        die ("%s: xz compression: %s", what,
             r == LZMA_MEM_ERROR ? "out of memory" : "cannot set up liblzma's encoder");
    }
  else
    {
      c->cap = ZSTD_CStreamOutSize ();
      c->cctx = ZSTD_createCCtx ();
      if (c->cctx == NULL
          || ZSTD_isError (ZSTD_CCtx_setParameter (c->cctx, ZSTD_c_compressionLevel,
                                                   ZSTD_EXPORT_LEVEL))
          || ZSTD_isError (ZSTD_CCtx_setParameter (c->cctx, ZSTD_c_checksumFlag, 1)))
        die ("%s: cannot set up zstd", what);
      /* At least one worker: zstd's output then does not depend on how many. A libzstd
       * built without threads refuses workers: single-threaded output then. */
      ZSTD_CCtx_setParameter (c->cctx, ZSTD_c_nbWorkers, (int) cores);
    }
  c->buf = xmalloc (c->cap);
  open_check (a, archive_write_open (a, c, NULL, write_cb, close_cb), what, compress);
  return c;
}

void
compress_out_free (struct compress_out *c)
{
  if (c == NULL)
    return;
  ZSTD_freeCCtx (c->cctx);
  if (c->xz)
    lzma_end (&c->lz);
  free (c->buf);
  free (c);
}
