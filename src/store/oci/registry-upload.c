/* Pushing blobs and a manifest to a registry, as distribution documents it (and docker and
 * podman do it):
 *
 *   HEAD /v2/REPO/blobs/DIGEST                         200: already there, nothing sent
 *   POST /v2/REPO/blobs/uploads/?mount=DIGEST&from=R   201: mounted from the base's
 *                                                      repository on the same registry
 *   POST /v2/REPO/blobs/uploads/                       202 and a Location, then
 *   PUT  LOCATION?digest=DIGEST with the bytes         201 (monolithic); a registry that
 *                                                      refuses that gets PATCH LOCATION
 *                                                      with the bytes, then PUT ?digest=
 *   PUT  /v2/REPO/manifests/TAG                        last: nothing is tagged before
 *
 * Authentication as pulling does it (registry-auth.c), with the scope
 * repository:REPO:pull,push (and repository:FROM:pull for a mount). Every answer is
 * untrusted: a Location is used only as an https (or, with --insecure-http, http) URL, and
 * the credentials go only to one on the registry's own origin; status codes other than the
 * expected one end the push with one line (401, 403, 404, 413 explained). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "store/cache/download.h"
#include "store/progress.h"
#include "store/oci/registry-auth.h"
#include "store/oci/registry-upload.h"

#define HTTP_OK 200
#define HTTP_CREATED 201
#define HTTP_ACCEPTED 202
#define HTTP_UNAUTHORIZED 401
#define HTTP_FORBIDDEN 403
#define HTTP_NOT_FOUND 404
#define HTTP_TOO_LARGE 413

struct upload
{
  const struct oci_ref *dest;
  const char *from_repo;
  const struct oci_opts *o;
  const char *what;
  char *base; /* https://HOST[:PORT] */
  struct registry_auth auth;
  char *scopes[3];
};

struct upload *
upload_open (const struct oci_ref *dest, const char *from_repo, const struct oci_opts *o,
             const char *what)
{
  struct upload *u = xcalloc (1, sizeof *u);
  u->dest = dest;
  u->from_repo = from_repo;
  u->o = o;
  u->what = what;
  u->base = xasprintf ("%s://%s", o->insecure_http ? "http" : "https", dest->registry);
  registry_auth_init (&u->auth, dest->registry, dest->repository, o);
  u->scopes[0] = xasprintf ("repository:%s:pull,push", dest->repository);
  if (from_repo != NULL && strcmp (from_repo, dest->repository) != 0)
    u->scopes[1] = xasprintf ("repository:%s:pull", from_repo);
  return u;
}

void
upload_close (struct upload *u)
{
  registry_auth_clear (&u->auth);
  free (u->base);
  free (u->scopes[0]);
  free (u->scopes[1]);
  free (u);
}

/* One request, answering one authentication challenge. CONTENT_TYPE may be NULL. The
 * Authorization header goes only to the registry's own origin. */
static void
request (struct upload *u, const char *url, struct download_send *s, const char *content_type,
         struct download_reply *reply)
{
  cleanup_free char *own = xasprintf ("%s/", u->base);
  bool ours = str_has_prefix (url, own);
  cleanup_free char *ctype = content_type != NULL ? xasprintf ("Content-Type: %s", content_type)
                                                  : NULL;
  for (int attempt = 0;; attempt++)
    {
      const char *headers[3] = { 0 };
      size_t n = 0;
      if (ctype != NULL)
        headers[n++] = ctype;
      if (ours && u->auth.authorization != NULL)
        headers[n++] = u->auth.authorization;
      struct download_opts d = { .cacert = u->o->cacert, .quiet = true, .headers = headers,
                                 .insecure_http = u->o->insecure_http };
      size_t len;
      free (download_send (url, &d, s, reply, &len));
      if (reply->status != HTTP_UNAUTHORIZED || attempt > 0 || !ours
          || reply->www_authenticate == NULL)
        return;
      cleanup_free char *challenge = xstrdup (reply->www_authenticate);
      download_reply_clear (reply);
      registry_auth_answer (&u->auth, u->what, challenge, (const char *const *) u->scopes);
    }
}

/* One line for an unexpected status answering WHAT. */
static void __attribute__((noreturn))
refused (struct upload *u, const char *what, long status)
{
  const char *repo = u->dest->repository;
  switch (status)
    {
    case HTTP_UNAUTHORIZED:
      die ("%s: access denied by %s%s", u->what, u->dest->registry,
           u->auth.basic != NULL ? " (wrong credentials in $REGISTRY_AUTH_FILE or "
                                   "~/.docker/config.json?)"
                                 : ": authentication required (add credentials for it to "
                                   "$REGISTRY_AUTH_FILE or ~/.docker/config.json)");
    case HTTP_FORBIDDEN:
      die ("%s: denied: %s does not let you push to %s", u->what, u->dest->registry, repo);
    case HTTP_NOT_FOUND:
      die ("%s: %s has no repository %s (or refuses to create it)", u->what,
           u->dest->registry, repo);
    case HTTP_TOO_LARGE:
      die ("%s: %s: too large for %s (413)", u->what, what, u->dest->registry);
    default:
      die ("%s: %s: the registry answered %ld", u->what, what, status);
    }
}

/* The upload URL a 202's Location names, with "digest=DIGEST" added when DIGEST is set. */
static char *
location_url (struct upload *u, const struct download_reply *reply, const char *what,
              const char *digest)
{
  const char *loc = reply->location;
  if (loc == NULL || loc[0] == '\0')
    die ("%s: %s: the registry named no upload location", u->what, what);
  char *url;
  if (loc[0] == '/')
    url = xasprintf ("%s%s", u->base, loc);
  else if (str_has_prefix (loc, "https://")
           || (u->o->insecure_http && str_has_prefix (loc, "http://")))
    url = xstrdup (loc);
  else
    die ("%s: %s: refusing the upload location %s (not https)", u->what, what, loc);
  if (strspn (url, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                   "-._~:/?#[]@!$&'()*+,;=%") != strlen (url))
    die ("%s: %s: the registry named an unusable upload location", u->what, what);
  if (digest == NULL)
    return url;
  char *with = xasprintf ("%s%cdigest=%s", url, strchr (url, '?') != NULL ? '&' : '?', digest);
  free (url);
  return with;
}

static char *
start_upload (struct upload *u, const char *what)
{
  cleanup_free char *url = xasprintf ("%s/v2/%s/blobs/uploads/", u->base, u->dest->repository);
  struct download_send s = { .what = u->what, .method = "POST", .body = "", .body_fd = -1 };
  struct download_reply reply;
  request (u, url, &s, NULL, &reply);
  if (reply.status != HTTP_ACCEPTED)
    refused (u, what, reply.status);
  char *loc = location_url (u, &reply, what, NULL);
  download_reply_clear (&reply);
  return loc;
}

void
upload_check (struct upload *u)
{
  cleanup_free char *loc = start_upload (u, "access");
  /* Given back at once: the registry would drop it after its own timeout anyway. */
  struct download_send s = { .what = u->what, .method = "DELETE", .body_fd = -1 };
  struct download_reply reply;
  request (u, loc, &s, NULL, &reply);
  download_reply_clear (&reply);
}

bool
upload_blob (struct upload *u, const char *digest, uint64_t size, struct upload_body *b,
             const char *label, bool from_base)
{
  cleanup_free char *what = xasprintf ("blob %s", digest);
  struct download_reply reply;
  cleanup_free char *head = xasprintf ("%s/v2/%s/blobs/%s", u->base, u->dest->repository,
                                       digest);
  struct download_send hs = { .what = u->what, .method = "HEAD", .body_fd = -1 };
  request (u, head, &hs, NULL, &reply);
  long status = reply.status;
  download_reply_clear (&reply);
  if (status == HTTP_OK)
    return false;
  if (status != HTTP_NOT_FOUND)
    refused (u, what, status);

  cleanup_free char *loc = NULL;
  if (from_base && u->from_repo != NULL && strcmp (u->from_repo, u->dest->repository) != 0)
    {
      cleanup_free char *url = xasprintf ("%s/v2/%s/blobs/uploads/?mount=%s&from=%s", u->base,
                                          u->dest->repository, digest, u->from_repo);
      struct download_send s = { .what = u->what, .method = "POST", .body = "", .body_fd = -1 };
      request (u, url, &s, NULL, &reply);
      status = reply.status;
      /* 202: the registry could not mount it and opened an upload instead. */
      if (status == HTTP_ACCEPTED)
        loc = location_url (u, &reply, what, NULL);
      download_reply_clear (&reply);
      if (status == HTTP_CREATED)
        return false;
      if (status != HTTP_ACCEPTED)
        refused (u, what, status);
    }
  if (loc == NULL)
    loc = start_upload (u, what);
  if (b->open != NULL)
    b->open (b);

  bool show = !u->o->quiet && isatty (STDERR_FILENO);
  struct progress bar;
  progress_begin (&bar, show, label, size, 0);
  struct download_send body = { .what = u->what, .method = "PUT", .body = b->data,
                                .body_len = b->fd < 0 ? (size_t) size : 0, .body_fd = b->fd,
                                .body_offset = b->offset, .body_size = size,
                                .progress = show ? &bar : NULL };
  cleanup_free char *put = xasprintf ("%s%cdigest=%s", loc, strchr (loc, '?') != NULL ? '&' : '?',
                                      digest);
  request (u, put, &body, "application/octet-stream", &reply);
  status = reply.status;
  download_reply_clear (&reply);
  if (status == HTTP_CREATED)
    {
      progress_end (&bar);
      return true;
    }
  if (status == HTTP_UNAUTHORIZED || status == HTTP_FORBIDDEN || status == HTTP_TOO_LARGE)
    refused (u, what, status);

  /* A registry that takes no monolithic PUT: the bytes in a PATCH, then an empty PUT. */
  free (loc);
  loc = start_upload (u, what);
  body.method = "PATCH";
  request (u, loc, &body, "application/octet-stream", &reply);
  if (reply.status != HTTP_ACCEPTED && reply.status != 204)
    refused (u, what, reply.status);
  cleanup_free char *final = location_url (u, &reply, what, digest);
  download_reply_clear (&reply);
  struct download_send empty = { .what = u->what, .method = "PUT", .body = "", .body_fd = -1 };
  request (u, final, &empty, "application/octet-stream", &reply);
  status = reply.status;
  download_reply_clear (&reply);
  if (status != HTTP_CREATED)
    refused (u, what, status);
  progress_end (&bar);
  return true;
}

void
upload_manifest (struct upload *u, const char *media_type, const char *text, size_t len)
{
  cleanup_free char *url = xasprintf ("%s/v2/%s/manifests/%s", u->base, u->dest->repository,
                                      u->dest->tag);
  struct download_send s = { .what = u->what, .method = "PUT", .body = text, .body_len = len,
                             .body_fd = -1 };
  struct download_reply reply;
  request (u, url, &s, media_type, &reply);
  long status = reply.status;
  download_reply_clear (&reply);
  if (status != HTTP_CREATED)
    refused (u, "the manifest", status);
}
