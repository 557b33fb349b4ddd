/* The target of a save (save-target.h). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/save-target.h"

/* Where a tar header says "ustar". */
#define TAR_MAGIC_OFFSET 257

/* What a save may replace starts with: gzip, zstd, xz; or a tar header. */
static bool
looks_like_archive (int fd)
{
  static const unsigned char gz[] = { 0x1f, 0x8b }, zst[] = { 0x28, 0xb5, 0x2f, 0xfd },
                             xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
  unsigned char head[TAR_MAGIC_OFFSET + sizeof "ustar" - 1] = { 0 };
  ssize_t n = pread (fd, head, sizeof head, 0);
  if (n < 0)
    return false;
  return (n >= (ssize_t) sizeof gz && memcmp (head, gz, sizeof gz) == 0)
         || (n >= (ssize_t) sizeof zst && memcmp (head, zst, sizeof zst) == 0)
         || (n >= (ssize_t) sizeof xz && memcmp (head, xz, sizeof xz) == 0)
         || (n == (ssize_t) sizeof head && memcmp (head + TAR_MAGIC_OFFSET, "ustar", 5) == 0);
}

const char *
save_target_refusal (const char *file)
{
  int fd = open (file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT)
    {
      char *copy = strdup (file);
      bool dir_ok = copy != NULL && access (dirname (copy), W_OK) == 0;
      free (copy);
      return dir_ok ? NULL : SAVE_TARGET_NO_DIR;
    }
  struct stat st;
  const char *why = NULL;
  if (fd < 0)
    why = errno == ELOOP ? "a symbolic link" : strerror (errno);
  else if (fstat (fd, &st) < 0)
    why = strerror (errno);
  else if (S_ISDIR (st.st_mode))
    why = "a directory";
  else if (!S_ISREG (st.st_mode))
    why = "not a regular file";
  else if (st.st_size > 0 && !looks_like_archive (fd))
    why = "an existing file that is not an archive";
  if (fd >= 0)
    close (fd);
  return why;
}

const char *
save_suffix_compression (const char *file)
{
  static const char *const by_suffix[][2] = {
    { ".tar.gz", "gzip" }, { ".tgz", "gzip" }, { ".tar.xz", "xz" },   { ".txz", "xz" },
    { ".tar.zst", "zstd" }, { ".tzst", "zstd" }, { ".tar", "none" },
  };
  size_t len = strlen (file);
  for (size_t i = 0; i < sizeof by_suffix / sizeof by_suffix[0]; i++)
    {
      size_t n = strlen (by_suffix[i][0]);
      if (len > n && strcmp (file + len - n, by_suffix[i][0]) == 0)
        return by_suffix[i][1];
    }
  return NULL;
}

const char *
save_compression (const char *file)
{
  const char *by_suffix = save_suffix_compression (file);
  return by_suffix != NULL ? by_suffix : "zstd";
}
