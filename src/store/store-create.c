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
#include "common/root-create.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/userns.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/cache/digest.h"
#include "store/oci/image-config.h"
#include "store/interrupt.h"
#include "store/layers/layers.h"
#include "common/merged.h"
#include "store/store-create.h"

/* creation_begin with the store's undo (a layer being unpacked) and interrupt handling. */
static void
store_creation_begin (struct creation *c, const char *name)
{
  creation_begin (c, name, layers_cleanup);
  c->before_rename = interrupt_check;
  c->after_rename = interrupt_commit;
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
 * there directly (creation_commit_overlay_direct), or where the layers have something
 * merged.c does not read, through a mount of the overlay. */
static void
creation_commit_overlay (struct creation *c, struct meta *m,
                         void (*finish) (int rootfd, void *data), creation_idle_fn *finish_idle,
                         void *data)
{
  if (creation_commit_overlay_direct (c, m, finish_idle, data))
    return;
  size_t n = strv_length (m->layers);
  cleanup_free char *top = overlay_layer_tree (n > 0 ? m->layers[n - 1] : NULL);
  char *staged = overlay_stage (c, top);
  additions_through_mount (c, m, staged, finish, data);
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

/* Where the layer store's files cannot be cloned into the new root (ext4, tmpfs, most
 * homes), unpacking a flat root's layers into the store and copying them into the root
 * would write every file twice: a create that finds none of them stored unpacks straight
 * into the root instead and keeps no layer (an overlay root, which needs them, stores
 * them, and so does create --keep-layers, which throwaway roots ask for; later flat creates
 * then copy from there). Where the
 * files can be cloned, the layers are stored first, as the clone costs no second write. */
static bool
unpack_straight (const struct creation *c, bool any_stored, const struct extract_opts *xopts)
{
  if (xopts->overlay || xopts->keep_layers || any_stored || layers_clone_into (c->rootfd))
    return false;
  verbose ("%s: this filesystem cannot share the layer store's data with the new root: "
           "unpacking straight into it (no layer kept)", c->name);
  return true;
}

/* The flat root of the plain tarball SRC unpacked straight into C's staging directory
 * (unpack_straight): its metadata records the layer it would have been, by diff_id. */
static void
create_flat_archive (struct creation *c, struct source *src, const struct extract_opts *xopts)
{
  struct extract_opts opts = *xopts;
  opts.diff_id = true;
  struct extract_result res = { 0 };
  struct extractor *x = extract_archive (c->rootfd, src, &opts, &res);
  struct meta m = {
    .name = xstrdup (c->name),
    .source = xstrdup (src->origin),
    .sha256 = xstrdup (res.sha256),
    .created = format_rfc3339_utc (time (NULL)),
    .size_bytes = res.size_bytes,
    .layers = xcalloc (2, sizeof (char *)),
  };
  m.layers[0] = xasprintf ("sha256:%s", res.diff_id);
  /* The account before the directories get their modes (extract_finish), which may make
   * /etc read-only; the image config's directory after, as the fixups would reopen it. */
  account_ensure_user (c->rootfd);
  extract_finish (x);
  take_image_config (c->rootfd, &(struct config_take) { .m = &m, .what = src->description });
  creation_commit (c, &m);
  meta_clear (&m);
  extract_finish_root (x);
}

void
store_create (const char *name, struct source *src, const struct extract_opts *xopts)
{
  struct creation c;
  store_creation_begin (&c, name);

  /* A plain tarball is a one-layer image: unpacked once into the layer store (a second
   * create from the same bytes finds it there), then copied into the new root; or
   * straight into a flat root (unpack_straight). */
  char hex[SHA256_HEX_LEN + 1], archive_hex[SHA256_HEX_LEN + 1];
  bool stored = layer_find_archive (src, hex, archive_hex);
  if (unpack_straight (&c, stored, xopts))
    {
      create_flat_archive (&c, src, xopts);
      creation_end (&c);
      return;
    }
  if (!stored)
    layer_unpack_archive (src, xopts, hex, archive_hex);
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
  if (xopts->overlay)
    creation_commit_overlay (&c, &m, take_image_config, creation_no_image_config, &take);
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

/* The flat root of L's layers applied in order straight into C's staging directory, with
 * the image spec's whiteouts (extract.h), each checked against its diff_id
 * (unpack_straight). M: the metadata, its size set here. */
static void
create_flat_layers (struct creation *c, struct meta *m, const struct image_layers *l,
                    const struct extract_opts *xopts)
{
  struct extract_opts opts = *xopts;
  opts.diff_id = true;
  struct extract_result res = { 0 };
  struct extractor *x = extract_begin (c->rootfd, &opts, &res);
  for (size_t i = 0; i < l->n; i++)
    {
      const char *what = l->unpack (x, i, l->data);
      layer_check_diff_id (what, l->diff_ids[i] + strlen ("sha256:"), res.diff_id);
    }
  if (l->finish != NULL)
    l->finish (c->rootfd, l->data);
  account_ensure_user (c->rootfd);
  extract_finish (x);
  m->size_bytes = res.size_bytes;
  creation_commit (c, m);
  extract_finish_root (x);
}

void
store_create_from_layers (const char *name, const char *origin, const char *sha256,
                          const struct meta_image *image, const struct image_layers *l,
                          const struct extract_opts *xopts)
{
  struct creation c;
  store_creation_begin (&c, name);
  size_t n = l->n;
  struct meta m = {
    .name = xstrdup (name),
    .source = xstrdup (origin),
    .sha256 = xstrdup (sha256),
    .created = format_rfc3339_utc (time (NULL)),
    .image = *image, /* borrowed: not cleared below */
    .layers = xcalloc (n + 1, sizeof (char *)),
  };
  for (size_t i = 0; i < n; i++)
    m.layers[i] = xstrdup (l->diff_ids[i]);
  /* A layer stored already is copied from the store (its blob may be gone). */
  if (n > 0 && unpack_straight (&c, layers_stored (m.layers) > 0, xopts))
    {
      create_flat_layers (&c, &m, l, xopts);
      m.image = (struct meta_image) { 0 };
      meta_clear (&m);
      creation_end (&c);
      return;
    }
  char (*hexes)[SHA256_HEX_LEN + 1] = xcalloc (n + 1, sizeof *hexes);
  l->ensure (hexes, l->data);
  uint64_t total = 0;
  for (size_t i = 0; i < n; i++)
    total += layer_size (hexes[i]);
  check_size (origin, total, xopts);
  m.size_bytes = total;
  /* An overlay needs a layer: an image of none is an empty flat root. */
  if (n > 0 && xopts->overlay)
    creation_commit_overlay (&c, &m, l->finish, creation_workdir_present, l->data);
  else
    {
      char **list = xcalloc (n + 1, sizeof *list);
      for (size_t i = 0; i < n; i++)
        list[i] = hexes[i];
      m.size_bytes = layers_flatten (c.rootfd, list, n, origin);
      free (list);
      if (l->finish != NULL)
        l->finish (c.rootfd, l->data);
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
  store_creation_begin (&c, name);
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

