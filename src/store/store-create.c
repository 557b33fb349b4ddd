/* Creating a devroot: unpack into staging, write metadata, rename into place. Linked into
 * enter-devroot-store only (it pulls in libarchive through extract.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/account.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "store/clone.h"
#include "store/digest.h"
#include "store/store-create.h"

/* What a failing create must undo; die() runs create_cleanup. */
static char *cleanup_staging;
static char *cleanup_meta;

static void
create_cleanup (void)
{
  if (cleanup_staging != NULL && rm_rf_at (AT_FDCWD, cleanup_staging) < 0)
    fprintf (stderr, "%s: cannot remove %s: %s\n", PROGRAM_NAME, cleanup_staging,
             strerror (errno));
  if (cleanup_meta != NULL)
    unlink (cleanup_meta);
}

static int
rename_noreplace (const char *from, const char *to)
{
#ifdef HAVE_RENAMEAT2
  if (renameat2 (AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL && errno != ENOSYS)
    return -1;
#endif
  /* Filesystems without RENAME_NOREPLACE: the name lock already excludes other
   * enter-devroot processes, so check-then-rename is only racy against hand edits. */
  struct stat st;
  if (lstat (to, &st) == 0)
    {
      errno = EEXIST;
      return -1;
    }
  return rename (from, to);
}

/* The SHA-256 of SRC's bytes, when an unpacked copy could spare unpacking them: SRC is a
 * regular file (rewound after hashing) and matches the digest it must have, if any (a
 * mismatch is left to the unpacking, which refuses it with the usual message). */
static bool
archive_digest (struct source *src, char hex[SHA256_HEX_LEN + 1])
{
  struct stat st;
  if (!unpacked_any () || fstat (src->fd, &st) < 0 || !S_ISREG (st.st_mode))
    return false;
  if (sha256_fd (src->fd, UINT64_MAX, hex) < 0)
    die_with_error ("%s: read error", src->description);
  if (lseek (src->fd, 0, SEEK_SET) < 0)
    die_with_error ("%s: cannot rewind", src->description);
  return src->expected_sha256 == NULL || strcmp (src->expected_sha256, hex) == 0;
}

void
store_create (const char *name, struct source *src, const struct extract_opts *xopts)
{
  struct store_paths p;
  name_check (name);
  store_paths_from_env (&p);
  store_prepare (&p);

  /* Held until we return; never read. */
  cleanup_fd int lockfd __attribute__((unused)) = lock_name_or_die (&p, name, "create");
  clean_stale_staging (&p, name);

  cleanup_free char *root = paths_root (&p, name);
  struct stat st;
  if (lstat (root, &st) == 0)
    die ("cannot create '%s': it already exists (%s)", name, root);

  cleanup_free char *staging = xasprintf ("%s/%s" STAGING_SUFFIX, p.staging, name);
  if (mkdtemp (staging) == NULL)
    die_with_error ("cannot create staging directory in %s", p.staging);
  cleanup_staging = staging;
  set_die_cleanup (create_cleanup);

  cleanup_fd int rootfd = open (staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot open %s", staging);

  /* A second create from the same archive clones the copy the first one kept, where the
   * filesystem clones by reference (clone.h); otherwise, or if that fails, unpack. */
  struct extract_result res = { 0 };
  struct extractor *x = NULL;
  struct stat copy_root;
  char hex[SHA256_HEX_LEN + 1];
  bool cloned = archive_digest (src, hex)
                && unpacked_clone_into (hex, rootfd, &res.size_bytes, &copy_root);
  if (cloned)
    memcpy (res.sha256, hex, sizeof hex);
  else
    x = extract_archive (rootfd, src, xopts, &res);
  account_ensure_user (rootfd);
  if (x != NULL)
    extract_finish (x);

  cleanup_free char *meta_path = paths_meta (&p, name);
  struct meta m = {
    .name = xstrdup (name),
    .source = xstrdup (src->origin),
    .sha256 = xstrdup (res.sha256),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = res.size_bytes,
  };
  cleanup_meta = meta_path;
  meta_write (meta_path, &m);
  meta_clear (&m);

  if (rename_noreplace (staging, root) < 0)
    {
      if (errno == EEXIST || errno == ENOTEMPTY)
        die ("cannot create '%s': it already exists (%s)", name, root);
      die_with_error ("cannot move %s into place as %s", staging, root);
    }
  set_die_cleanup (NULL);
  cleanup_staging = cleanup_meta = NULL;
  if (x != NULL)
    {
      extract_finish_root (x);
      unpacked_keep (res.sha256, root, src->origin, res.size_bytes);
    }
  else
    {
      struct timespec t[2] = { copy_root.st_atim, copy_root.st_mtim };
      if (fchmod (rootfd, copy_root.st_mode & 01777) < 0 || futimens (rootfd, t) < 0)
        die_with_error ("cannot set the mode and times of %s", root);
    }
  store_paths_clear (&p);
}

