/* The extractor's input: the source read block by block, hashed and counted as it is read,
 * with gzip and lz4 decoded here by zlib and liblz4 (which verify the checksums libarchive
 * skips: decoder.h) and every other filter of the tar family left to libarchive. */
#include <archive.h>
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract/extract-internal.h"
#include "store/interrupt.h"

/* The next block of the file into x->buf, hashed and counted: its length, 0 at the end,
 * -1 with errno. */
static ssize_t
read_raw (struct extractor *x)
{
  ssize_t n;
  size_t want = x->remaining < sizeof x->buf ? (size_t) x->remaining : sizeof x->buf;
  do
    {
      interrupt_check ();
      n = read (x->fd, x->buf, want);
    }
  while (n < 0 && errno == EINTR);
  if (n > 0)
    x->remaining -= (uint64_t) n;
  if (n <= 0)
    return n;
  sha256_update (&x->hash, x->buf, (size_t) n);
  if (x->opts->progress != NULL)
    x->opts->progress ((uint64_t) n, x->opts->progress_data);
  return n;
}

/* INNER's read callback: the block read to recognise the compression first, then the file. */
static ssize_t
inner_read (struct archive *a, void *data, const void **buffer)
{
  struct extractor *x = data;
  ssize_t n = x->pending;
  x->pending = 0;
  if (n == 0)
    n = read_raw (x);
  if (n < 0)
    {
      archive_set_error (a, errno, "read error");
      return -1;
    }
  *buffer = x->buf;
  return n;
}

/* The block N just read (the first) through INNER: 1, or 0 for an empty stream, or -1 with
 * the error set on A. */
static int
inner_start (struct archive *a, struct extractor *x, ssize_t n)
{
  x->pending = n;
  x->inner = archive_read_new ();
  if (x->inner == NULL)
    die ("out of memory");
  struct archive_entry *e;
  if (archive_read_support_format_raw (x->inner) != ARCHIVE_OK
      || archive_read_support_filter_bzip2 (x->inner) != ARCHIVE_OK
      || archive_read_support_filter_xz (x->inner) != ARCHIVE_OK
      || archive_read_support_filter_lzma (x->inner) != ARCHIVE_OK
      || archive_read_support_filter_zstd (x->inner) != ARCHIVE_OK
      || archive_read_support_filter_compress (x->inner) != ARCHIVE_OK)
    die ("libarchive lacks a decompressor it was expected to have: %s", archive_why (x->inner));
  if (archive_read_open (x->inner, x, NULL, inner_read, NULL) != ARCHIVE_OK)
    {
      archive_set_error (a, EIO, "%s", archive_why (x->inner));
      return -1;
    }
  int r = archive_read_next_header (x->inner, &e);
  if (r == ARCHIVE_EOF)
    return 0;
  if (r < ARCHIVE_WARN)
    {
      archive_set_error (a, EIO, "%s", archive_why (x->inner));
      return -1;
    }
  return 1;
}

/* The next block INNER decompresses, hashed, into x->out. */
static ssize_t
inner_output (struct archive *a, struct extractor *x, const void **buffer)
{
  la_ssize_t m = archive_read_data (x->inner, x->out, sizeof x->out);
  if (m < 0)
    {
      archive_set_error (a, EIO, "%s", archive_why (x->inner));
      return -1;
    }
  sha256_update (&x->tar_hash, x->out, (size_t) m);
  *buffer = x->out;
  return m;
}

/* libarchive's read callback: the file as it is, or for gzip and lz4 the tar inside it. */
ssize_t
read_and_hash (struct archive *a, void *data, const void **buffer)
{
  struct extractor *x = data;
  ssize_t n;
  if (x->inner != NULL)
    return inner_output (a, x, buffer);
  if (!x->started || x->dec == NULL)
    {
      n = read_raw (x);
      if (n < 0)
        {
          archive_set_error (a, errno, "read error");
          return -1;
        }
      if (!x->started)
        {
          x->started = true;
          x->dec = decoder_new (x->buf, (size_t) n);
          if (x->dec == NULL && (x->opts->overlay_form || x->opts->diff_id) && n > 0)
            {
              int r = inner_start (a, x, n);
              return r <= 0 ? r : inner_output (a, x, buffer);
            }
        }
      if (x->dec == NULL)
        {
          *buffer = x->buf;
          return n;
        }
      decoder_input (x->dec, x->buf, (size_t) n);
    }
  for (;;)
    {
      const unsigned char *out;
      const char *why;
      ssize_t m = decoder_output (x->dec, &out, &why);
      if (m < 0)
        {
          archive_set_error (a, EIO, "corrupt %s stream: %s", decoder_name (x->dec), why);
          return -1;
        }
      if (m > 0)
        {
          sha256_update (&x->tar_hash, out, (size_t) m);
          *buffer = out;
          return m;
        }
      if (decoder_over (x->dec))
        return 0; /* trailing bytes: drain_and_hash hashes them */
      n = read_raw (x);
      if (n < 0)
        {
          archive_set_error (a, errno, "read error");
          return -1;
        }
      if (n == 0)
        {
          if (decoder_finish (steal_pointer (&x->dec), &why) < 0)
            {
              archive_set_error (a, EIO, "%s", why);
              return -1;
            }
          return 0;
        }
      decoder_input (x->dec, x->buf, (size_t) n);
    }
}

/* Hash whatever follows the end of the archive too: the digest covers the whole file; and
 * decode the rest of a gzip member or lz4 frame libarchive did not need, so its checksum
 * is verified. */
int
drain_and_hash (struct extractor *x)
{
  const char *why;
  if (x->inner != NULL)
    {
      /* The rest of the decompressed stream (zero blocks after the tar's end), then the
       * rest of the file below. */
      for (la_ssize_t m; (m = archive_read_data (x->inner, x->out, sizeof x->out)) != 0;)
        {
          if (m < 0)
            return extract_fail (x, "%s: %s", x->desc, archive_why (x->inner));
          sha256_update (&x->tar_hash, x->out, (size_t) m);
        }
      archive_read_free (x->inner);
      x->inner = NULL;
    }
  for (;;)
    {
      if (x->dec != NULL && !decoder_over (x->dec))
        {
          const unsigned char *out;
          ssize_t m = decoder_output (x->dec, &out, &why);
          if (m < 0)
            return extract_fail (x, "%s: corrupt %s stream: %s", x->desc,
                                 decoder_name (x->dec), why);
          if (m > 0)
            {
              sha256_update (&x->tar_hash, out, (size_t) m);
              continue;
            }
        }
      ssize_t n = read_raw (x);
      if (n < 0)
        return extract_fail_errno (x, "%s: read error", x->desc);
      if (n == 0)
        break;
      if (x->dec != NULL)
        decoder_input (x->dec, x->buf, (size_t) n);
    }
  if (decoder_finish (steal_pointer (&x->dec), &why) < 0)
    return extract_fail (x, "%s: %s", x->desc, why);
  return 0;
}

struct archive *
extract_tar_reader (void)
{
  struct archive *a = archive_read_new ();
  if (a == NULL)
    die ("out of memory");
  if (archive_read_support_format_tar (a) != ARCHIVE_OK
      || archive_read_support_filter_gzip (a) != ARCHIVE_OK
      || archive_read_support_filter_bzip2 (a) != ARCHIVE_OK
      || archive_read_support_filter_xz (a) != ARCHIVE_OK
      || archive_read_support_filter_lzma (a) != ARCHIVE_OK
      || archive_read_support_filter_zstd (a) != ARCHIVE_OK
      || archive_read_support_filter_lz4 (a) != ARCHIVE_OK
      || archive_read_support_filter_compress (a) != ARCHIVE_OK)
    die ("libarchive lacks a decompressor it was expected to have: %s",
         archive_why (a));
  return a;
}

const char *
archive_why (struct archive *a)
{
  const char *s = archive_error_string (a);
  return s != NULL && *s != '\0' ? s : "truncated or corrupt archive";
}
