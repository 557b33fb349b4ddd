/* push NAME oci:DIR:TAG: the image into an OCI image layout (image-spec's image-layout.md):
 * oci-layout, blobs/sha256/HEX, index.json. Each file is written under a temporary name and
 * renamed, index.json last, so a failure leaves the layout as it was (plus, at most, blobs
 * nothing names yet). A blob already there with the right size is not written again (its
 * name is its digest; `create --from oci:` verifies it when reading). index.json is read
 * capped and parsed as untrusted; an entry tagged TAG is replaced, the others kept. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/util.h"
#include "store/oci/layout-write.h"
#include "store/oci/oci-image.h"
#include "store/oci/oci-source.h"

#define COPY_BLOCK (256 * 1024)
#define REF_NAME "org.opencontainers.image.ref.name"

struct layout_out
{
  char *dir;
  char *tag;
  const char *what;
  int dirfd;
};

/* Write SIZE bytes of DATA (or from FD at OFFSET) to NAME in the layout, via a temporary. */
static void
write_file (struct layout_out *l, const char *name, int fd, off_t offset, const char *data,
            uint64_t size)
{
  cleanup_free char *final = xasprintf ("%s/%s", l->dir, name);
  cleanup_atomic_file struct atomic_file f;
  if (atomic_file_open (&f, AT_FDCWD, final, 0644) < 0)
    die_with_error ("%s: cannot create a file in %s", l->what, l->dir);
  int out = f.fd;
  bool ok = true;
  if (fd < 0)
    ok = write_all (out, data, (size_t) size) == 0;
  else
    {
      cleanup_free char *buf = xmalloc (COPY_BLOCK);
      for (uint64_t off = 0; ok && off < size;)
        {
          size_t want = size - off < COPY_BLOCK ? (size_t) (size - off) : COPY_BLOCK;
          ssize_t n = pread (fd, buf, want, offset + (off_t) off);
          if (n < 0 && errno == EINTR)
            continue;
          ok = n > 0 && write_all (out, buf, (size_t) n) == 0;
          off += n > 0 ? (uint64_t) n : 0;
        }
    }
  if (!ok || fchmod (out, 0644) < 0 || atomic_file_commit (&f, ATOMIC_FSYNC) < 0)
    die_with_error ("%s: cannot write %s", l->what, final);
}

struct layout_out *
layout_out_open (const char *dir, const char *tag, const char *what)
{
  struct layout_out *l = xcalloc (1, sizeof *l);
  l->dir = xstrdup (dir);
  l->tag = xstrdup (tag != NULL ? tag : "latest");
  l->what = what;
  cleanup_free char *blobs = xasprintf ("%s/blobs/sha256", dir);
  if (mkdir_p (blobs, 0755) < 0)
    die_with_error ("%s: cannot create %s", what, blobs);
  cleanup_free char *marker = xasprintf ("%s/oci-layout", dir);
  struct stat st;
  if (lstat (marker, &st) < 0)
    {
      static const char layout[] = "{\"imageLayoutVersion\":\"1.0.0\"}";
      write_file (l, "oci-layout", -1, 0, layout, strlen (layout));
    }
  return l;
}

void
layout_out_close (struct layout_out *l)
{
  free (l->dir);
  free (l->tag);
  free (l);
}

void
layout_out_blob (struct layout_out *l, const char *digest, uint64_t size, int fd, off_t offset,
                 const char *data)
{
  cleanup_free char *name = xasprintf ("blobs/sha256/%s", digest + strlen ("sha256:"));
  cleanup_free char *path = xasprintf ("%s/%s", l->dir, name);
  struct stat st;
  if (lstat (path, &st) == 0 && S_ISREG (st.st_mode) && (uint64_t) st.st_size == size)
    return;
  write_file (l, name, fd, offset, data, size);
}

void
layout_out_manifest (struct layout_out *l, const char *media_type, const char *text,
                     size_t len)
{
  cleanup_free char *digest = oci_digest_of (text, len);
  layout_out_blob (l, digest, len, -1, 0, text);
  cleanup_free char *path = xasprintf ("%s/index.json", l->dir);
  size_t ilen;
  cleanup_free char *old = load_file_at (AT_FDCWD, path, OCI_DOCUMENT_MAX, &ilen);
  if (old == NULL && errno != ENOENT)
    die_with_error ("%s: cannot read %s", l->what, path);
  json_t *index = old != NULL ? json_loadb (old, ilen, 0, NULL)
                              : json_pack ("{s:i, s:[]}", "schemaVersion", 2, "manifests");
  json_t *list = json_is_object (index) ? json_object_get (index, "manifests") : NULL;
  if (!json_is_array (list))
    die ("%s: %s is not an OCI index", l->what, path);
  for (size_t i = json_array_size (list); i-- > 0;)
    {
      json_t *ann = json_object_get (json_array_get (list, i), "annotations");
      json_t *ref = json_is_object (ann) ? json_object_get (ann, REF_NAME) : NULL;
      if (json_is_string (ref) && strcmp (json_string_value (ref), l->tag) == 0)
        json_array_remove (list, i);
    }
  json_array_append_new (list, json_pack ("{s:s, s:s, s:I, s:{s:s}}", "mediaType", media_type,
                                          "digest", digest, "size", (json_int_t) len,
                                          "annotations", REF_NAME, l->tag));
  cleanup_free char *out = json_dumps (index, JSON_COMPACT);
  json_decref (index);
  if (out == NULL)
    die ("%s: cannot write JSON", l->what);
  write_file (l, "index.json", -1, 0, out, strlen (out));
}
