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
#include "store/cache.h"
#include "store/digest.h"
#include "store/download.h"
#include "store/fetch.h"
#include "store/oci-source.h"

#define HTTP_OK 200
#define HTTP_UNAUTHORIZED 401
#define HTTP_NOT_FOUND 404
#define AUTH_FILE_MAX (1024 * 1024)
#define TOKEN_REPLY_MAX (1024 * 1024)
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
  char *basic;         /* base64 "user:password" from an auth file, or NULL */
  char *authorization; /* "Authorization: ..." once a challenge was answered, or NULL */
};

/* ---- Credentials. */

static bool
valid_basic (const char *b64)
{
  size_t n = strlen (b64);
  if (n == 0 || n % 4 != 0 || strspn (b64, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                              "0123456789+/=") != n)
    return false;
  cleanup_free unsigned char *raw = xmalloc (n);
  int len = EVP_DecodeBlock (raw, (const unsigned char *) b64, (int) n);
  return len > 0 && memchr (raw, ':', (size_t) len) != NULL;
}

/* The "auth" of REGISTRY in the auths of the JSON file PATH, or NULL. A file that is there
 * but broken is an error naming it: silently pulling anonymously would be a surprise. */
static char *
auth_from_file (const char *path, const char *registry)
{
  size_t len;
  cleanup_free char *text = load_file_at (AT_FDCWD, path, AUTH_FILE_MAX, &len);
  if (text == NULL && errno == ENOENT)
    return NULL;
  if (text == NULL)
    die_with_error ("cannot read credentials from %s", path);
  json_error_t err;
  json_t *root = json_loadb (text, len, 0, &err);
  if (root == NULL)
    die ("%s: not valid JSON: %s (line %d)", path, err.text, err.line);
  json_t *auths = json_object_get (root, "auths");
  char *found = NULL;
  /* docker writes Docker Hub's entry under its v1 URL; others under HOST[:PORT], with or
   * without a scheme. */
  bool hub = strcmp (registry, DOCKER_HUB_REGISTRY) == 0;
  cleanup_free char *https = xasprintf ("https://%s", registry);
  cleanup_free char *http = xasprintf ("http://%s", registry);
  const char *keys[] = { registry, https, http, hub ? "https://index.docker.io/v1/" : NULL,
                         hub ? "docker.io" : NULL, hub ? "index.docker.io" : NULL };
  for (size_t i = 0; json_is_object (auths) && i < N_ELEMENTS (keys) && found == NULL; i++)
    {
      json_t *entry = keys[i] != NULL ? json_object_get (auths, keys[i]) : NULL;
      json_t *auth = json_is_object (entry) ? json_object_get (entry, "auth") : NULL;
      if (auth == NULL)
        continue;
      if (!json_is_string (auth) || !valid_basic (json_string_value (auth)))
        {
          json_decref (root);
          die ("%s: the credentials for %s are not base64 of USER:PASSWORD", path, keys[i]);
        }
      found = xstrdup (json_string_value (auth));
    }
  json_decref (root);
  return found;
}

static char *
find_credentials (const char *registry)
{
  const char *env = getenv ("REGISTRY_AUTH_FILE");
  if (env != NULL && env[0] != '\0')
    {
      char *auth = auth_from_file (env, registry);
      if (auth != NULL)
        return auth;
    }
  const char *home = paths_home ();
  if (home == NULL)
    return NULL;
  cleanup_free char *docker = xasprintf ("%s/.docker/config.json", home);
  return auth_from_file (docker, registry);
}

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
  if (r->authorization != NULL)
    headers[n++] = r->authorization;
  struct download_opts d = { .cacert = r->opts->cacert, .quiet = true, .headers = headers,
                             .insecure_http = r->opts->insecure_http };
  return download_request (url, OCI_DOCUMENT_MAX, &d, reply, len);
}

/* The value of PARAM in a challenge (realm="...", service="..."), or NULL. */
static char *
challenge_param (const char *challenge, const char *param)
{
  size_t plen = strlen (param);
  for (const char *p = challenge; (p = strstr (p, param)) != NULL; p += plen)
    {
      bool starts = p == challenge || p[-1] == ' ' || p[-1] == ',';
      if (!starts || strncmp (p + plen, "=\"", 2) != 0)
        continue;
      const char *v = p + plen + 2, *end = strchr (v, '"');
      return end != NULL ? xasprintf ("%.*s", (int) (end - v), v) : NULL;
    }
  return NULL;
}

/* Percent-encode S for a query string. */
static char *
url_escape (const char *s)
{
  struct strbuf sb = { 0 };
  for (const unsigned char *p = (const unsigned char *) s; *p != '\0'; p++)
    if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
        || strchr ("-._~", *p) != NULL)
      strbuf_append_c (&sb, (char) *p);
    else
      strbuf_appendf (&sb, "%%%02X", *p);
  return strbuf_steal (&sb);
}

/* A Bearer challenge: fetch a token from its realm and keep "Authorization: Bearer T". */
static void
answer_bearer (struct registry *r, const char *what, const char *challenge)
{
  cleanup_free char *realm = challenge_param (challenge, "realm");
  cleanup_free char *service = challenge_param (challenge, "service");
  cleanup_free char *scope = challenge_param (challenge, "scope");
  if (realm == NULL)
    die ("%s: the registry asks for a token but names no realm", what);
  if (!str_has_prefix (realm, "https://")
      && !(r->opts->insecure_http && str_has_prefix (realm, "http://")))
    die ("%s: refusing the token realm %s: not https (--insecure-http allows http)", what, realm);
  struct strbuf url = { 0 };
  strbuf_append (&url, realm);
  char sep = strchr (realm, '?') != NULL ? '&' : '?';
  if (service != NULL)
    {
      cleanup_free char *e = url_escape (service);
      strbuf_appendf (&url, "%cservice=%s", sep, e);
      sep = '&';
    }
  cleanup_free char *default_scope = xasprintf ("repository:%s:pull", r->ref->repository);
  cleanup_free char *escope = url_escape (scope != NULL ? scope : default_scope);
  strbuf_appendf (&url, "%cscope=%s", sep, escope);
  cleanup_free char *token_url = strbuf_steal (&url);

  cleanup_free char *basic = r->basic != NULL ? xasprintf ("Authorization: Basic %s", r->basic)
                                              : NULL;
  const char *headers[] = { basic, NULL };
  struct download_opts d = { .cacert = r->opts->cacert, .quiet = true, .headers = headers,
                             .insecure_http = r->opts->insecure_http };
  struct download_reply reply;
  size_t len;
  cleanup_free char *body = download_request (token_url, TOKEN_REPLY_MAX, &d, &reply, &len);
  long status = reply.status;
  download_reply_clear (&reply);
  if (status == HTTP_UNAUTHORIZED)
    die ("%s: the token service refused %s (wrong credentials in $REGISTRY_AUTH_FILE or "
         "~/.docker/config.json?)", what, r->basic != NULL ? "your credentials" : "an "
         "anonymous pull");
  if (status != HTTP_OK)
    die ("%s: the token service %s answered %ld", what, realm, status);
  json_error_t err;
  json_t *root = json_loadb (body, len, 0, &err);
  json_t *tok = root != NULL ? json_object_get (root, "token") : NULL;
  if (!json_is_string (tok) && root != NULL)
    tok = json_object_get (root, "access_token");
  if (!json_is_string (tok) || strspn (json_string_value (tok),
                                       "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                       "0123456789-._~+/=") != strlen (json_string_value (tok)))
    {
      json_decref (root);
      die ("%s: the token service %s sent no usable token", what, realm);
    }
  free (r->authorization);
  r->authorization = xasprintf ("Authorization: Bearer %s", json_string_value (tok));
  json_decref (root);
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
             r->basic != NULL ? " (wrong credentials in $REGISTRY_AUTH_FILE or "
                                "~/.docker/config.json?)"
                              : ": authentication required (add credentials for it to "
                                "$REGISTRY_AUTH_FILE or ~/.docker/config.json)");
      cleanup_free char *challenge = xstrdup (reply->www_authenticate);
      download_reply_clear (reply);
      if (strncasecmp (challenge, "Bearer ", strlen ("Bearer ")) == 0)
        answer_bearer (r, what, challenge);
      else if (strncasecmp (challenge, "Basic", strlen ("Basic")) == 0 && r->basic != NULL)
        {
          free (r->authorization);
          r->authorization = xasprintf ("Authorization: Basic %s", r->basic);
        }
      else
        die ("%s: %s asks for authentication (%s) and there are no credentials for it in "
             "$REGISTRY_AUTH_FILE or ~/.docker/config.json", what, r->ref->registry, challenge);
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
  const char *headers[] = { r->authorization, NULL };
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
      r->basic = find_credentials (strstr (mirror, "://") + 3);
    }
  else
    {
      r->base = xasprintf ("%s://%s", o->insecure_http ? "http" : "https", ref->registry);
      r->basic = find_credentials (ref->registry);
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
  free (r->basic);
  free (r->authorization);
  free (r);
  s->data = NULL;
}
