/* Images given as plain paths (image-sniff.h). */
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract/extract.h"
#include "store/oci/image-sniff.h"

/* How many headers an image archive may have before we stop looking: docker save's older
 * format has four entries a layer. */
#define SNIFF_MAX_ENTRIES 4096
#define SNIFF_BLOCK (64 * 1024)

static bool
is_hex (const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return true;
}

/* A top-level NAME (its first path component, LEN bytes) an image archive has. */
static bool
image_member (const char *name, size_t len)
{
  static const char *const names[] = { "manifest.json", "repositories", "index.json",
                                       "oci-layout", "blobs", "index.json.lock" };
  for (size_t i = 0; i < N_ELEMENTS (names); i++)
    if (len == strlen (names[i]) && memcmp (name, names[i], len) == 0)
      return true;
  /* docker save's older format: a directory per layer, a config per image; skopeo's: a
   * layer per HEX.tar. */
  if (len < 64 || !is_hex (name, 64))
    return false;
  return len == 64 || (len == 64 + strlen (".json") && memcmp (name + 64, ".json", 5) == 0)
         || (len == 64 + strlen (".tar") && memcmp (name + 64, ".tar", 4) == 0);
}

static enum image_shape
archive_shape (int fd)
{
  struct archive *a = extract_tar_reader ();
  bool manifest = false, layout = false, index = false;
  if (archive_read_open_fd (a, fd, SNIFF_BLOCK) != ARCHIVE_OK)
    {
      archive_read_free (a);
      return IMAGE_SHAPE_NONE;
    }
  for (int n = 0; n < SNIFF_MAX_ENTRIES; n++)
    {
      struct archive_entry *e;
      if (archive_read_next_header (a, &e) != ARCHIVE_OK)
        break;
      const char *path = archive_entry_pathname (e);
      if (path == NULL)
        break;
      while (strncmp (path, "./", 2) == 0)
        path += 2;
      if (path[0] == '\0')
        continue; /* "./", as tar -C DIR . writes it: what follows tells */
      size_t len = strcspn (path, "/");
      if (!image_member (path, len))
        {
          manifest = layout = false;
          break;
        }
      manifest |= strcmp (path, "manifest.json") == 0;
      layout |= strcmp (path, "oci-layout") == 0;
      index |= strcmp (path, "index.json") == 0;
    }
  archive_read_free (a);
  if (manifest)
    return IMAGE_SHAPE_DOCKER_ARCHIVE;
  return layout && index ? IMAGE_SHAPE_OCI_ARCHIVE : IMAGE_SHAPE_NONE;
}

enum image_shape
image_shape_of (const char *path)
{
  cleanup_fd int fd = open (path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    return IMAGE_SHAPE_NONE;
  if (S_ISDIR (st.st_mode))
    return faccessat (fd, "oci-layout", F_OK, 0) == 0 && faccessat (fd, "index.json", F_OK, 0) == 0
           ? IMAGE_SHAPE_OCI_LAYOUT : IMAGE_SHAPE_NONE;
  return S_ISREG (st.st_mode) ? archive_shape (fd) : IMAGE_SHAPE_NONE;
}
