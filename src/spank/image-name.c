/* pyxis's image names (pyxis_compat=1): what a pyxis script passes as --container-image,
 * read the way pyxis and enroot read it, and written as what `create --from` takes.
 *
 * pyxis treats a value starting with '/' or '.' as a file (a squashfs image, for enroot;
 * for us, anything `create --from` unpacks: a tarball) and puts "docker://" before anything
 * else, which enroot parses as
 *
 *   [USER@][REGISTRY#]IMAGE[:TAG]    (enroot 3.5 also takes IMAGE@sha256:DIGEST)
 *
 * A missing REGISTRY is Docker Hub, and a one-part IMAGE there is library/IMAGE: ours,
 * docker://[REGISTRY/]IMAGE[:TAG], reads a name without a registry the same way.
 *
 * USER@ names the login enroot looks up in $ENROOT_CONFIG_PATH/.credentials (a netrc file)
 * for REGISTRY, and asks its password for when that file has none. enter-devroot reads
 * the credentials ~/.docker/config.json (or $REGISTRY_AUTH_FILE) holds for the registry,
 * one login per registry, so USER is handed back for the caller to mention and not used.
 *
 * Two forms are refused rather than guessed: a registry written with '/' (nvcr.io/nvidia/x,
 * which enroot sends to Docker Hub, where it does not exist), and a REGISTRY our
 * docker:// could not tell from a Docker Hub namespace (no '.', no ':PORT', not localhost).
 * What pyxis could not mean passes as it is: a value with "://" or whose first ':' is
 * followed by '/' or '.' (a tag never holds either) is our own docker://, https://, oci:DIR
 * or docker-archive:FILE. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spank/image-name.h"

#define DIGEST_PREFIX "@sha256:"
#define DIGEST_HEX_LEN 64
/* Docker's limit on a tag. */
#define TAG_MAX 128

static bool
all_of (const char *s, size_t len, const char *extra, bool upper)
{
  if (len == 0)
    return false;
  for (size_t i = 0; i < len; i++)
    {
      char c = s[i];
      bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || (upper && c >= 'A' && c <= 'Z')
                || (c != '\0' && strchr (extra, c) != NULL);
      if (!ok)
        return false;
    }
  return true;
}

static bool
is_digest (const char *s)
{
  if (strncmp (s, DIGEST_PREFIX, strlen (DIGEST_PREFIX)) != 0)
    return false;
  s += strlen (DIGEST_PREFIX);
  return strlen (s) == DIGEST_HEX_LEN && strspn (s, "0123456789abcdef") == DIGEST_HEX_LEN;
}

/* What pyxis could not mean: a file, or one of our own forms. */
static bool
passes_as_is (const char *value)
{
  if (value[0] == '/' || strncmp (value, "./", 2) == 0 || strncmp (value, "../", 3) == 0)
    return true;
  const char *colon = strchr (value, ':');
  return colon != NULL && (colon[1] == '/' || colon[1] == '.');
}

/* A registry our docker:// reads as one: a host with a '.' or a port, or localhost. */
static bool
names_a_host (const char *s, size_t len)
{
  return memchr (s, '.', len) != NULL || memchr (s, ':', len) != NULL
         || (len == strlen ("localhost") && strncmp (s, "localhost", len) == 0);
}

int
pyxis_image_source (const char *value, char **source, char **user, const char **why)
{
  *source = *user = NULL;
  *why = NULL;
  if (value[0] == '\0')
    {
      *why = "empty";
      return -1;
    }
  if (passes_as_is (value))
    return (*source = strdup (value)) != NULL ? 0 : -1;

  size_t len = strlen (value);
  const char *digest = NULL;
  const char *at = strrchr (value, '@');
  if (at != NULL && is_digest (at))
    {
      digest = at + 1;
      len = (size_t) (at - value);
    }
  const char *p = value, *end = value + len;
  const char *user_end = memchr (p, '@', len);
  size_t user_len = 0;
  if (user_end != NULL)
    {
      user_len = (size_t) (user_end - p);
      if (!all_of (p, user_len, "_.!~*'()%;:&=+$,-", true))
        {
          *why = "USER@ holds a character enroot does not take";
          return -1;
        }
      p = user_end + 1;
    }
  const char *hash = memchr (p, '#', (size_t) (end - p));
  const char *registry = NULL;
  size_t registry_len = 0;
  if (hash != NULL)
    {
      registry = p;
      registry_len = (size_t) (hash - p);
      if (!all_of (registry, registry_len, ".:-[]", true) || !names_a_host (registry, registry_len))
        {
          *why = "REGISTRY is not a host name with a '.' or a ':PORT', nor localhost";
          return -1;
        }
      p = hash + 1;
    }
  const char *first_slash = memchr (p, '/', (size_t) (end - p));
  if (registry == NULL && first_slash != NULL && names_a_host (p, (size_t) (first_slash - p)))
    {
      *why = "a registry is written REGISTRY#IMAGE in pyxis's names (nvcr.io#nvidia/pytorch), "
             "not REGISTRY/IMAGE, which pyxis sends to Docker Hub";
      return -1;
    }
  /* The tag is after the last ':' of the image's last component. */
  const char *slash = NULL;
  for (const char *q = p; q < end; q++)
    if (*q == '/')
      slash = q;
  const char *last = slash != NULL ? slash : p;
  const char *tag = memchr (last, ':', (size_t) (end - last));
  size_t image_len = (size_t) ((tag != NULL ? tag : end) - p);
  size_t tag_len = tag != NULL ? (size_t) (end - tag - 1) : 0;
  if (tag != NULL && (tag_len > TAG_MAX || !all_of (tag + 1, tag_len, "._-", true)))
    {
      *why = "TAG is not 1 to 128 of A-Z a-z 0-9 . _ -";
      return -1;
    }
  if (!all_of (p, image_len, "/._-", false) || p[0] == '/' || p[image_len - 1] == '/'
      || memmem (p, image_len, "//", 2) != NULL)
    {
      *why = "IMAGE is not lowercase a-z 0-9 . _ - in '/'-separated parts";
      return -1;
    }
  int n = asprintf (source, "docker://%.*s%s%.*s%s%.*s%s%s", (int) registry_len,
                    registry != NULL ? registry : "", registry != NULL ? "/" : "",
                    (int) image_len, p, tag != NULL ? ":" : "", (int) tag_len,
                    tag != NULL ? tag + 1 : "", digest != NULL ? "@" : "",
                    digest != NULL ? digest : "");
  if (n < 0)
    {
      *source = NULL;
      return -1;
    }
  if (user_end != NULL && (*user = strndup (value, user_len)) == NULL)
    {
      free (*source);
      *source = NULL;
      return -1;
    }
  return 0;
}
