/* An OCI-made root's image config (Env, WorkingDir, User, Entrypoint, Cmd: what entering
 * applies, kept in the root's metadata) carried through `export` and therefore `publish`,
 * so that a root made from the archive again (`create --from FILE`, `--template`) is
 * entered as the image's root was: a golang root still finds /usr/local/go/bin.
 *
 * The archive holds it as one member, .enter-devroot/image-config.json, written last by
 * export (so that it wins over a file of that name in the root): an OCI image config
 * (image-spec config.md) with only its "config" object, which jq, skopeo's and umoci's
 * users read as they read any image's; the image the root came from is named by the
 * spec's own labels org.opencontainers.image.base.name and .base.digest. A create finds
 * it in the unpacked tree, reads it as it reads a registry's config (oci-image.c: the same
 * parser, the same 4 MiB cap), records it in the new root's metadata and then removes it
 * from the root, so roots are not cluttered by it; a plain `tar -x` leaves it in place, one
 * small file. A config without those labels (written by hand, or another tool) is
 * identified by its own SHA-256. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/digest.h"
#include "store/image-config.h"
#include "store/oci-image.h"
#include "store/oci-ref.h"

#define BASE_NAME_LABEL "org.opencontainers.image.base.name"
#define BASE_DIGEST_LABEL "org.opencontainers.image.base.digest"

static void
append_strv (struct strbuf *sb, const char *key, char **v, bool *first)
{
  if (v == NULL)
    return;
  strbuf_appendf (sb, "%s\n    \"%s\": [", *first ? "" : ",", key);
  *first = false;
  for (size_t i = 0; v[i] != NULL; i++)
    {
      strbuf_append (sb, i > 0 ? ", " : "");
      json_append_string (sb, v[i]);
    }
  strbuf_append_c (sb, ']');
}

static void
append_string (struct strbuf *sb, const char *key, const char *s, bool *first)
{
  if (s == NULL)
    return;
  strbuf_appendf (sb, "%s\n    \"%s\": ", *first ? "" : ",", key);
  *first = false;
  json_append_string (sb, s);
}

char *
image_config_json (const struct meta_image *image)
{
  if (image->digest == NULL)
    return NULL;
  struct strbuf sb = { 0 };
  bool first = true;
  strbuf_append (&sb, "{\n  \"config\": {");
  append_strv (&sb, "Env", image->env, &first);
  append_string (&sb, "WorkingDir", image->workdir, &first);
  append_string (&sb, "User", image->user, &first);
  append_strv (&sb, "Entrypoint", image->entrypoint, &first);
  append_strv (&sb, "Cmd", image->cmd, &first);
  strbuf_appendf (&sb, "%s\n    \"Labels\": {", first ? "" : ",");
  if (image->ref != NULL)
    {
      strbuf_append (&sb, "\"" BASE_NAME_LABEL "\": ");
      json_append_string (&sb, image->ref);
      strbuf_append (&sb, ", ");
    }
  strbuf_append (&sb, "\"" BASE_DIGEST_LABEL "\": ");
  json_append_string (&sb, image->digest);
  strbuf_append (&sb, "}\n  }\n}\n");
  return strbuf_steal (&sb);
}

/* The label KEY of config TEXT (already parsed once by oci_config_parse), or NULL. */
static char *
label (const char *text, size_t len, const char *key)
{
  json_t *root = json_loadb (text, len, JSON_REJECT_DUPLICATES, NULL);
  json_t *labels = json_object_get (json_object_get (root, "config"), "Labels");
  json_t *v = json_object_get (labels, key);
  char *s = json_is_string (v) ? xstrdup (json_string_value (v)) : NULL;
  json_decref (root);
  return s;
}

bool
image_config_read (int rootfd, const char *origin, struct meta_image *image)
{
  cleanup_fd int dirfd = openat (rootfd, IMAGE_CONFIG_DIR,
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dirfd < 0 && (errno == ENOENT || errno == ENOTDIR))
    return false;
  if (dirfd < 0)
    die_with_error ("%s: cannot open %s", origin, IMAGE_CONFIG_DIR);
  const char *leaf = IMAGE_CONFIG_PATH + strlen (IMAGE_CONFIG_DIR "/");
  cleanup_fd int fd = openat (dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    return false;
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISREG (st.st_mode))
    die ("%s: %s: not a regular file", origin, IMAGE_CONFIG_PATH);
  if (st.st_size > OCI_DOCUMENT_MAX)
    die ("%s: %s: larger than %d bytes", origin, IMAGE_CONFIG_PATH, OCI_DOCUMENT_MAX);
  size_t len;
  cleanup_free char *text = read_fd_all (fd, OCI_DOCUMENT_MAX, &len);
  if (text == NULL)
    die_with_error ("%s: cannot read %s", origin, IMAGE_CONFIG_PATH);
  cleanup_free char *what = xasprintf ("%s: %s", origin, IMAGE_CONFIG_PATH);
  oci_config_parse (text, len, what, image, NULL);
  image->ref = label (text, len, BASE_NAME_LABEL);
  image->digest = label (text, len, BASE_DIGEST_LABEL);
  if (image->digest != NULL && !oci_digest_is_valid (image->digest))
    die ("%s: label %s is '%s', not sha256:HEX", what, BASE_DIGEST_LABEL, image->digest);
  if (image->digest == NULL)
    {
      char hex[SHA256_HEX_LEN + 1];
      struct sha256 h;
      sha256_init (&h);
      sha256_update (&h, text, len);
      sha256_final (&h, hex);
      image->digest = xasprintf ("sha256:%s", hex);
    }
  return true;
}

void
image_config_remove (int rootfd)
{
  cleanup_fd int dirfd = openat (rootfd, IMAGE_CONFIG_DIR,
                                 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  const char *leaf = IMAGE_CONFIG_PATH + strlen (IMAGE_CONFIG_DIR "/");
  if (dirfd < 0 || unlinkat (dirfd, leaf, 0) < 0)
    die_with_error ("cannot remove %s from the new root", IMAGE_CONFIG_PATH);
  /* The directory goes too unless the archive put more in it. */
  if (unlinkat (rootfd, IMAGE_CONFIG_DIR, AT_REMOVEDIR) < 0 && errno != ENOTEMPTY
      && errno != EEXIST)
    die_with_error ("cannot remove %s from the new root", IMAGE_CONFIG_DIR);
}
