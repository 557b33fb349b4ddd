/* Creating a devroot: unpack into staging, write metadata, rename into place. Linked into
 * enter-devroot-store only (it pulls in libarchive through extract.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/account.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/digest.h"
#include "store/image-config.h"
#include "store/interrupt.h"
#include "store/layers.h"
#include "store/merged.h"
#include "store/store-create.h"

/* What a failing create must undo; die() runs create_cleanup. */
static char *cleanup_staging;
static char *cleanup_overlay; /* an overlay root's upper and work, staged or in place */
static char *cleanup_meta;

static void
create_cleanup (void)
{
  layers_cleanup ();
  /* An overlay root's create dies with its overlay mounted there, maybe: the staging
   * directory to remove is the mount point underneath. */
  if (cleanup_overlay != NULL && cleanup_staging != NULL)
    umount2 (cleanup_staging, MNT_DETACH);
  if (cleanup_staging != NULL && rm_rf_at (AT_FDCWD, cleanup_staging) < 0)
    fprintf (stderr, "%s: cannot remove %s: %s\n", PROGRAM_NAME, cleanup_staging,
             strerror (errno));
  if (cleanup_overlay != NULL && rm_rf_at (AT_FDCWD, cleanup_overlay) < 0)
    fprintf (stderr, "%s: cannot remove %s: %s\n", PROGRAM_NAME, cleanup_overlay,
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

/* What --max-size allows, checked against layers that were in the store already (the
 * extractor checks those it unpacks as it goes). */
static void
check_size (const char *what, uint64_t size, const struct extract_opts *xopts)
{
  if (xopts->max_bytes != 0 && size > xopts->max_bytes)
    die ("%s: unpacked size exceeds the limit of %llu bytes (raise it with --max-size or "
         "ENTER_DEVROOT_MAX_ROOT_SIZE)", what, (unsigned long long) xopts->max_bytes);
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
  free (cleanup_overlay); /* the only slot it owns: staging and meta are C's */
  cleanup_staging = cleanup_overlay = cleanup_meta = NULL;
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

/* Whether create makes an overlay root (common/overlay.h) rather than a flat one:
 * ENTER_DEVROOT_LAYOUT=overlay or flat says; else where entering's auto mode would use a
 * user namespace (chroot not allowed here) and an unprivileged overlay mounts (probed once
 * per kernel: overlay_probe_cached). */
bool
store_layout_overlay (const struct store_paths *p)
{
  const char *v = getenv ("ENTER_DEVROOT_LAYOUT");
  if (v != NULL && v[0] != '\0')
    {
      if (strcmp (v, "overlay") == 0)
        return true;
      if (strcmp (v, "flat") == 0)
        return false;
      die ("invalid ENTER_DEVROOT_LAYOUT '%s': expected flat or overlay", v);
    }
  return !userns_chroot_allowed () && overlay_probe_cached (p);
}

/* An overlay root's upper and work directories, made in a staging directory of their own
 * (moved to overlays/NAME by overlay_commit); the upper's mode is TOP's (the top layer's
 * root directory), which the merged root shows. Returns the staging directory. */
static char *
overlay_stage (struct creation *c, const char *top)
{
  char *dir = xasprintf ("%s/%s" STAGING_SUFFIX, c->p.staging, c->name);
  if (mkdtemp (dir) == NULL)
    die_with_error ("cannot create staging directory in %s", c->p.staging);
  cleanup_overlay = dir;
  cleanup_free char *upper = xasprintf ("%s/upper", dir);
  cleanup_free char *work = xasprintf ("%s/work", dir);
  struct stat st;
  if (stat (top, &st) < 0)
    die_with_error ("cannot create '%s': cannot read its top layer %s", c->name, top);
  if (mkdir (upper, 0700) < 0 || chmod (upper, st.st_mode & 01777) < 0
      || mkdir (work, 0700) < 0)
    die_with_error ("cannot create '%s': cannot make its upper and work directories in %s",
                    c->name, dir);
  return dir;
}

/* Move the staged upper and work to overlays/NAME. One left there by a create or remove
 * cut short, with no root of the name (we hold its lock), is debris: it goes first. */
static void
overlay_commit (struct creation *c, char *staged)
{
  cleanup_free char *dir = paths_overlay (&c->p, c->name);
  if (rm_rf_at (AT_FDCWD, dir) < 0)
    die_with_error ("cannot create '%s': cannot remove the stale %s", c->name, dir);
  if (rename (staged, dir) < 0)
    die_with_error ("cannot move %s into place as %s", staged, dir);
  free (staged);
  cleanup_overlay = steal_pointer (&dir);
}

/* The account's writes into a new overlay root's upper (account_ensure_user_with): what the
 * layers hold at each path is copied up first, as overlayfs would. */
struct upper_write
{
  const struct merged *mv;
  int upperfd;
};

static void
copy_up_before_write (const char *path, void *data)
{
  const struct upper_write *w = data;
  merged_copy_up (w->mv, w->upperfd, path);
}

/* Whether create's additions can be written straight into the upper: every path the
 * account writes is absent or a plain directory or file in the merged tree, and FINISH
 * would change nothing (FINISH_IDLE). Else the overlay is mounted for them. */
static bool
upper_writable (const struct merged *mv, bool (*finish_idle) (const struct merged *, const struct meta *, void *),
                const struct meta *m, void *data)
{
  struct account_additions add;
  account_additions (&add);
  cleanup_free char *home = xasprintf ("home/%s", add.name);
  account_additions_clear (&add);
  const char *dirs[] = { "etc", "home", home }, *files[] = { "etc/passwd", "etc/group" };
  size_t layer;
  struct stat st;
  for (size_t i = 0; i < N_ELEMENTS (dirs); i++)
    {
      enum merged_kind k = merged_lookup (mv, dirs[i], &layer, &st);
      if (k != MERGED_ABSENT && k != MERGED_DIR)
        return false;
    }
  for (size_t i = 0; i < N_ELEMENTS (files); i++)
    {
      enum merged_kind k = merged_lookup (mv, files[i], &layer, &st);
      if (k != MERGED_ABSENT && k != MERGED_FILE)
        return false;
    }
  return finish_idle == NULL || finish_idle (mv, m, data);
}

/* create's additions through the overlay mounted on the staging mount point in this
 * process's own namespaces (never the host's), unmounted before the renames: for a root
 * whose paths upper_writable does not follow. */
static void
additions_through_mount (struct creation *c, const struct meta *m, const char *staged,
                         void (*finish) (int rootfd, void *data), void *data)
{
  overlay_store_namespaces (c->name);
  /* volatile: the upper's filesystem is not synced at the unmount (the flat create does
   * not sync either). */
  overlay_mount (c->name, c->staging, m->layers, staged, true);
  cleanup_fd int merged = open (c->staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (merged < 0)
    die_with_error ("cannot create '%s': cannot open its overlay on %s", c->name, c->staging);
  if (finish != NULL)
    finish (merged, data);
  account_ensure_user (merged);
  close (steal_fd (&merged));
  if (umount2 (c->staging, MNT_DETACH) < 0)
    die_with_error ("cannot create '%s': cannot unmount its overlay from %s", c->name,
                    c->staging);
  /* Cleanly unmounted: the volatile mark in work/work would only refuse the next mount. */
  cleanup_free char *scratch = xasprintf ("%s/work/work", staged);
  if (rm_rf_at (AT_FDCWD, scratch) < 0)
    die_with_error ("cannot create '%s': cannot clear %s", c->name, scratch);
}

/* Finish C as an overlay root of M's layers (M->layers set, bottom first), in O(layers):
 * nothing is copied. create's own additions (the account; FINISH's, e.g. an image's
 * WorkingDir, unless FINISH_IDLE says it has nothing to do) go into the upper: written
 * there directly, fd-relative, as overlayfs would have (the upper is new, empty and ours:
 * nothing in it to distrust yet), or where the layers have something merged.c does not
 * read, through a mount of the overlay. */
static void
creation_commit_overlay (struct creation *c, struct meta *m,
                         void (*finish) (int rootfd, void *data),
                         bool (*finish_idle) (const struct merged *mv, const struct meta *m, void *data),
                         void *data)
{
  size_t n = strv_length (m->layers);
  cleanup_free char *top = overlay_layer_tree (n > 0 ? m->layers[n - 1] : NULL);
  if (top == NULL)
    die ("cannot create '%s': no valid top layer", c->name);
  char *staged = overlay_stage (c, top);
  struct merged mv;
  merged_open (&mv, m->layers);
  if (upper_writable (&mv, finish_idle, m, data))
    {
      cleanup_free char *upper = xasprintf ("%s/upper", staged);
      cleanup_fd int upperfd = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (upperfd < 0)
        die_with_error ("cannot create '%s': cannot open %s", c->name, upper);
      struct upper_write w = { .mv = &mv, .upperfd = upperfd };
      account_ensure_user_with (upperfd, copy_up_before_write, &w);
      verbose ("wrote create's additions into %s directly (no mount)", upper);
    }
  else
    additions_through_mount (c, m, staged, finish, data);
  merged_close (&mv);
  free (m->layout);
  m->layout = xstrdup ("overlay");
  overlay_commit (c, staged);
  creation_commit (c, m);
}

/* An exported OCI-made root carries its image's config (image-config.h): into the
 * metadata, and out of the root before it is in place (the layer keeps it). */
struct config_take
{
  struct meta *m;
  const char *what;
};

static void
take_image_config (int rootfd, void *data)
{
  struct config_take *t = data;
  if (image_config_read (rootfd, t->what, &t->m->image))
    image_config_remove (rootfd);
}

/* take_image_config has nothing to take: the layers hold no image config. */
static bool
no_image_config (const struct merged *mv, const struct meta *m, void *data)
{
  (void) m;
  (void) data;
  size_t layer;
  struct stat st;
  return merged_lookup (mv, IMAGE_CONFIG_DIR, &layer, &st) == MERGED_ABSENT;
}

/* An image's FINISH (its WorkingDir made, store-create.h) has nothing to make: the image
 * names none, or the layers have it as a directory already. */
static bool
workdir_present (const struct merged *mv, const struct meta *m, void *data)
{
  (void) data;
  size_t layer;
  struct stat st;
  const char *w = m->image.workdir;
  return w == NULL || w[0] == '\0' || merged_lookup (mv, w, &layer, &st) == MERGED_DIR;
}

void
store_create (const char *name, struct source *src, const struct extract_opts *xopts)
{
  struct creation c;
  creation_begin (&c, name);

  /* A plain tarball is a one-layer image: unpacked once into the layer store (a second
   * create from the same bytes finds it there), then copied into the new root. */
  char hex[SHA256_HEX_LEN + 1], archive_hex[SHA256_HEX_LEN + 1];
  layer_ensure_archive (src, xopts, hex, archive_hex);
  uint64_t size = layer_size (hex);
  check_size (src->description, size, xopts);
  struct meta m = {
    .name = xstrdup (name),
    .source = xstrdup (src->origin),
    .sha256 = xstrdup (archive_hex),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = size,
    .layers = xcalloc (2, sizeof (char *)),
  };
  m.layers[0] = xasprintf ("sha256:%s", hex);
  struct config_take take = { .m = &m, .what = src->description };
  if (store_layout_overlay (&c.p))
    creation_commit_overlay (&c, &m, take_image_config, no_image_config, &take);
  else
    {
      char *hexes[] = { hex, NULL };
      m.size_bytes = layers_flatten (c.rootfd, hexes, 1, src->description);
      account_ensure_user (c.rootfd);
      take_image_config (c.rootfd, &take);
      creation_commit (&c, &m);
      layers_root_mode (c.rootfd, hex);
    }
  meta_clear (&m);
  creation_end (&c);
}

void
store_create_from_layers (const char *name, const char *origin, const char *sha256,
                          const struct meta_image *image, size_t n,
                          void (*ensure) (char (*hexes)[SHA256_HEX_LEN + 1], void *data),
                          void (*finish) (int rootfd, void *data), void *data,
                          const struct extract_opts *xopts)
{
  struct creation c;
  creation_begin (&c, name);
  char (*hexes)[SHA256_HEX_LEN + 1] = xcalloc (n + 1, sizeof *hexes);
  ensure (hexes, data);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += layer_size (hexes[i]);
  check_size (origin, total, xopts);
  struct meta m = {
    .name = xstrdup (name),
    .source = xstrdup (origin),
    .sha256 = xstrdup (sha256),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = total,
    .image = *image, /* borrowed: not cleared below */
    .layers = xcalloc (n + 1, sizeof (char *)),
  };
  for (size_t i = 0; i < n; i++)
    m.layers[i] = xasprintf ("sha256:%s", hexes[i]);
  /* An overlay needs a layer: an image of none is an empty flat root. */
  if (n > 0 && store_layout_overlay (&c.p))
    creation_commit_overlay (&c, &m, finish, workdir_present, data);
  else
    {
      char **list = xcalloc (n + 1, sizeof *list);
      for (size_t i = 0; i < n; i++)
        list[i] = hexes[i];
      m.size_bytes = layers_flatten (c.rootfd, list, n, origin);
      free (list);
      if (finish != NULL)
        finish (c.rootfd, data);
      account_ensure_user (c.rootfd);
      creation_commit (&c, &m);
      /* The top layer's root directory, as an overlay would show it; an image of no
       * layers keeps the default. */
      if (n > 0)
        layers_root_mode (c.rootfd, hexes[n - 1]);
      else if (fchmod (c.rootfd, 0755) < 0)
        die_with_error ("cannot set the mode of %s", c.root);
    }
  m.image = (struct meta_image) { 0 };
  meta_clear (&m);
  free (hexes);
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

