/* Parsing OCI image references (oci-ref.h). The grammar is docker's (distribution's
 * reference package): lowercase path components separated by '/', each made of
 * [a-z0-9] runs joined by '.', '_', '__' or '-'s; a tag of [A-Za-z0-9_.-], at most 128,
 * not starting with '.' or '-'. */
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "store/oci/oci-ref.h"

#define DOCKER_PREFIX "docker://"
#define LAYOUT_PREFIX "oci:"
#define ARCHIVE_PREFIX "docker-archive:"
#define TAG_MAX 128
#define REPOSITORY_MAX 255
#define DIGEST_PREFIX "sha256:"
#define DIGEST_HEX_LEN 64

bool
oci_ref_is_image (const char *arg)
{
  return str_has_prefix (arg, DOCKER_PREFIX) || str_has_prefix (arg, LAYOUT_PREFIX)
         || str_has_prefix (arg, ARCHIVE_PREFIX);
}

void
oci_ref_clear (struct oci_ref *r)
{
  char *owned[] = { r->registry, r->repository, r->tag, r->digest, r->path };
  free_strings (owned, N_ELEMENTS (owned));
  *r = (struct oci_ref) { 0 };
}

static bool
is_lower_alnum (char c)
{
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool
valid_repository (const char *s)
{
  if (*s == '\0' || strlen (s) > REPOSITORY_MAX)
    return false;
  bool need_alnum = true; /* at the start, and after every separator */
  for (const char *p = s; *p != '\0'; p++)
    {
      if (is_lower_alnum (*p))
        need_alnum = false;
      else if (need_alnum)
        return false;
      else if (*p == '/' || *p == '.')
        need_alnum = true;
      else if (*p == '_')
        {
          if (p[1] == '_')
            p++;
          need_alnum = true;
        }
      else if (*p == '-')
        {
          while (p[1] == '-')
            p++;
          need_alnum = true;
        }
      else
        return false;
    }
  return !need_alnum;
}

static bool
valid_tag (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > TAG_MAX || s[0] == '.' || s[0] == '-')
    return false;
  return strspn (s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

bool
oci_digest_is_valid (const char *s)
{
  return str_has_prefix (s, DIGEST_PREFIX)
         && strlen (s) == strlen (DIGEST_PREFIX) + DIGEST_HEX_LEN
         && strspn (s + strlen (DIGEST_PREFIX), "0123456789abcdef") == DIGEST_HEX_LEN;
}

static bool
valid_registry (const char *s)
{
  return *s != '\0' && strlen (s) <= REPOSITORY_MAX
         && strspn (s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]")
              == strlen (s);
}

/* "REPO[:TAG]" (the part after the registry, digest removed) into R. */
static int
split_repository_tag (char *s, struct oci_ref *r, const char **why)
{
  char *slash = strrchr (s, '/');
  char *colon = strrchr (slash != NULL ? slash : s, ':');
  if (colon != NULL)
    {
      *colon = '\0';
      if (!valid_tag (colon + 1))
        {
          *why = "invalid tag (letters, digits, '_', '.', '-'; at most 128)";
          return -1;
        }
      r->tag = xstrdup (colon + 1);
    }
  if (!valid_repository (s))
    {
      *why = "invalid repository name (lowercase letters and digits, separated by '/', '.', "
             "'_' or '-')";
      return -1;
    }
  r->repository = xstrdup (s);
  return 0;
}

static int
parse_docker (const char *rest, struct oci_ref *r, const char **why)
{
  cleanup_free char *s = xstrdup (rest);
  char *at = strchr (s, '@');
  if (at != NULL)
    {
      *at = '\0';
      if (!oci_digest_is_valid (at + 1))
        {
          *why = "invalid digest (expected @sha256: and 64 lowercase hexadecimal digits)";
          return -1;
        }
      r->digest = xstrdup (at + 1);
    }
  /* The first component names a registry when it looks like a host: a '.', a ':' (a port)
   * or "localhost", as docker decides. */
  char *name = s;
  char *slash = strchr (s, '/');
  if (slash != NULL && (memchr (s, '.', (size_t) (slash - s)) != NULL
                        || memchr (s, ':', (size_t) (slash - s)) != NULL
                        || strncmp (s, "localhost/", strlen ("localhost/")) == 0))
    {
      *slash = '\0';
      if (!valid_registry (s))
        {
          *why = "invalid registry host";
          return -1;
        }
      r->registry = xstrdup (s);
      name = slash + 1;
    }
  else
    r->registry = xstrdup (DOCKER_HUB_REGISTRY);
  if (split_repository_tag (name, r, why) < 0)
    return -1;
  if (strcmp (r->registry, DOCKER_HUB_REGISTRY) == 0 && strchr (r->repository, '/') == NULL)
    {
      char *full = xasprintf ("library/%s", r->repository);
      free (r->repository);
      r->repository = full;
    }
  if (r->tag == NULL && r->digest == NULL)
    r->tag = xstrdup (DEFAULT_TAG);
  return 0;
}

int
oci_ref_parse (const char *arg, struct oci_ref *out, const char **why)
{
  struct oci_ref r = { 0 };
  int ret = 0;
  if (str_has_prefix (arg, DOCKER_PREFIX))
    {
      r.kind = OCI_REF_DOCKER;
      ret = parse_docker (arg + strlen (DOCKER_PREFIX), &r, why);
    }
  else if (str_has_prefix (arg, LAYOUT_PREFIX))
    {
      /* oci:DIR[:TAG]: a last ':' followed by a valid tag ends DIR. */
      r.kind = OCI_REF_LAYOUT;
      r.path = xstrdup (arg + strlen (LAYOUT_PREFIX));
      char *colon = strrchr (r.path, ':');
      if (colon != NULL && valid_tag (colon + 1))
        {
          r.tag = xstrdup (colon + 1);
          *colon = '\0';
        }
    }
  else if (str_has_prefix (arg, ARCHIVE_PREFIX))
    {
      /* docker-archive:FILE[:REPO:TAG]: FILE ends at the first ':'. REPO:TAG is kept whole
       * (":latest" added when it has no tag): it is compared with the archive's RepoTags
       * as they are written. */
      r.kind = OCI_REF_ARCHIVE;
      r.path = xstrdup (arg + strlen (ARCHIVE_PREFIX));
      char *colon = strchr (r.path, ':');
      if (colon != NULL)
        {
          *colon = '\0';
          const char *name = colon + 1, *slash = strrchr (name, '/');
          if (name[0] == '\0')
            {
              *why = "empty REPO:TAG";
              ret = -1;
            }
          else
            r.tag = strchr (slash != NULL ? slash : name, ':') != NULL
                      ? xstrdup (name) : xasprintf ("%s:" DEFAULT_TAG, name);
        }
    }
  else
    {
      *why = "expected docker://, oci: or docker-archive:";
      ret = -1;
    }
  if (ret == 0 && r.path != NULL && r.path[0] == '\0')
    {
      *why = "the path is empty";
      ret = -1;
    }
  if (ret < 0)
    {
      oci_ref_clear (&r);
      return -1;
    }
  *out = r;
  return 0;
}

char *
oci_ref_recorded (const char *arg, const struct oci_ref *ref)
{
  if (ref->kind == OCI_REF_DOCKER || ref->path[0] == '/')
    return xstrdup (arg);
  const char *path = strchr (arg, ':') + 1; /* after "oci:" or "docker-archive:" */
  size_t len = strlen (ref->path);
  cleanup_free char *absolute = realpath (ref->path, NULL);
  if (absolute == NULL || strncmp (path, ref->path, len) != 0)
    return xstrdup (arg);
  return xasprintf ("%.*s%s%s", (int) (path - arg), arg, absolute, path + len);
}
