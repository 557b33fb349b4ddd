/* An OCI-made root's image config (Env, WorkingDir, User, Entrypoint, Cmd: what entering
 * applies, kept in the root's metadata) carried through `export` and therefore `publish`,
 * so that a root made from the archive again (`create --from FILE`, `--template`) is
 * entered as the image's root was: a golang root still finds /usr/local/go/bin.
 *
 * The archive holds it as one member, .enter-devroot/image-config.json, written last by
 * export (so that it wins over a file of that name in the root): an OCI image config
 * (image-spec config.md) with only its "config" object, which jq, skopeo's and umoci's
 * users read as they read any image's; the image the root came from is named by the
 * spec's own labels org.opencontainers.image.base.name and .base.digest, for those readers.
 * A create finds it in the unpacked tree, reads it as it reads a registry's config
 * (oci-image.c: the same parser, the same 4 MiB cap), records it in the new root's
 * metadata and then removes it from the root, so roots are not cluttered by it; a plain
 * `tar -x` leaves it in place, one small file.
 *
 * The config is data about the image, never its provenance: whoever wrote the archive
 * wrote the labels too, so create ignores them. The new root's image is named by nothing
 * (its source is the archive) and identified by the config's own SHA-256; a push of it
 * has no base image to fetch or mount (meta_base_image). Before, the labels were
 * recorded, and push fetched the image they named with the user's credentials and sent its
 * layers to the destination: an archive's author chose which of the user's private images
 * went where the user pushed. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/oci/image-config.h"
#include "store/oci/oci-image.h"
#include "store/oci/oci-source.h"

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
  /* The labels name the image a root was made from: none for a root made from an archive
   * (whose config another archive carried). */
  if (image->ref != NULL)
    {
      strbuf_appendf (&sb, "%s\n    \"Labels\": {\"" BASE_NAME_LABEL "\": ", first ? "" : ",");
      json_append_string (&sb, image->ref);
      strbuf_append (&sb, ", \"" BASE_DIGEST_LABEL "\": ");
      json_append_string (&sb, image->digest);
      strbuf_append_c (&sb, '}');
    }
  strbuf_append (&sb, "\n  }\n}\n");
  return strbuf_steal (&sb);
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
  /* Its labels are not read: the root's image is its source, the archive (see above). */
  image->digest = oci_digest_of (text, len);
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
