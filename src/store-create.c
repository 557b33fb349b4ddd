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

#include "account.h"
#include "meta.h"
#include "name.h"
#include "paths.h"
#include "store.h"
#include "store-create.h"
#include "util.h"

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

  struct extract_result res;
  struct extractor *x = extract_archive (rootfd, src, xopts, &res);
  account_ensure_user (rootfd);
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
  extract_finish_root (x);
  store_paths_clear (&p);
}

