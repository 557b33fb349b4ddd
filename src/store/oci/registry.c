/* A registry behind a docker:// reference (distribution's HTTP API v2), for oci.c.
 *
 * Requests go to https://REGISTRY/v2/REPO/... (plain http only with --insecure-http).
 * Authentication follows the registry's answer: a 401 with a WWW-Authenticate challenge
 * "Bearer realm=...,service=...,scope=..." fetches a token from the realm (anonymously, or
 * with the user's credentials as basic auth) and retries with it; a "Basic" challenge is
 * answered with the credentials. Credentials are the user's existing ones: an "auths" entry
 * for the registry in $REGISTRY_AUTH_FILE, else in ~/.docker/config.json (credential
 * helpers are not run). They are sent only to the registry itself and to a token realm it
 * names that is https (or http with --insecure-http).
 *
 * Manifests are read into memory (capped at OCI_DOCUMENT_MAX) and checked against a digest
 * reference, and kept in the download cache under that digest, as blobs are: a reference
 * by digest whose documents and blobs are all cached is created without asking the
 * registry anything (what `fetch --from` prepares, for the nodes of a Slurm job); blobs go into the content-addressed download cache (fetch_to_cache), verified
 * against their digest and capped at their descriptor's size while they stream, resumed
 * when interrupted, and shared between images: a layer already cached is not fetched. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"
#include "store/cache/cache.h"
#include "store/cache/digest.h"
#include "store/cache/download.h"
#include "store/cache/fetch.h"
#include "store/oci/oci-source.h"
#include "store/oci/registry-auth.h"

#define HTTP_OK 200
#define HTTP_UNAUTHORIZED 401
#define HTTP_NOT_FOUND 404
#define MANIFEST_ACCEPT \
  "Accept: application/vnd.oci.image.index.v1+json, " \
  "application/vnd.docker.distribution.manifest.list.v2+json, " \
  "application/vnd.oci.image.manifest.v1+json, " \
  "application/vnd.docker.distribution.manifest.v2+json"

struct registry
{
  const struct oci_ref *ref;
  const struct oci_opts *opts;
  char *base;          /* https://HOST[:PORT] */
  struct registry_auth auth; /* the credentials, and the answer to a challenge */
};

/* ---- Requests. */

/* GET URL with the current authorization and ACCEPT (a header line, or NULL). */
static char *
get (struct registry *r, const char *url, const char *accept, struct download_reply *reply,
     size_t *len)
{
  const char *headers[3] = { 0 };
  size_t n = 0;
  if (accept != NULL)
    headers[n++] = accept;
  if (r->auth.authorization != NULL)
    headers[n++] = r->auth.authorization;
  struct download_opts d = { .cacert = r->opts->cacert, .quiet = true, .headers = headers,
                             .insecure_http = r->opts->insecure_http };
  return download_request (url, OCI_DOCUMENT_MAX, &d, reply, len);
}

/* GET PATH under /v2/REPO/ (PATH NULL: /v2/ itself), answering one authentication
 * challenge. Returns the 200 body; a 404 is NULL (the caller names what is missing). */
static char *
registry_get (struct registry *r, const char *path, const char *accept, const char *what,
              struct download_reply *reply, size_t *len)
{
  cleanup_free char *url = xasprintf ("%s/v2/%s/%s", r->base, r->ref->repository, path);
  for (int attempt = 0;; attempt++)
    {
      char *body = get (r, url, accept, reply, len);
      if (reply->status == HTTP_OK)
        return body;
      free (body);
      if (reply->status == HTTP_NOT_FOUND)
        return NULL;
      if (reply->status != HTTP_UNAUTHORIZED)
        die ("%s: the registry answered %ld for %s", what, reply->status, url);
      if (attempt > 0 || reply->www_authenticate == NULL)
        die ("%s: access denied by %s%s", what, r->ref->registry,
             r->auth.basic != NULL ? " (wrong credentials in $REGISTRY_AUTH_FILE or "
                                "~/.docker/config.json?)"
                              : ": authentication required (add credentials for it to "
                                "$REGISTRY_AUTH_FILE or ~/.docker/config.json)");
      cleanup_free char *challenge = xstrdup (reply->www_authenticate);
      download_reply_clear (reply);
      registry_auth_answer (&r->auth, what, challenge, NULL);
    }
}

/* ---- Manifests in the download cache, by digest. */

/* The manifest or index DIGEST from the cache, or NULL: read once into memory and hashed
 * there, so the bytes checked are the bytes used (another user of a shared cache may
 * rewrite the file at any moment). */
static char *
cached_manifest (const char *digest, size_t *len)
{
  if (!str_has_prefix (digest, "sha256:"))
    return NULL;
  struct cache c;
  cache_open (&c);
  char *text = cache_read_verified (&c, digest + strlen ("sha256:"), OCI_DOCUMENT_MAX, len);
  cache_clear (&c);
  return text;
}

/* Keep TEXT, already checked to be DIGEST's, in the cache: written to partial/ under the
 * digest's lock and renamed in, as a download is. A failure only costs a later fetch. */
static void
cache_manifest (const char *digest, const char *text, size_t len, const char *origin)
{
  if (!str_has_prefix (digest, "sha256:"))
    return;
  const char *hex = digest + strlen ("sha256:");
  struct cache c;
  cache_open (&c);
  cleanup_fd int lock = cache_lock (&c, hex, true);
  cleanup_free char *name = cache_partial_name (&c, hex);
  cleanup_free char *partial = xasprintf ("%s/%s", c.partial, name);
  /* NAME is free or the user's own (cache_partial_name); checked again once open, as
   * another user may have planted it in between. */
  cleanup_fd int fd = open (partial, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                            0600);
  struct stat st;
  bool mine = fd >= 0 && fstat (fd, &st) == 0 && S_ISREG (st.st_mode) && st.st_uid == getuid ()
              && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
  if (mine && ftruncate (fd, 0) == 0 && write_all (fd, text, len) == 0)
    cache_commit (&c, name, fd, hex, origin);
  else if (mine)
    unlink (partial);
  cache_clear (&c);
}

/* ---- The image_source interface. */

static char *
registry_read_document (struct image_source *s, const struct oci_descriptor *d, size_t *len)
{
  struct source src = { .fd = -1 };
  s->open_blob (s, d, &src);
  char *text = oci_read_document_fd (src.fd, d, s->what, len);
  source_clear (&src);
  return text;
}

static char *
registry_read_manifest (struct image_source *s, const struct oci_descriptor *d, size_t *len)
{
  struct registry *r = s->data;
  if (d->size > OCI_DOCUMENT_MAX)
    die ("%s: manifest %s is %llu bytes, over the limit of %d", s->what, d->digest,
         (unsigned long long) d->size, OCI_DOCUMENT_MAX);
  cleanup_free char *path = xasprintf ("manifests/%s", d->digest);
  cleanup_free char *what = xasprintf ("%s: manifest %s", s->what, d->digest);
  char *text = cached_manifest (d->digest, len);
  if (text != NULL && *len == d->size)
    return text;
  free (text);
  struct download_reply reply;
  text = registry_get (r, path, MANIFEST_ACCEPT, what, &reply, len);
  download_reply_clear (&reply);
  if (text == NULL)
    die ("%s: the registry does not have it", what);
  if (*len != d->size)
    die ("%s: %zu bytes, its descriptor says %llu", what, *len, (unsigned long long) d->size);
  oci_check_digest (what, d->digest, text, *len);
  cleanup_free char *origin = xasprintf ("%s/v2/%s/%s", r->base, r->ref->repository, path);
  cache_manifest (d->digest, text, *len, origin);
  return text;
}

static void
registry_open_blob (struct image_source *s, const struct oci_descriptor *d, struct source *src)
{
  struct registry *r = s->data;
  const char *hex = d->digest + strlen ("sha256:");
  cleanup_free char *url = xasprintf ("%s/v2/%s/blobs/%s", r->base, r->ref->repository,
                                      d->digest);
  /* The manifest came first: whatever authentication it needed is in hand and serves for
   * the same repository's blobs. */
  const char *headers[] = { r->auth.authorization, NULL };
  struct fetch_opts fo = { .cacert = r->opts->cacert, .quiet = r->opts->quiet,
                           .headers = headers, .insecure_http = r->opts->insecure_http };
  cleanup_free char *label = xasprintf ("%s %.12s", r->ref->repository, hex);
  char got[SHA256_HEX_LEN + 1];
  bool downloaded;
  src->fd = fetch_to_cache (url, hex, d->size, label, &fo, got, &downloaded);
  src->description = xasprintf ("%s: layer %s", s->what, d->digest);
  src->origin = xstrdup (url);
  src->expected_sha256 = xstrdup (hex);
}

void
registry_open (struct image_source *s, const struct oci_ref *ref, const struct oci_opts *o)
{
  struct registry *r = xcalloc (1, sizeof *r);
  r->ref = ref;
  r->opts = o;
  /* A Docker Hub mirror (or a Harbor proxy cache) serves the same repositories under the
   * same names; its credentials are its own. Every blob is still verified against the
   * digests the manifest names. */
  const char *mirror = o->hub_mirror != NULL && strcmp (ref->registry, DOCKER_HUB_REGISTRY) == 0
                       ? o->hub_mirror : NULL;
  if (mirror != NULL)
    {
      r->base = xstrdup (mirror);
      registry_auth_init (&r->auth, strstr (mirror, "://") + 3, r->ref->repository, o);
    }
  else
    {
      r->base = xasprintf ("%s://%s", o->insecure_http ? "http" : "https", ref->registry);
      registry_auth_init (&r->auth, ref->registry, r->ref->repository, o);
    }
  s->data = r;
  s->read_document = registry_read_document;
  s->read_manifest = registry_read_manifest;
  s->open_blob = registry_open_blob;
}

char *
registry_first_manifest (struct image_source *s, const struct oci_ref *ref, size_t *len,
                         char **digest, char **media_type)
{
  struct registry *r = s->data;
  const char *reference = ref->digest != NULL ? ref->digest : ref->tag;
  if (ref->digest != NULL)
    {
      /* Its media type is the document's own mediaType, or its shape (oci_document_kind). */
      char *text = cached_manifest (ref->digest, len);
      if (text != NULL)
        {
          *digest = xstrdup (ref->digest);
          *media_type = NULL;
          return text;
        }
    }
  cleanup_free char *path = xasprintf ("manifests/%s", reference);
  struct download_reply reply;
  char *text = registry_get (r, path, MANIFEST_ACCEPT, s->what, &reply, len);
  if (text == NULL)
    die ("%s: no such image in %s (manifest unknown)", s->what, ref->registry);
  *digest = oci_digest_of (text, *len);
  if (ref->digest != NULL && strcmp (*digest, ref->digest) != 0)
    die ("%s: the registry sent a manifest whose digest is %s", s->what, *digest);
  cleanup_free char *origin = xasprintf ("%s/v2/%s/%s", r->base, r->ref->repository, path);
  cache_manifest (*digest, text, *len, origin);
  /* "type/subtype; charset=..." -> "type/subtype" */
  *media_type = reply.content_type != NULL ? xstrdup (reply.content_type) : NULL;
  if (*media_type != NULL)
    (*media_type)[strcspn (*media_type, "; ")] = '\0';
  download_reply_clear (&reply);
  return text;
}

void
registry_close (struct image_source *s)
{
  struct registry *r = s->data;
  free (r->base);
  registry_auth_clear (&r->auth);
  free (r);
  s->data = NULL;
}
