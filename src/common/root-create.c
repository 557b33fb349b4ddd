/* Creating a root in the store (root-create.h): staging, metadata, the rename into place;
 * an overlay root's upper and work directories, and create's additions written straight
 * into a new upper. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/account.h"
#include "common/merged.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/root-create.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/verbose.h"

/* What a failing create must undo; die() runs create_cleanup. */
static char *cleanup_staging;
static char *cleanup_overlay; /* an overlay root's upper and work, staged or in place */
static char *cleanup_meta;

static void (*cleanup_more) (void); /* the store's: a layer being unpacked */

static void
create_cleanup (void)
{
  if (cleanup_more != NULL)
    cleanup_more ();
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

void
creation_begin (struct creation *c, const char *name, void (*undo) (void))
{
  *c = (struct creation) { .name = name, .lockfd = -1, .rootfd = -1 };
  cleanup_more = undo;
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

void
creation_commit (struct creation *c, const struct meta *m)
{
  c->meta_path = paths_meta (&c->p, c->name);
  cleanup_meta = c->meta_path;
  meta_write (c->meta_path, m);
  if (c->before_rename != NULL)
    c->before_rename ();
  if (tree_place (c->staging, c->root) < 0)
    {
      if (errno == EEXIST || errno == ENOTEMPTY)
        die ("cannot create '%s': it already exists (%s)", c->name, c->root);
      die_with_error ("cannot move %s into place as %s", c->staging, c->root);
    }
  verbose ("renamed %s into place as %s", c->staging, c->root);
  /* The root is in place: the create has succeeded, whatever signal comes now. */
  if (c->after_rename != NULL)
    c->after_rename ();
  set_die_cleanup (NULL);
  free (cleanup_overlay); /* the only slot it owns: staging and meta are C's */
  cleanup_staging = cleanup_overlay = cleanup_meta = NULL;
}

void
creation_end (struct creation *c)
{
  close (c->rootfd);
  close (c->lockfd); /* releases the lock */
  free (c->root);
  free (c->staging);
  free (c->meta_path);
  store_paths_clear (&c->p);
}

/* An overlay root's upper and work directories, made in a staging directory of their own
 * (moved to overlays/NAME by overlay_commit); the upper's mode is TOP's (the top layer's
 * root directory), which the merged root shows. Returns the staging directory. */
char *
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
void
overlay_commit (struct creation *c, char *staged)
{
  cleanup_free char *dir = paths_overlay (&c->p, c->name);
  if (rm_rf_at (AT_FDCWD, dir) < 0)
    die_with_error ("cannot create '%s': cannot remove the stale %s", c->name, dir);
  if (tree_place (staged, dir) < 0)
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
upper_writable (const struct merged *mv, creation_idle_fn *finish_idle, const struct meta *m,
                void *data)
{
  struct account_additions add;
  account_additions (&add);
  cleanup_free char *home = xasprintf ("home/%s", add.name);
  account_additions_clear (&add);
  const char *dirs[] = { "etc", "home", home }, *files[] = { "etc/passwd", "etc/group" };
  for (size_t i = 0; i < N_ELEMENTS (dirs); i++)
    {
      enum merged_kind k = merged_lookup (mv, dirs[i]);
      if (k != MERGED_ABSENT && k != MERGED_DIR)
        return false;
    }
  for (size_t i = 0; i < N_ELEMENTS (files); i++)
    {
      enum merged_kind k = merged_lookup (mv, files[i]);
      if (k != MERGED_ABSENT && k != MERGED_FILE)
        return false;
    }
  return finish_idle == NULL || finish_idle (mv, m, data);
}


void
creation_abort (struct creation *c)
{
  create_cleanup ();
  set_die_cleanup (NULL);
  free (cleanup_overlay);
  cleanup_staging = cleanup_overlay = cleanup_meta = NULL;
  creation_end (c);
}

bool
creation_commit_overlay_direct (struct creation *c, struct meta *m,
                                creation_idle_fn *finish_idle, void *data)
{
  size_t n = strv_length (m->layers);
  cleanup_free char *top = overlay_layer_tree (n > 0 ? m->layers[n - 1] : NULL);
  if (top == NULL)
    die ("cannot create '%s': no valid top layer", c->name);
  struct merged mv;
  merged_open (&mv, m->layers);
  if (!upper_writable (&mv, finish_idle, m, data))
    {
      merged_close (&mv);
      return false;
    }
  char *staged = overlay_stage (c, top);
  cleanup_free char *upper = xasprintf ("%s/upper", staged);
  cleanup_fd int upperfd = open (upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (upperfd < 0)
    die_with_error ("cannot create '%s': cannot open %s", c->name, upper);
  struct upper_write w = { .mv = &mv, .upperfd = upperfd };
  account_ensure_user_with (upperfd, copy_up_before_write, &w);
  verbose ("wrote create's additions into %s directly (no mount)", upper);
  merged_close (&mv);
  free (m->layout);
  m->layout = xstrdup ("overlay");
  overlay_commit (c, staged);
  creation_commit (c, m);
  return true;
}

bool
creation_no_image_config (const struct merged *mv, const struct meta *m, void *data)
{
  (void) m;
  (void) data;
  return merged_lookup (mv, IMAGE_CONFIG_DIR) == MERGED_ABSENT;
}

bool
creation_workdir_present (const struct merged *mv, const struct meta *m, void *data)
{
  (void) data;
  const char *w = m->image.workdir;
  return w == NULL || w[0] == '\0' || merged_lookup (mv, w) == MERGED_DIR;
}

bool
creation_nothing_to_finish (const struct merged *mv, const struct meta *m, void *data)
{
  return creation_no_image_config (mv, m, data) && creation_workdir_present (mv, m, data);
}

void
creation_announce (const char *name, bool quiet)
{
  if (quiet || !isatty (STDERR_FILENO))
    return;
  struct store_paths p;
  store_paths_from_env (&p);
  /* A root whose run lock someone holds while it is created is `run --ephemeral`'s (or a
   * Slurm step's), which removes it when its command ends: nothing to enter later. */
  cleanup_free char *lock = paths_run_lock (&p, name);
  cleanup_fd int lockfd = open (lock, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (lockfd >= 0 && flock (lockfd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK)
    {
      store_paths_clear (&p);
      return;
    }
  cleanup_free char *meta_path = paths_meta (&p, name);
  store_paths_clear (&p);
  struct meta m = { 0 };
  cleanup_free char *size = meta_read (meta_path, &m) == 0 ? human_size (m.size_bytes) : NULL;
  meta_clear (&m);
  fprintf (stderr, "%s: created '%s'%s%s%s: enter it with '%s enter %s'\n", PROGRAM_NAME, name,
           size != NULL ? " (" : "", size != NULL ? size : "", size != NULL ? ")" : "",
           PROGRAM_NAME, name);
}
