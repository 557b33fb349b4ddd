/* Transfers with libcurl, in the shape of curl's url2file.c and progressfunc.c: one easy
 * handle, CURLOPT_ERRORBUFFER for messages, CURLOPT_FAILONERROR, scheme restrictions with
 * CURLOPT_PROTOCOLS_STR / CURLOPT_REDIR_PROTOCOLS_STR, CURLOPT_XFERINFOFUNCTION for progress.
 *
 * Resuming uses CURLOPT_RANGE ("N-") with an If-Range header rather than
 * CURLOPT_RESUME_FROM_LARGE: with RESUME_FROM, libcurl treats a 200 answer as an error
 * ("server doesn't seem to support byte ranges"), but a 200 is exactly what If-Range asks
 * for when the file changed on the server, and what a server without range support sends.
 * Here a 200 to a range request truncates the partial file and starts over, and a 206 must
 * start where we asked, so the digest always covers the whole file from byte 0.
 *
 * The validators (URL, ETag, Last-Modified) of the response the partial bytes came from are
 * stored beside them in NAME.validators, written before the first byte of a fresh body, so
 * whatever interrupts a download, the file never holds bytes the validators do not describe.
 * A weak ETag cannot be used with If-Range (RFC 9110, 13.1.5): Last-Modified is used then.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/cache/digest.h"
#include "store/cache/download-handle.h"
#include "store/cache/download.h"
#include "store/interrupt.h"
#include "store/progress.h"

#define VALIDATORS_MAX_BYTES 8192
#define HTTP_PARTIAL_CONTENT 206
#define HTTP_RANGE_NOT_SATISFIABLE 416

struct validators
{
  char *url;
  char *etag;          /* strong ETags only */
  char *last_modified;
};

static void
validators_clear (struct validators *v)
{
  free (v->url);
  free (v->etag);
  free (v->last_modified);
  *v = (struct validators) { 0 };
}

static char *
validators_name (const char *name)
{
  return xasprintf ("%s.validators", name);
}

/* NAME.validators: "url URL", "etag ETAG", "last-modified DATE" lines. */
static void
validators_load (int dirfd, const char *name, struct validators *v)
{
  cleanup_free char *vname = validators_name (name);
  *v = (struct validators) { 0 };
  /* Only the user's own: in a shared cache another user may have planted one, to vouch
   * for bytes that are not the file's. */
  struct stat st;
  cleanup_fd int fd = open_regular_at (dirfd, vname, O_RDONLY, &st);
  if (fd < 0 || st.st_uid != getuid () || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    return;
  cleanup_free char *text = read_fd_all (fd, VALIDATORS_MAX_BYTES, NULL);
  if (text == NULL)
    return;
  char *save = NULL;
  for (char *line = strtok_r (text, "\n", &save); line != NULL; line = strtok_r (NULL, "\n", &save))
    {
      char *sp = strchr (line, ' ');
      if (sp == NULL)
        continue;
      *sp = '\0';
      char **slot = strcmp (line, "url") == 0 ? &v->url
                    : strcmp (line, "etag") == 0 ? &v->etag
                    : strcmp (line, "last-modified") == 0 ? &v->last_modified : NULL;
      if (slot != NULL)
        {
          free (*slot);
          *slot = xstrdup (sp + 1);
        }
    }
}

static void
validators_store (int dirfd, const char *name, const struct validators *v)
{
  cleanup_free char *vname = validators_name (name);
  if (v->etag == NULL && v->last_modified == NULL)
    {
      /* Nothing to resume with: make sure stale validators cannot vouch for new bytes. */
      if (unlinkat (dirfd, vname, 0) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", vname);
      return;
    }
  struct strbuf sb = { 0 };
  strbuf_appendf (&sb, "url %s\n", v->url);
  if (v->etag != NULL)
    strbuf_appendf (&sb, "etag %s\n", v->etag);
  if (v->last_modified != NULL)
    strbuf_appendf (&sb, "last-modified %s\n", v->last_modified);
  cleanup_free char *text = strbuf_steal (&sb);
  if (atomic_file_write (dirfd, vname, text, strlen (text), 0600, 0) < 0)
    die_with_error ("cannot write %s", vname);
}

void
download_discard (int dirfd, const char *name)
{
  cleanup_free char *vname = validators_name (name);
  if (unlinkat (dirfd, name, 0) < 0 && errno != ENOENT)
    die_with_error ("cannot delete partial download %s", name);
  if (unlinkat (dirfd, vname, 0) < 0 && errno != ENOENT)
    die_with_error ("cannot delete %s", vname);
}

static int
xferinfo (void *data, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
  struct progress *p = data;
  if (interrupt_pending () != 0)
    return 1; /* abort the transfer; download_file then exits as interrupted */
  if (dlnow > 0)
    progress_update (p, p->base + (uint64_t) dlnow, dltotal > 0 ? p->base + (uint64_t) dltotal : 0);
  return 0;
}

/* ---- Into the partial file, resuming. */

struct transfer
{
  int fd;
  int dirfd;
  const char *name;
  const char *url;
  struct sha256 hash;
  uint64_t offset;          /* bytes kept from before; the range we asked for starts here */
  uint64_t written;         /* body bytes of this response written after offset */
  uint64_t max_size;
  bool body_started;
  bool too_big;
  bool bad_range;
  /* From the headers of the current response (reset at every status line, so only the
   * final response after redirects counts). */
  struct validators seen;
  bool has_content_range;
  uint64_t range_start;
  struct progress *progress;
  CURL *handle;
  int write_errno;
};

/* A validator goes back to the server in an If-Range header and into the validators
 * file, one per line: printable ASCII only, or it is not kept (no resume then). */
static bool
is_header_safe (const char *v)
{
  for (const char *p = v; *p != '\0'; p++)
    if ((unsigned char) *p < 0x20 || (unsigned char) *p > 0x7e)
      return false;
  return v[0] != '\0';
}

/* The response headers a transfer keeps, by their index in transfer_headers. */
enum
{
  HEADER_ETAG,
  HEADER_LAST_MODIFIED,
  HEADER_CONTENT_RANGE,
};
static const char *const transfer_headers[] = { "ETag", "Last-Modified", "Content-Range", NULL };

static size_t
header_cb (char *line, size_t size, size_t nmemb, void *data)
{
  struct transfer *t = data;
  size_t len = size * nmemb;
  char *v;
  switch (download_header_parse (line, len, transfer_headers, &v))
    {
    case DOWNLOAD_STATUS_LINE:
      validators_clear (&t->seen);
      t->has_content_range = false;
      break;
    case HEADER_ETAG:
      free (t->seen.etag);
      t->seen.etag = NULL;
      if (strncmp (v, "W/", 2) != 0 && v[0] == '"' && v[strlen (v) - 1] == '"' && strlen (v) >= 2
          && is_header_safe (v))
        t->seen.etag = v;
      else
        free (v);
      break;
    case HEADER_LAST_MODIFIED:
      free (t->seen.last_modified);
      t->seen.last_modified = is_header_safe (v) ? v : (free (v), NULL);
      break;
    case HEADER_CONTENT_RANGE:
      {
        unsigned long long start;
        t->has_content_range = sscanf (v, "bytes %llu-", &start) == 1;
        t->range_start = start;
        free (v);
        break;
      }
    default:
      break;
    }
  return len;
}

static void
truncate_partial (struct transfer *t)
{
  if (ftruncate (t->fd, 0) < 0 || lseek (t->fd, 0, SEEK_SET) < 0)
    die_with_error ("cannot truncate partial download %s", t->name);
  sha256_reset (&t->hash);
  t->offset = 0;
}

/* Called before the first body byte (or after a transfer with an empty body): decide
 * whether the body continues the partial file or replaces it. */
static void
begin_body (struct transfer *t, CURL *h)
{
  long status = 0;
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  t->body_started = true;
  if (t->offset > 0 && status == HTTP_PARTIAL_CONTENT)
    {
      if (!t->has_content_range || t->range_start != t->offset)
        t->bad_range = true;
      return;
    }
  /* A full body: a fresh download, or a server that ignored our range (If-Range did not
   * match because the file changed, or no range support). */
  if (t->offset > 0)
    truncate_partial (t);
  t->seen.url = xstrdup (t->url);
  validators_store (t->dirfd, t->name, &t->seen);
  t->progress->base = 0; /* starting over: every byte counts */
}

static size_t
file_write (char *ptr, size_t size, size_t nmemb, void *data)
{
  struct transfer *t = data;
  size_t n = size * nmemb;
  if (!t->body_started)
    begin_body (t, t->handle);
  if (t->bad_range)
    return 0;
  if (t->max_size > 0 && t->offset + t->written + n > t->max_size)
    {
      t->too_big = true;
      return 0;
    }
  if (write_all (t->fd, ptr, n) < 0)
    {
      t->write_errno = errno;
      return 0;
    }
  sha256_update (&t->hash, ptr, n);
  t->written += n;
  return n;
}

/* How many bytes of the partial file can be kept: all of them when its validators came
 * from this URL over http(s) and can vouch for them (If-Range), else none. */
static uint64_t
resumable_offset (int fd, const char *url, const struct validators *v, uint64_t max_size)
{
  struct stat st;
  if (fstat (fd, &st) < 0)
    die_with_error ("cannot stat partial download");
  if (st.st_size <= 0 || v->url == NULL || strcmp (v->url, url) != 0
      || (v->etag == NULL && v->last_modified == NULL)
      || !(str_has_prefix (url, "http://") || str_has_prefix (url, "https://")))
    return 0;
  if (max_size > 0 && (uint64_t) st.st_size > max_size)
    return 0;
  return (uint64_t) st.st_size;
}

/* One attempt; returns the curl code and leaves the response status in *status. */
static CURLcode
transfer_once (struct transfer *t, const struct download_opts *o, struct progress *p,
               char errbuf[CURL_ERROR_SIZE], long *status)
{
  CURL *h = download_handle_new (t->url, o, errbuf);
  struct curl_slist *headers = NULL;
  cleanup_free char *range = NULL;
  cleanup_free char *if_range = NULL;
  struct validators old;
  validators_load (t->dirfd, t->name, &old);
  t->offset = resumable_offset (t->fd, t->url, &old, o->max_size);
  if (t->offset == 0)
    {
      if (ftruncate (t->fd, 0) < 0)
        die_with_error ("cannot truncate partial download %s", t->name);
    }
  else
    {
      range = xasprintf ("%" PRIu64 "-", t->offset);
      if_range = xasprintf ("If-Range: %s", old.etag != NULL ? old.etag : old.last_modified);
      curl_easy_setopt (h, CURLOPT_RANGE, range);
    }
  headers = download_header_list (o, if_range);
  curl_easy_setopt (h, CURLOPT_HTTPHEADER, headers);
  validators_clear (&old);

  /* The digest covers the whole file: the kept bytes first, re-read from disk. */
  sha256_init (&t->hash);
  if (lseek (t->fd, 0, SEEK_SET) < 0 || sha256_update_fd (&t->hash, t->fd, t->offset) < 0)
    die_with_error ("cannot read partial download %s", t->name);
  t->written = 0;
  t->body_started = t->too_big = t->bad_range = false;
  t->handle = h;
  t->progress = p;

  curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, header_cb);
  curl_easy_setopt (h, CURLOPT_HEADERDATA, t);
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, file_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, t);
  progress_begin (p, p->enabled, p->label, o->expected_size, t->offset);
  /* Called at least once a second, bar or no bar: where a signal stops the transfer. */
  curl_easy_setopt (h, CURLOPT_XFERINFOFUNCTION, xferinfo);
  curl_easy_setopt (h, CURLOPT_XFERINFODATA, p);
  curl_easy_setopt (h, CURLOPT_NOPROGRESS, 0L);
  if (t->offset > 0 && t->offset == o->expected_size)
    {
      /* Everything is already here (interrupted between the last byte and the rename). */
      t->body_started = true;
      curl_easy_cleanup (h);
      curl_slist_free_all (headers);
      *status = 0;
      return CURLE_OK;
    }
  verbose ("download %s from byte %" PRIu64 " (%s)", t->url, t->offset, t->offset ? "resumed" : "new");
  if (t->offset > 0 && !o->quiet)
    fprintf (stderr, "%s: resuming %s at byte %" PRIu64 "\n", PROGRAM_NAME, t->url, t->offset);

  CURLcode rc = curl_easy_perform (h);
  *status = 0;
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, status);
  if (rc == CURLE_OK && !t->body_started)
    begin_body (t, h); /* an empty body */
  curl_easy_cleanup (h);
  curl_slist_free_all (headers);
  validators_clear (&t->seen);
  return rc;
}

int
download_file (const char *url, int dirfd, const char *name, const struct download_opts *o,
               char hex[SHA256_HEX_LEN + 1])
{
  cleanup_fd int fd = openat (dirfd, name, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                              0600);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    die_with_error ("cannot open partial download %s", name);
  /* Planted between the cache's look and this open (cache_partial_name): not resumed from,
   * not written to. */
  if (!S_ISREG (st.st_mode) || st.st_uid != getuid () || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
    die ("partial download %s: another user's file took its name; run the command again", name);
  struct transfer t = { .fd = fd, .dirfd = dirfd, .name = name, .url = url,
                        .max_size = o->max_size };
  struct progress p = { .enabled = !o->quiet && isatty (STDERR_FILENO),
                        .label = o->label != NULL ? o->label : url };
  char errbuf[CURL_ERROR_SIZE];
  long status;
  CURLcode rc = transfer_once (&t, o, &p, errbuf, &status);
  if (rc == CURLE_HTTP_RETURNED_ERROR && status == HTTP_RANGE_NOT_SATISFIABLE && t.offset > 0)
    {
      /* The kept bytes do not fit the file any more: start over, once. */
      download_discard (dirfd, name);
      sha256_free (&t.hash);
      rc = transfer_once (&t, o, &p, errbuf, &status);
    }
  progress_end (&p);

  if (t.too_big)
    {
      download_discard (dirfd, name);
      die ("cannot download %s: the body is larger than %s %" PRIu64 " bytes", url,
           o->max_size == o->expected_size ? "the expected" : "the limit of", o->max_size);
    }
  if (t.bad_range)
    {
      download_discard (dirfd, name);
      die ("cannot download %s: the server answered a range request with the wrong range "
           "(partial download deleted)", url);
    }
  if (t.write_errno != 0)
    {
      errno = t.write_errno;
      die_with_error ("cannot write partial download %s", name);
    }
  if (rc != CURLE_OK)
    {
      bool resumable;
      {
        /* Freed before the die() below, not only reachable from a dead slot. */
        cleanup_free char *vname = validators_name (name);
        resumable = fstat (fd, &st) == 0 && st.st_size > 0
                    && faccessat (dirfd, vname, F_OK, 0) == 0
                    && rc != CURLE_HTTP_RETURNED_ERROR;
      }
      if (!resumable)
        download_discard (dirfd, name);
      interrupt_check_note (resumable ? " (partial download kept; run the command again to "
                                        "resume, or 'cache clean')" : "");
      cleanup_free char *why = download_error_text (rc, errbuf, url, o);
      die ("cannot download %s: %s%s", url, why,
           resumable ? " (partial download kept; run the command again to resume)" : "");
    }
  if (fsync (fd) < 0)
    die_with_error ("cannot write partial download %s", name);
  verbose ("downloaded %s: %" PRIu64 " bytes, %" PRIu64 " resumed", url, t.offset + t.written, t.offset);
  sha256_final (&t.hash, hex);
  if (lseek (fd, 0, SEEK_SET) < 0)
    die_with_error ("cannot rewind %s", name);
  return steal_fd (&fd);
}
