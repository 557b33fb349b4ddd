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
#include "common/verbose.h"
#include "store/clone.h"
#include "store/digest.h"
#include "store/image-config.h"
#include "store/interrupt.h"
#include "store/store-create.h"

/* What a failing create must undo; die() runs create_cleanup. */
static char *cleanup_staging;
static char *cleanup_meta;
static struct unpacked_keeping *cleanup_keeping;

static void
create_cleanup (void)
{
  if (cleanup_keeping != NULL)
    unpacked_keep_cancel (cleanup_keeping);
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

/* A create under way: NAME's lock held, its private staging directory open. */
struct creation
{
  struct store_paths p;
  const char *name;
  int lockfd;
  char *root;
  char *staging;
  char *meta_path;
  int rootfd;
};

static void
creation_begin (struct creation *c, const char *name)
{
  *c = (struct creation) { .name = name, .lockfd = -1, .rootfd = -1 };
  name_check (name);
  store_paths_from_env (&c->p);
  roots_prepare (&c->p);

  c->lockfd = lock_name_or_die (&c->p, name, "create");
  clean_stale_staging (&c->p, name);
  reap_abandoned_ephemeral (&c->p);

  c->root = paths_root (&c->p, name);
  struct stat st;
  if (lstat (c->root, &st) == 0)
    die ("cannot create '%s': it already exists (%s)", name, c->root);

  c->staging = xasprintf ("%s/%s" STAGING_SUFFIX, c->p.staging, name);
  if (mkdtemp (c->staging) == NULL)
    die_with_error ("cannot create staging directory in %s", c->p.staging);
  cleanup_staging = c->staging;
  verbose ("staging '%s' in %s", name, c->staging);
  set_die_cleanup (create_cleanup);

  c->rootfd = open (c->staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (c->rootfd < 0)
    die_with_error ("cannot open %s", c->staging);
}

/* Write M as NAME's metadata and move the staging directory into place. */
static void
creation_commit (struct creation *c, const struct meta *m)
{
  c->meta_path = paths_meta (&c->p, c->name);
  cleanup_meta = c->meta_path;
  meta_write (c->meta_path, m);
  interrupt_check ();
  if (rename_noreplace (c->staging, c->root) < 0)
    {
      if (errno == EEXIST || errno == ENOTEMPTY)
        die ("cannot create '%s': it already exists (%s)", c->name, c->root);
      die_with_error ("cannot move %s into place as %s", c->staging, c->root);
    }
  verbose ("renamed %s into place as %s", c->staging, c->root);
  /* The root is in place: the create has succeeded, whatever signal comes now. */
  interrupt_commit ();
  set_die_cleanup (NULL);
  cleanup_staging = cleanup_meta = NULL;
}

static void
creation_end (struct creation *c)
{
  close (c->rootfd);
  close (c->lockfd); /* releases the lock */
  free (c->root);
  free (c->staging);
  free (c->meta_path);
  store_paths_clear (&c->p);
}

void
store_create (const char *name, struct source *src, const struct extract_opts *xopts)
{
  struct creation c;
  creation_begin (&c, name);

  /* A second create from the same archive clones the copy the first one kept, where the
   * filesystem clones by reference (clone.h); otherwise, or if that fails, unpack. */
  struct extract_result res = { 0 };
  struct extractor *x = NULL;
  struct extract_opts opts = *xopts; /* x keeps a pointer to it until the end */
  struct stat copy_root;
  char hex[SHA256_HEX_LEN + 1];
  bool cloned = archive_digest (src, hex)
                && unpacked_clone_into (hex, c.rootfd, &res.size_bytes, &copy_root);
  if (cloned)
    memcpy (res.sha256, hex, sizeof hex);
  else
    {
      opts.start_writeback = unpacked_can_keep (c.rootfd);
      x = extract_archive (c.rootfd, src, &opts, &res);
    }
  account_ensure_user (c.rootfd);
  if (x != NULL)
    extract_finish (x);

  /* The unpacked copy is cloned now, from the staging directory nothing else can enter. */
  if (x != NULL && opts.start_writeback)
    cleanup_keeping = unpacked_keep_begin (res.sha256, c.rootfd);

  struct meta m = {
    .name = xstrdup (name),
    .source = xstrdup (src->origin),
    .sha256 = xstrdup (res.sha256),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = res.size_bytes,
  };
  /* An exported OCI-made root carries its image's config (image-config.h): into the
   * metadata, and out of the root before it is in place (the copy kept above has it, for
   * the next create from it to find; the root's own times are set after this). */
  if (image_config_read (c.rootfd, src->description, &m.image))
    image_config_remove (c.rootfd);
  creation_commit (&c, &m);
  meta_clear (&m);
  if (x != NULL)
    {
      extract_finish_root (x);
      if (cleanup_keeping != NULL)
        unpacked_keep_end (steal_pointer (&cleanup_keeping), c.rootfd, src->origin,
                           res.size_bytes);
    }
  else
    {
      struct timespec t[2] = { copy_root.st_atim, copy_root.st_mtim };
      if (fchmod (c.rootfd, copy_root.st_mode & 01777) < 0 || futimens (c.rootfd, t) < 0)
        die_with_error ("cannot set the mode and times of %s", c.root);
    }
  creation_end (&c);
}

void
store_create_layered (const char *name, const char *origin, const char *sha256,
                      const struct meta_image *image,
                      void (*unpack) (struct extractor *x, int rootfd, void *data), void *data,
                      const struct extract_opts *xopts)
{
  struct creation c;
  creation_begin (&c, name);
  struct extract_result res = { 0 };
  struct extractor *x = extract_begin (c.rootfd, xopts, &res);
  unpack (x, c.rootfd, data);
  account_ensure_user (c.rootfd);
  extract_finish (x);

  struct meta m = {
    .name = xstrdup (name),
    .source = xstrdup (origin),
    .sha256 = xstrdup (sha256),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = res.size_bytes,
    .image = *image, /* borrowed: not cleared below */
  };
  creation_commit (&c, &m);
  m.image = (struct meta_image) { 0 };
  meta_clear (&m);
  extract_finish_root (x);
  creation_end (&c);
}
