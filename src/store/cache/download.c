/* Transfers with libcurl, in the shape of curl's url2file.c: one easy handle with every
 * option that makes a transfer safe, CURLOPT_ERRORBUFFER for messages, CURLOPT_FAILONERROR,
 * scheme restrictions with CURLOPT_PROTOCOLS_STR / CURLOPT_REDIR_PROTOCOLS_STR; transfers
 * into memory and sends. Resumable downloads into a file are in download-file.c. */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/util.h"
#include "store/cache/download-handle.h"
#include "store/cache/download.h"
#include "store/progress.h"

#define CONNECT_TIMEOUT_S 30L
#define LOW_SPEED_LIMIT_BPS 1024L  /* slower than this ... */
#define LOW_SPEED_TIME_S 30L       /* ... for this long aborts the transfer */
#define MAX_REDIRECTS 10L

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

static bool
is_https (const char *url)
{
  return strncasecmp (url, "https://", strlen ("https://")) == 0;
}

CURL *
download_handle_new (const char *url, const struct download_opts *o,
                     char errbuf[CURL_ERROR_SIZE])
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
char *
download_error_text (CURLcode rc, const char *errbuf, const char *url,
                     const struct download_opts *o)
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
  else if (rc == CURLE_SSL_CONNECT_ERROR && is_https (url)
           && (strstr (msg, "wrong version number") != NULL
               || strstr (msg, "packet length too long") != NULL
               || strstr (msg, "record layer failure") != NULL))
    /* OpenSSL reading an HTTP answer as a TLS record: what podman calls "server gave HTTP
     * response to HTTPS client". */
    hint = " (the server speaks plain http: for a registry, add --insecure-http)";
  return xasprintf ("%s%s", msg, hint);
}

/* O's extra headers, then EXTRA (may be NULL), as a list for CURLOPT_HTTPHEADER. */
struct curl_slist *
download_header_list (const struct download_opts *o, const char *extra)
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
  char *owned[] = { r->content_type, r->www_authenticate, r->location };
  free_strings (owned, N_ELEMENTS (owned));
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

int
download_header_parse (const char *line, size_t len, const char *const names[], char **value)
{
  if (len >= 5 && strncmp (line, "HTTP/", 5) == 0)
    return DOWNLOAD_STATUS_LINE;
  for (int i = 0; names[i] != NULL; i++)
    if ((*value = header_value (line, len, names[i])) != NULL)
      return i;
  return DOWNLOAD_OTHER_HEADER;
}

/* The headers download_request returns, from the final response only; in the order of
 * the slots in reply_header. */
static const char *const reply_headers[] = { "Content-Type", "WWW-Authenticate", "Location", NULL };

static size_t
reply_header (char *line, size_t size, size_t nmemb, void *data)
{
  struct download_reply *r = ((struct memory_sink *) data)->reply;
  size_t len = size * nmemb;
  char *v;
  int which = download_header_parse (line, len, reply_headers, &v);
  if (which == DOWNLOAD_STATUS_LINE)
    {
      long status = r->status;
      download_reply_clear (r);
      r->status = status;
    }
  else if (which >= 0)
    {
      char **slot[] = { &r->content_type, &r->www_authenticate, &r->location };
      free (*slot[which]);
      *slot[which] = v;
    }
  return len;
}

/* One GET into memory; an HTTP error status fails the transfer unless REPLY asks for it. */
static CURLcode
memory_get (const char *url, size_t max, const struct download_opts *o,
            struct download_reply *reply, struct memory_sink *m, char errbuf[CURL_ERROR_SIZE])
{
  CURL *h = download_handle_new (url, o, errbuf);
  struct curl_slist *headers = download_header_list (o, NULL);
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
      char *why = download_error_text (rc, errbuf, url, o);
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
  CURL *h = download_handle_new (url, o, errbuf);
  struct curl_slist *headers = download_header_list (o, NULL);
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
      cleanup_free char *why = download_error_text (rc, errbuf, url, o);
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
      cleanup_free char *why = download_error_text (rc, errbuf, url, o);
      die ("cannot download %s: %s", url, why);
    }
  *len_out = m.sb.len;
  return strbuf_steal (&m.sb);
}
