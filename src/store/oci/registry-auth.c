/* Credentials and authentication challenges of a registry (distribution's token and basic
 * auth), shared by pulling (registry.c) and pushing (registry-upload.c): see registry.c's
 * comment for where credentials come from and where they are sent. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"
#include "store/cache/download.h"
#include "store/oci/oci-ref.h"
#include "store/oci/registry-auth.h"

#define HTTP_OK 200
#define HTTP_UNAUTHORIZED 401
#define AUTH_FILE_MAX (1024 * 1024)
#define TOKEN_REPLY_MAX (1024 * 1024)

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

char *
registry_find_credentials (const char *registry)
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
answer_bearer (struct registry_auth *r, const char *what, const char *challenge,
               const char *const *scopes)
{
  cleanup_free char *realm = challenge_param (challenge, "realm");
  cleanup_free char *service = challenge_param (challenge, "service");
  cleanup_free char *scope = challenge_param (challenge, "scope");
  if (realm == NULL)
    die ("%s: the registry asks for a token but names no realm", what);
  if (!str_has_prefix (realm, "https://")
      && !(r->insecure_http && str_has_prefix (realm, "http://")))
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
  cleanup_free char *default_scope = xasprintf ("repository:%s:pull", r->repository);
  const char *one[] = { scope != NULL ? scope : default_scope, NULL };
  for (const char *const *sc = scopes != NULL ? scopes : one; *sc != NULL; sc++)
    {
      cleanup_free char *escope = url_escape (*sc);
      strbuf_appendf (&url, "%cscope=%s", sep, escope);
      sep = '&';
    }
  cleanup_free char *token_url = strbuf_steal (&url);

  cleanup_free char *basic = r->basic != NULL ? xasprintf ("Authorization: Basic %s", r->basic)
                                              : NULL;
  const char *headers[] = { basic, NULL };
  struct download_opts d = { .cacert = r->cacert, .quiet = true, .headers = headers,
                             .insecure_http = r->insecure_http };
  struct download_reply reply;
  size_t len;
  cleanup_free char *body = download_request (token_url, TOKEN_REPLY_MAX, &d, &reply, &len);
  long status = reply.status;
  download_reply_clear (&reply);
  if (status == HTTP_UNAUTHORIZED)
    die ("%s: the token service refused %s (wrong credentials in $REGISTRY_AUTH_FILE or "
         "~/.docker/config.json?)", what, r->basic != NULL ? "your credentials" : "an "
         "anonymous request");
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

void
registry_auth_init (struct registry_auth *a, const char *registry, const char *repository,
                    const struct oci_opts *o)
{
  *a = (struct registry_auth) { .registry = xstrdup (registry),
                                .repository = xstrdup (repository), .cacert = o->cacert,
                                .insecure_http = o->insecure_http,
                                .basic = registry_find_credentials (registry) };
}

void
registry_auth_clear (struct registry_auth *a)
{
  char *owned[] = { a->registry, a->repository, a->basic, a->authorization };
  free_strings (owned, N_ELEMENTS (owned));
  *a = (struct registry_auth) { 0 };
}

void
registry_auth_answer (struct registry_auth *a, const char *what, const char *challenge,
                      const char *const *scopes)
{
  if (strncasecmp (challenge, "Bearer ", strlen ("Bearer ")) == 0)
    answer_bearer (a, what, challenge, scopes);
  else if (strncasecmp (challenge, "Basic", strlen ("Basic")) == 0 && a->basic != NULL)
    {
      free (a->authorization);
      a->authorization = xasprintf ("Authorization: Basic %s", a->basic);
    }
  else
    die ("%s: %s asks for authentication (%s) and there are no credentials for it in "
         "$REGISTRY_AUTH_FILE or ~/.docker/config.json", what, a->registry, challenge);
}
