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
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/digest.h"
#include "store/download.h"
#include "store/interrupt.h"
#include "store/progress.h"

#define CONNECT_TIMEOUT_S 30L
#define LOW_SPEED_LIMIT_BPS 1024L  /* slower than this ... */
#define LOW_SPEED_TIME_S 30L       /* ... for this long aborts the transfer */
#define MAX_REDIRECTS 10L
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

/* ---- The handle: every option that makes a transfer safe, in one place. */

static void
global_init (void)
{
  static bool done;
  if (done)
    return;
  if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
    die ("cannot initialise libcurl");
  done = true;
}

static long
env_seconds (const char *var, long fallback)
{
  const char *s = getenv (var);
  if (s == NULL || s[0] == '\0')
    return fallback;
  char *end;
  errno = 0;
  long v = strtol (s, &end, 10);
  if (errno != 0 || *end != '\0' || v <= 0)
    die ("invalid %s '%s': expected a positive number of seconds", var, s);
  return v;
}

static bool
is_https (const char *url)
{
  return strncasecmp (url, "https://", strlen ("https://")) == 0;
}

static CURL *
new_handle (const char *url, const struct download_opts *o, char errbuf[CURL_ERROR_SIZE])
{
  global_init ();
  CURL *h = curl_easy_init ();
  if (h == NULL)
    die ("cannot create a libcurl handle");
  const char *cacert = o->cacert;
  if (cacert == NULL)
    {
      /* libcurl itself ignores CURL_CA_BUNDLE; the curl tool honours it, so do we. */
      const char *env = getenv ("CURL_CA_BUNDLE");
      cacert = env != NULL && env[0] != '\0' ? env : NULL;
    }
  if (cacert != NULL && access (cacert, R_OK) < 0)
    die_with_error ("cannot read CA certificates %s", cacert);

  errbuf[0] = '\0';
  cleanup_free char *agent = xasprintf ("%s/%s", PROGRAM_NAME, PACKAGE_VERSION);
  CURLcode rc = CURLE_OK;
#define SET(opt, val) \
  do { if (rc == CURLE_OK) rc = curl_easy_setopt (h, opt, val); } while (0)
  SET (CURLOPT_URL, url);
  SET (CURLOPT_ERRORBUFFER, errbuf);
  SET (CURLOPT_FAILONERROR, 1L);
  SET (CURLOPT_PROTOCOLS_STR, "https,http,file");
  /* What was asked for over https is never handed to plain http by a redirect (where
   * anyone on the path could read or replace it) unless the user said --insecure-http. */
  SET (CURLOPT_REDIR_PROTOCOLS_STR, is_https (url) && !o->insecure_http ? "https" : "https,http");
  SET (CURLOPT_FOLLOWLOCATION, 1L);
  SET (CURLOPT_MAXREDIRS, MAX_REDIRECTS);
  SET (CURLOPT_SSL_VERIFYPEER, 1L);
  SET (CURLOPT_SSL_VERIFYHOST, 2L);
  if (cacert != NULL)
    SET (CURLOPT_CAINFO, cacert);
  SET (CURLOPT_CONNECTTIMEOUT, env_seconds ("ENTER_DEVROOT_CONNECT_TIMEOUT", CONNECT_TIMEOUT_S));
  SET (CURLOPT_LOW_SPEED_LIMIT, LOW_SPEED_LIMIT_BPS);
  SET (CURLOPT_LOW_SPEED_TIME, env_seconds ("ENTER_DEVROOT_LOW_SPEED_TIME", LOW_SPEED_TIME_S));
  SET (CURLOPT_USERAGENT, agent);
  SET (CURLOPT_NOSIGNAL, 1L);
  /* Bytes are hashed as they arrive: a transparently decoded body would not be the file. */
  SET (CURLOPT_HTTP_CONTENT_DECODING, 0L);
#undef SET
  if (rc != CURLE_OK)
    die ("cannot configure libcurl: %s", curl_easy_strerror (rc));
  return h;
}

/* libcurl's message, plus what to do about it when that is not obvious. */
static char *
error_text (CURLcode rc, const char *errbuf, const char *url, const struct download_opts *o)
{
  const char *msg = errbuf[0] != '\0' ? errbuf : curl_easy_strerror (rc);
  const char *hint = "";
  if (rc == CURLE_UNSUPPORTED_PROTOCOL && is_https (url) && !o->insecure_http)
    hint = " (only https, http and file URLs are fetched, and an https URL is redirected to "
           "https only: plain http needs --insecure-http for docker://, or an http URL named "
           "as such)";
  else if (rc == CURLE_UNSUPPORTED_PROTOCOL)
    hint = " (only https, http and file URLs are fetched, and redirects only to https and http)";
  else if (rc == CURLE_PEER_FAILED_VERIFICATION)
    hint = " (for a private CA, pass --cacert FILE or set CURL_CA_BUNDLE)";
  return xasprintf ("%s%s", msg, hint);
}

/* O's extra headers, then EXTRA (may be NULL), as a list for CURLOPT_HTTPHEADER. */
static struct curl_slist *
header_list (const struct download_opts *o, const char *extra)
{
  struct curl_slist *list = NULL;
  for (size_t i = 0; o->headers != NULL && o->headers[i] != NULL; i++)
    if ((list = curl_slist_append (list, o->headers[i])) == NULL)
      die ("out of memory");
  if (extra != NULL && (list = curl_slist_append (list, extra)) == NULL)
    die ("out of memory");
  return list;
}

/* ---- Into memory (the catalogue, a registry's manifests). */

struct memory_sink
{
  struct strbuf sb;
  size_t max;
  bool too_big;
  struct download_reply *reply; /* headers wanted, or NULL */
};

void
download_reply_clear (struct download_reply *r)
{
  free (r->content_type);
  free (r->www_authenticate);
  free (r->location);
  *r = (struct download_reply) { 0 };
}

static size_t
memory_write (char *ptr, size_t size, size_t nmemb, void *data)
{
  struct memory_sink *m = data;
  size_t n = size * nmemb;
  if (m->sb.len + n > m->max)
    {
      m->too_big = true;
      return 0;
    }
  strbuf_append_len (&m->sb, ptr, n);
  return n;
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

static char *
header_value (const char *line, size_t len, const char *name)
{
  size_t nlen = strlen (name);
  if (len <= nlen || strncasecmp (line, name, nlen) != 0 || line[nlen] != ':')
    return NULL;
  const char *v = line + nlen + 1, *end = line + len;
  while (v < end && (*v == ' ' || *v == '\t'))
    v++;
  while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ' || end[-1] == '\t'))
    end--;
  char *s = strndup (v, (size_t) (end - v));
  if (s == NULL)
    die ("out of memory");
  return s;
}

/* The headers download_request returns, from the final response only. */
static size_t
reply_header (char *line, size_t size, size_t nmemb, void *data)
{
  struct memory_sink *m = data;
  size_t len = size * nmemb;
  char *v;
  if (len >= 5 && strncmp (line, "HTTP/", 5) == 0)
    {
      long status = m->reply->status;
      download_reply_clear (m->reply);
      m->reply->status = status;
    }
  else if ((v = header_value (line, len, "Content-Type")) != NULL)
    {
      free (m->reply->content_type);
      m->reply->content_type = v;
    }
  else if ((v = header_value (line, len, "WWW-Authenticate")) != NULL)
    {
      free (m->reply->www_authenticate);
      m->reply->www_authenticate = v;
    }
  else if ((v = header_value (line, len, "Location")) != NULL)
    {
      free (m->reply->location);
      m->reply->location = v;
    }
  return len;
}

/* One GET into memory; an HTTP error status fails the transfer unless REPLY asks for it. */
static CURLcode
memory_get (const char *url, size_t max, const struct download_opts *o,
            struct download_reply *reply, struct memory_sink *m, char errbuf[CURL_ERROR_SIZE])
{
  CURL *h = new_handle (url, o, errbuf);
  struct curl_slist *headers = header_list (o, NULL);
  *m = (struct memory_sink) { .max = max, .reply = reply };
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, memory_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, m);
  curl_easy_setopt (h, CURLOPT_HTTPHEADER, headers);
  if (reply != NULL)
    {
      *reply = (struct download_reply) { 0 };
      curl_easy_setopt (h, CURLOPT_FAILONERROR, 0L);
      curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, reply_header);
      curl_easy_setopt (h, CURLOPT_HEADERDATA, m);
    }
  CURLcode rc = curl_easy_perform (h);
  if (reply != NULL)
    curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &reply->status);
  curl_easy_cleanup (h);
  curl_slist_free_all (headers);
  if (m->too_big)
    die ("cannot download %s: larger than %zu bytes", url, max);
  return rc;
}

char *
download_to_memory (const char *url, size_t max, const struct download_opts *o, char **why_out,
                    size_t *len_out)
{
  char errbuf[CURL_ERROR_SIZE];
  struct memory_sink m;
  CURLcode rc = memory_get (url, max, o, NULL, &m, errbuf);
  if (rc != CURLE_OK)
    {
      char *why = error_text (rc, errbuf, url, o);
      if (why_out != NULL)
        {
          free (strbuf_steal (&m.sb));
          *why_out = why;
          return NULL;
        }
      die ("cannot download %s: %s", url, why);
    }
  *len_out = m.sb.len;
  return strbuf_steal (&m.sb);
}

/* ---- Sending (a registry's uploads). */

struct send_source
{
  const struct download_send *s;
  uint64_t sent;
};

static size_t
send_read (char *buf, size_t size, size_t nmemb, void *data)
{
  struct send_source *src = data;
  const struct download_send *s = src->s;
  size_t want = size * nmemb;
  if (s->body_fd < 0)
    {
      size_t left = s->body_len - (size_t) src->sent;
      size_t n = left < want ? left : want;
      memcpy (buf, s->body + src->sent, n);
      src->sent += n;
      return n;
    }
  uint64_t left = s->body_size - src->sent;
  if (left < want)
    want = (size_t) left;
  if (want == 0)
    return 0;
  ssize_t n;
  do
    n = pread (s->body_fd, buf, want, s->body_offset + (off_t) src->sent);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    return CURL_READFUNC_ABORT;
  src->sent += (uint64_t) n;
  if (s->progress != NULL)
    progress_update (s->progress, s->progress_base + src->sent, 0);
  return (size_t) n;
}

char *
download_send (const char *url, const struct download_opts *o, const struct download_send *s,
               struct download_reply *reply, size_t *len_out)
{
  char errbuf[CURL_ERROR_SIZE];
  CURL *h = new_handle (url, o, errbuf);
  struct curl_slist *headers = header_list (o, NULL);
  struct memory_sink m = { .max = 1024 * 1024, .reply = reply };
  struct send_source src = { .s = s };
  *reply = (struct download_reply) { 0 };
  curl_easy_setopt (h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt (h, CURLOPT_FAILONERROR, 0L);
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, memory_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, &m);
  curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, reply_header);
  curl_easy_setopt (h, CURLOPT_HEADERDATA, &m);
  if (strcmp (s->method, "HEAD") == 0)
    curl_easy_setopt (h, CURLOPT_NOBODY, 1L);
  else
    {
      uint64_t size = s->body_fd >= 0 ? s->body_size : s->body_len;
      curl_easy_setopt (h, CURLOPT_UPLOAD, 1L);
      curl_easy_setopt (h, CURLOPT_READFUNCTION, send_read);
      curl_easy_setopt (h, CURLOPT_READDATA, &src);
      curl_easy_setopt (h, CURLOPT_INFILESIZE_LARGE, (curl_off_t) size);
      curl_easy_setopt (h, CURLOPT_CUSTOMREQUEST, s->method);
      /* No "Expect: 100-continue" round trip: distribution answers at once anyway. */
      if ((headers = curl_slist_append (headers, "Expect:")) == NULL)
        die ("out of memory");
    }
  curl_easy_setopt (h, CURLOPT_HTTPHEADER, headers);
  CURLcode rc = curl_easy_perform (h);
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &reply->status);
  curl_easy_cleanup (h);
  curl_slist_free_all (headers);
  if (rc != CURLE_OK && !m.too_big)
    {
      cleanup_free char *why = error_text (rc, errbuf, url, o);
      die ("%s: %s", s->what, why);
    }
  *len_out = m.sb.len;
  return strbuf_steal (&m.sb);
}

char *
download_request (const char *url, size_t max, const struct download_opts *o,
                  struct download_reply *reply, size_t *len_out)
{
  char errbuf[CURL_ERROR_SIZE];
  struct memory_sink m;
  CURLcode rc = memory_get (url, max, o, reply, &m, errbuf);
  if (rc != CURLE_OK)
    {
      cleanup_free char *why = error_text (rc, errbuf, url, o);
      die ("cannot download %s: %s", url, why);
    }
  *len_out = m.sb.len;
  return strbuf_steal (&m.sb);
}

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

static size_t
header_cb (char *line, size_t size, size_t nmemb, void *data)
{
  struct transfer *t = data;
  size_t len = size * nmemb;
  char *v;
  if (len >= 5 && strncmp (line, "HTTP/", 5) == 0)
    {
      validators_clear (&t->seen);
      t->has_content_range = false;
    }
  else if ((v = header_value (line, len, "ETag")) != NULL)
    {
      free (t->seen.etag);
      t->seen.etag = NULL;
      if (strncmp (v, "W/", 2) != 0 && v[0] == '"' && v[strlen (v) - 1] == '"' && strlen (v) >= 2
          && is_header_safe (v))
        t->seen.etag = v;
      else
        free (v);
    }
  else if ((v = header_value (line, len, "Last-Modified")) != NULL)
    {
      free (t->seen.last_modified);
      t->seen.last_modified = is_header_safe (v) ? v : (free (v), NULL);
    }
  else if ((v = header_value (line, len, "Content-Range")) != NULL)
    {
      unsigned long long start;
      t->has_content_range = sscanf (v, "bytes %llu-", &start) == 1;
      t->range_start = start;
      free (v);
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
  CURL *h = new_handle (t->url, o, errbuf);
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
  headers = header_list (o, if_range);
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
      cleanup_free char *why = error_text (rc, errbuf, url, o);
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
