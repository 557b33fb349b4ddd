/* Transfers with libcurl: only https, http and file; redirects only to https and http (and
 * from https to https only, unless --insecure-http); TLS
 * always verified; fail on HTTP errors; a connect timeout and a low-speed abort; a size cap;
 * SHA-256 while streaming; resume with Range + If-Range; a progress bar on a terminal. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store/source.h"

struct download_opts
{
  const char *cacert;   /* --cacert FILE; else $CURL_CA_BUNDLE; else the system's CAs */
  bool quiet;           /* no progress bar, even on a terminal */
  uint64_t max_size;    /* refuse a body larger than this many bytes; 0: no limit */
  uint64_t expected_size; /* the catalogue's size, 0 when unknown: the progress bar's total,
                           * and a partial file of exactly this size needs no request */
  const char *label;    /* what the progress bar calls the file */
  bool insecure_http;   /* an https URL may be redirected to plain http (--insecure-http);
                         * without it, a redirect from https goes to https only */
  const char *const *headers; /* extra request headers ("Name: value"; a registry's
                               * Authorization, Accept), NULL-terminated; or NULL. libcurl
                               * (>= 7.83) drops Authorization on a redirect to another
                               * origin: host, port or scheme. */
};

/* What download_request saw of the final response. */
struct download_reply
{
  long status;
  char *content_type;     /* or NULL */
  char *www_authenticate; /* or NULL */
  char *location;         /* or NULL */
};
void download_reply_clear (struct download_reply *r);

/* Download URL into the file NAME in directory DIRFD (the cache's partial/), resuming the
 * bytes already there when NAME.validators says they came from the same URL and the server
 * agrees (If-Range); a server answering 200 instead of 206 restarts the file. On success,
 * HEX is the SHA-256 of the whole file and the return value an fd open on it. die()s on
 * failure: a transfer cut short keeps the partial file for the next attempt; an HTTP error,
 * an oversize body or a refused redirect deletes it. */
int download_file (const char *url, int dirfd, const char *name, const struct download_opts *o,
                   char hex[SHA256_HEX_LEN + 1]);

/* Download URL (a catalogue) into memory: at most MAX bytes, NUL-terminated. A body over
 * MAX die()s; any other failure die()s too, unless WHY is not NULL: then NULL is returned
 * with *WHY (malloc'd) saying what failed. */
char *download_to_memory (const char *url, size_t max, const struct download_opts *o,
                          char **why, size_t *len_out);

/* The same, but an HTTP error status is not fatal: it is in REPLY with the headers a
 * registry client needs, and the body (an error document, at most MAX bytes) is returned. */
char *download_request (const char *url, size_t max, const struct download_opts *o,
                        struct download_reply *reply, size_t *len_out);

/* Delete NAME and NAME.validators in DIRFD (a download that must not be resumed). */
void download_discard (int dirfd, const char *name);

/* A request that sends (a registry's uploads): METHOD "HEAD" (no body), else BODY_LEN bytes
 * at BODY or, when BODY_FD >= 0, BODY_SIZE bytes read from BODY_FD from offset 0. Redirects
 * are not followed. */
struct progress;
struct download_send
{
  const char *what;      /* begins the error line of a failed transfer (TLS, connection) */
  const char *method;
  const char *body;
  size_t body_len;
  int body_fd;
  off_t body_offset; /* where in BODY_FD the BODY_SIZE bytes begin */
  uint64_t body_size;
  struct progress *progress; /* or NULL: updated with PROGRESS_BASE + the bytes sent */
  uint64_t progress_base;
};

/* Send S to URL with O's headers: an HTTP error status is not fatal (it is in REPLY, with
 * Location); the response body (at most 1 MiB) is returned. A transfer that fails (TLS,
 * connection) dies naming s->what. */
char *download_send (const char *url, const struct download_opts *o, const struct download_send *s,
                     struct download_reply *reply, size_t *len_out);
