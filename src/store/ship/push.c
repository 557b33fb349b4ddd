/* push NAME docker://REGISTRY/REPO:TAG | oci:DIR:TAG | docker-archive:FILE[:REPO:TAG]: a
 * devroot as an image in a registry, an OCI layout or a docker save archive.
 *
 * A root made from an image (its metadata names the reference and the manifest digest) goes
 * up as the base image's layers plus one new layer holding what changed (layer-diff.c):
 * the base's manifest and config are read from the download cache (or the registry again,
 * by digest), or from its layout or archive again (oci.c: oci_local_base_open); its layers
 * are the layer store's trees (layers.h), where create put them, never applied again. An
 * overlay root's new layer is its upper directory (what the root changed, deletions and
 * replaced directories included, in overlay form), compared with those trees only where
 * it has something; a flat root is compared with them whole. A base layer missing from the
 * store (a root made before it, a cache removed by hand) is unpacked into it once from the
 * base's blob, as create does. The config gets the new diff_id, a history entry when it
 * keeps a history, and `created` = $SOURCE_DATE_EPOCH when set (else the base's, so an
 * unchanged root pushes the same digest twice); the manifest keeps the base's media types
 * (OCI or Docker schema 2; OCI's in a layout). A root made from a tarball goes up as one
 * layer with a minimal OCI config (an overlay one: its merged tree, mounted in this
 * process's own namespaces), holding the Env, WorkingDir, User, Entrypoint and Cmd of the
 * config the tarball carried, if any. The base is only ever the image the root was made
 * from (meta_base_image): never one a carried config names, which the archive's author
 * chose, and which would be fetched with the user's credentials and its layers sent to
 * the destination (image-config.c). What create added is left out exactly as export leaves it out
 * (export.h's filter).
 *
 * Uploads (registry-upload.c): every blob the registry already has is skipped, the base's
 * layers are mounted from its repository when it is on the same registry, the manifest
 * goes last; so a failure anywhere tags nothing. A layout (layout-write.c) gets its
 * index.json last, an archive (archive-write.c) is renamed into place last. The root's name
 * lock is held throughout. On success the pushed reference pinned to its digest is printed:
 * docker://REGISTRY/REPO@sha256:HEX (an archive's: its image ID, the config's digest). */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/name.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/ship/archive-write.h"
#include "store/ship/export.h"
#include "store/extract/extract.h"
#include "store/interrupt.h"
#include "store/layers/layers.h"
#include "store/ship/layer-diff.h"
#include "store/oci/layout-write.h"
#include "store/oci/oci-source.h"
#include "store/progress.h"
#include "store/ship/push.h"
#include "store/oci/registry-upload.h"

#define OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define OCI_LAYER_GZIP "application/vnd.oci.image.layer.v1.tar+gzip"
#define DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define DOCKER_LAYER_GZIP "application/vnd.docker.image.rootfs.diff.tar.gzip"
#define CREATED_BY "enter-devroot push"

static char *cleanup_dir;
static struct archive_out *cleanup_archive;

static void
push_cleanup (void)
{
  archive_out_abandon (cleanup_archive);
  if (cleanup_dir != NULL)
    rm_rf_at (AT_FDCWD, cleanup_dir);
  layers_cleanup (); /* a base layer being unpacked into the store */
}

/* The base image: its manifest and config, its layers in the layer store. */
struct base
{
  struct oci_ref ref;
  struct image_source s;
  char *manifest;
  size_t manifest_len;
  char *media_type;
  struct oci_manifest m;
  char *config;
  size_t config_len;
  char **diff_ids; /* the config's, one per layer */
};

/* The base config's rootfs.diff_ids, one per layer of its manifest (a docker save archive
 * stores the layers by these). */
static char **
base_diff_ids (const struct base *b, const char *what)
{
  struct meta_image image = { 0 };
  char **ids = NULL;
  cleanup_free char *cwhat = xasprintf ("%s: the base image's config", what);
  oci_config_parse (b->config, b->config_len, cwhat, &image, &ids);
  meta_clear (&(struct meta) { .image = image });
  if (strv_length (ids) != b->m.n_layers)
    die ("%s: the base image has %zu layers but %zu diff_ids", what, b->m.n_layers,
         strv_length (ids));
  return ids;
}

static void
base_open (struct base *b, const struct meta_image *image, const struct oci_opts *oo,
           const char *what)
{
  const char *why;
  if (oci_ref_parse (image->ref, &b->ref, &why) < 0)
    die ("%s: its base image '%s' is not a valid reference: %s", what, image->ref, why);
  if (image->digest == NULL || !oci_digest_is_valid (image->digest))
    die ("%s: its metadata has no manifest digest for %s", what, image->ref);
  b->s = (struct image_source) { .what = image->ref };
  if (b->ref.kind == OCI_REF_DOCKER)
    {
      free (b->ref.digest);
      b->ref.digest = xstrdup (image->digest);
      registry_open (&b->s, &b->ref, oo);
      cleanup_free char *digest = NULL, *mt = NULL;
      b->manifest = registry_first_manifest (&b->s, &b->ref, &b->manifest_len, &digest, &mt);
    }
  else
    b->manifest = oci_local_base_open (&b->s, &b->ref, image->digest, &b->manifest_len);
  cleanup_free char *mwhat = xasprintf ("%s: manifest %s", image->ref, image->digest);
  oci_manifest_parse (b->manifest, b->manifest_len, mwhat, &b->m);
  b->config = b->s.read_document (&b->s, &b->m.config, &b->config_len);

  json_t *root = json_loadb (b->manifest, b->manifest_len, 0, NULL);
  json_t *jmt = root != NULL ? json_object_get (root, "mediaType") : NULL;
  if (json_is_string (jmt))
    b->media_type = xstrdup (json_string_value (jmt));
  else if (str_has_prefix (b->m.config.media_type, "application/vnd.docker."))
    b->media_type = xstrdup (DOCKER_MANIFEST);
  else
    b->media_type = xstrdup (OCI_MANIFEST);
  json_decref (root);

  b->diff_ids = base_diff_ids (b, what);
  /* Held (layers.h) until push exits, so that a `cache clean` leaves them alone. */
  struct source *blobs = xcalloc (b->m.n_layers + 1, sizeof *blobs);
  char (*hexes)[SHA256_HEX_LEN + 1] = xcalloc (b->m.n_layers + 1, sizeof *hexes);
  for (size_t i = 0; i < b->m.n_layers; i++)
    blobs[i].fd = -1;
  oci_layers_ensure (&b->s, &b->m, b->diff_ids, blobs, &(struct extract_opts) { 0 }, hexes);
  for (size_t i = 0; i < b->m.n_layers; i++)
    source_clear (&blobs[i]);
  free (blobs);
  free (hexes);
}

static void
base_clear (struct base *b)
{
  if (b->s.data != NULL && b->ref.kind == OCI_REF_DOCKER)
    registry_close (&b->s);
  else if (b->s.data != NULL)
    oci_local_base_close (&b->s);
  free (b->manifest);
  free (b->media_type);
  free (b->config);
  oci_manifest_clear (&b->m);
  oci_ref_clear (&b->ref);
  strv_free (b->diff_ids);
}

/* "2024-01-02T03:04:05Z" for T. */
static char *
rfc3339 (time_t t)
{
  struct tm tm;
  char buf[64];
  gmtime_r (&t, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return xstrdup (buf);
}

static const char *
go_arch (void)
{
  static struct utsname u;
  if (uname (&u) < 0)
    return "amd64";
  if (strcmp (u.machine, "x86_64") == 0)
    return "amd64";
  if (strcmp (u.machine, "aarch64") == 0)
    return "arm64";
  if (str_has_prefix (u.machine, "armv"))
    return "arm";
  if (strcmp (u.machine, "i686") == 0 || strcmp (u.machine, "i386") == 0)
    return "386";
  return u.machine;
}

static json_t *
descriptor (const char *media_type, const char *digest, uint64_t size)
{
  return json_pack ("{s:s, s:s, s:I}", "mediaType", media_type, "digest", digest, "size",
                    (json_int_t) size);
}

static char *
dump (json_t *j, const char *what)
{
  char *s = json_dumps (j, JSON_COMPACT);
  if (s == NULL)
    die ("%s: cannot write JSON", what);
  return s;
}

static void
set_strv (json_t *obj, const char *key, char *const *v)
{
  if (v == NULL)
    return;
  json_t *a = json_array ();
  for (size_t i = 0; v[i] != NULL; i++)
    json_array_append_new (a, json_string (v[i]));
  json_object_set_new (obj, key, a);
}

static void
set_string (json_t *obj, const char *key, const char *s)
{
  if (s != NULL)
    json_object_set_new (obj, key, json_string (s));
}

/* The "config" object of a root with no base: what its metadata keeps of an image config
 * (one an archive carried), else nothing. */
static json_t *
image_fields (const struct meta_image *image)
{
  json_t *c = json_object ();
  set_strv (c, "Env", image->env);
  set_string (c, "WorkingDir", image->workdir);
  set_string (c, "User", image->user);
  set_strv (c, "Entrypoint", image->entrypoint);
  set_strv (c, "Cmd", image->cmd);
  return c;
}

/* The base's config with the new layer: diff_ids, history, created. Without a base, a
 * minimal one holding IMAGE's fields. */
static char *
new_config (const struct base *b, const struct meta *root, const struct layer_blob *l,
            const struct export_filter *f, const char *what)
{
  const struct meta_image *image = &root->image;
  json_t *cfg;
  if (b != NULL)
    {
      json_error_t err;
      cfg = json_loadb (b->config, b->config_len, 0, &err);
      if (!json_is_object (cfg))
        die ("%s: the base image's config is not a JSON object", what);
    }
  else
    cfg = json_pack ("{s:s, s:s, s:o, s:{s:s, s:[]}, s:[]}", "architecture", go_arch (), "os",
                     "linux", "config", image_fields (image), "rootfs", "type", "layers",
                     "diff_ids", "history");
  cleanup_free char *created = NULL;
  if (f->clamp)
    created = rfc3339 (f->epoch);
  else if (json_is_string (json_object_get (cfg, "created")))
    created = xstrdup (json_string_value (json_object_get (cfg, "created")));
  else if (root->created != NULL)
    created = xstrdup (root->created); /* the root's own date, the same at every push */
  else
    created = rfc3339 (0);
  json_object_set_new (cfg, "created", json_string (created));
  json_t *rootfs = json_object_get (cfg, "rootfs");
  json_t *ids = json_is_object (rootfs) ? json_object_get (rootfs, "diff_ids") : NULL;
  if (!json_is_array (ids))
    die ("%s: the base image's config has no rootfs.diff_ids", what);
  json_array_append_new (ids, json_string (l->diff_id));
  json_t *history = json_object_get (cfg, "history");
  /* Only a config that keeps a history gets an entry: one without would then have fewer
   * entries than layers, which readers check. */
  if (json_is_array (history))
    json_array_append_new (history, json_pack ("{s:s, s:s}", "created", created, "created_by",
                                               CREATED_BY));
  char *text = dump (cfg, what);
  json_decref (cfg);
  return text;
}

/* LEN bytes at DATA as a string (a document's bytes, which hold no NUL). */
static char *
bytes_text (const char *data, size_t len)
{
  char *s = xmalloc (len + 1);
  memcpy (s, data, len);
  s[len] = '\0';
  return s;
}

/* A Docker schema 2 media type's OCI equivalent (the same bytes), or NULL. */
static const char *
oci_equivalent (const char *docker)
{
  static const char *const pairs[][2] = {
    { DOCKER_MANIFEST, OCI_MANIFEST },
    { "application/vnd.docker.container.image.v1+json", OCI_CONFIG },
    { DOCKER_LAYER_GZIP, OCI_LAYER_GZIP },
    { "application/vnd.docker.image.rootfs.diff.tar", "application/vnd.oci.image.layer.v1.tar" },
    { "application/vnd.docker.image.rootfs.diff.tar.zstd",
      "application/vnd.oci.image.layer.v1.tar+zstd" },
  };
  for (size_t i = 0; docker != NULL && i < sizeof pairs / sizeof pairs[0]; i++)
    if (strcmp (docker, pairs[i][0]) == 0)
      return pairs[i][1];
  return NULL;
}

/* M's "mediaType" made OCI's when it is a Docker schema 2 one. */
static void
to_oci (json_t *m)
{
  json_t *mt = json_object_get (m, "mediaType");
  const char *oci = oci_equivalent (json_string_value (mt));
  if (oci != NULL)
    json_object_set_new (m, "mediaType", json_string (oci));
}

/* The base's manifest with the new config and layer; WANT_OCI: in OCI's media types, as
 * an OCI layout must hold (skopeo and umoci read no Docker manifest there), the way
 * `skopeo copy` converts one: the blobs are the same, only their descriptors change. */
static char *
new_manifest (const struct base *b, const struct layer_blob *l, const char *config_digest,
              size_t config_len, bool want_oci, const char **media_type, const char *what)
{
  json_t *m;
  const char *layer_type;
  if (b != NULL)
    {
      m = json_loadb (b->manifest, b->manifest_len, 0, NULL);
      json_t *cfg = json_is_object (m) ? json_object_get (m, "config") : NULL;
      json_t *layers = json_is_object (m) ? json_object_get (m, "layers") : NULL;
      if (!json_is_object (cfg) || !json_is_array (layers))
        die ("%s: the base image's manifest has no config or layers", what);
      bool convert = want_oci && oci_equivalent (b->media_type) != NULL;
      if (convert)
        {
          to_oci (m);
          to_oci (cfg);
          for (size_t i = 0; i < json_array_size (layers); i++)
            to_oci (json_array_get (layers, i));
        }
      json_object_set_new (cfg, "digest", json_string (config_digest));
      json_object_set_new (cfg, "size", json_integer ((json_int_t) config_len));
      *media_type = convert ? OCI_MANIFEST : b->media_type;
      layer_type = strcmp (*media_type, DOCKER_MANIFEST) == 0 ? DOCKER_LAYER_GZIP
                                                              : OCI_LAYER_GZIP;
      if (l != NULL) /* NULL: the base as it is */
        json_array_append_new (layers, descriptor (layer_type, l->digest, l->size));
    }
  else
    {
      *media_type = OCI_MANIFEST;
      m = json_pack ("{s:i, s:s, s:o, s:[o]}", "schemaVersion", 2, "mediaType", OCI_MANIFEST,
                     "config", descriptor (OCI_CONFIG, config_digest, config_len), "layers",
                     descriptor (OCI_LAYER_GZIP, l->digest, l->size));
    }
  char *text = dump (m, what);
  json_decref (m);
  return text;
}

/* A base layer's blob, opened when its bytes are needed (upload_body). */
struct base_blob
{
  struct base *b;
  const struct oci_descriptor *d;
  const char *what;
  struct source src;
};

static void
open_base_blob (struct upload_body *body)
{
  struct base_blob *bb = body->ctx;
  bb->b->s.open_blob (&bb->b->s, bb->d, &bb->src);
  body->fd = bb->src.fd;
  /* A docker save archive's layer is a window of the archive. */
  body->offset = lseek (bb->src.fd, 0, SEEK_CUR);
  if (body->offset < 0)
    die_with_error ("%s: cannot read layer %s", bb->what, bb->d->digest);
}

static bool
same_strv (char *const *a, char *const *b)
{
  size_t n = strv_length (a);
  if (n != strv_length (b))
    return false;
  for (size_t i = 0; i < n; i++)
    if (strcmp (a[i], b[i]) != 0)
      return false;
  return true;
}

void
push_root (const char *name, const char *dest, const struct push_opts *o)
{
  name_check (name);
  cleanup_free char *what = xasprintf ("cannot push '%s'", name);
  struct oci_ref dref;
  const char *why;
  if (!oci_ref_is_image (dest))
    die ("push: unsupported destination '%s': expected docker://REGISTRY/REPO:TAG, "
         "oci:DIR:TAG or docker-archive:FILE[:REPO:TAG]", dest);
  if (oci_ref_parse (dest, &dref, &why) < 0)
    die ("push: invalid destination '%s': %s", dest, why);
  if (dref.kind == OCI_REF_DOCKER && (dref.digest != NULL || dref.tag == NULL))
    die ("push: invalid destination '%s': name a tag, not a digest", dest);

  cleanup_free char *root = NULL;
  struct meta m;
  cleanup_fd int upperfd = -1;
  cleanup_fd int lockfd __attribute__((unused)) = export_lock_root (name, "push", &root, &m,
                                                                    &upperfd);
  struct export_filter f;
  export_filter_init (&f, &m, what);

  const char *tmpbase = getenv ("TMPDIR");
  cleanup_free char *tmp = xasprintf ("%s/enter-devroot-push.XXXXXX",
                                      tmpbase != NULL && tmpbase[0] == '/' ? tmpbase : "/var/tmp");
  if (mkdtemp (tmp) == NULL)
    die_with_error ("%s: cannot create a temporary directory %s", what, tmp);
  cleanup_dir = tmp;
  set_die_cleanup (push_cleanup);

  /* The destination's transport is push's --insecure-http; the base is read again the way
   * create pulled it (its recorded transport; a root made before that was recorded: as
   * --insecure-http says), or from the cache where its blobs are. */
  struct oci_opts oo = { .cacert = o->cacert, .insecure_http = o->insecure_http,
                         .quiet = o->quiet };
  struct oci_opts base_oo = oo;
  base_oo.insecure_http = m.image.transport != NULL ? strcmp (m.image.transport, "http") == 0
                                                    : o->insecure_http;
  struct base b = { 0 };
  bool has_base = meta_base_image (&m) != NULL;
  if (has_base)
    base_open (&b, &m.image, &base_oo, what);
  else if (m.image.ref != NULL)
    verbose ("%s: its metadata names the image %s, which it was not made from (%s): "
             "pushed as one layer, that image neither read nor sent", name, m.image.ref,
             m.source != NULL ? m.source : "no source");

  /* The destination first: a registry that cannot be reached, that speaks another
   * protocol or refuses our credentials says so now, not after the layer is built. A
   * layout or an archive is opened once the layer is there (nothing is written before). */
  struct upload *u = NULL;
  if (dref.kind == OCI_REF_DOCKER)
    {
      /* A mount needs the base's blobs in another repository of the same registry; a base
       * read from a layout or an archive has its blobs uploaded. */
      bool same_registry = has_base && b.ref.kind == OCI_REF_DOCKER
                           && strcmp (b.ref.registry, dref.registry) == 0
                           && base_oo.insecure_http == oo.insecure_http;
      u = upload_open (&dref, same_registry ? b.ref.repository : NULL, &oo, what);
      upload_check (u);
    }

  /* The diff reads every file of a flat root: seconds for a big one, so a line on a
   * terminal says it is working (bytes read, no total: what changed is not known yet). */
  cleanup_free char *comparing = xasprintf ("comparing %s", name);
  struct progress bar;
  progress_begin (&bar, !o->quiet && isatty (STDERR_FILENO), comparing, 0, 0);
  struct layer_blob layer;
  if (upperfd >= 0)
    {
      /* Its upper is a diff against its own layers: they must be the base's. */
      if (!same_strv (m.layers, b.diff_ids))
        die ("%s: its layers are not its base image's (%s): create it again", what,
             m.image.ref);
      layer_diff (upperfd, b.diff_ids, LAYER_DIFF_UPPER, &f, what, tmp, &bar, &layer);
    }
  else
    {
      cleanup_fd int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (rootfd < 0)
        die_with_error ("%s: cannot open %s", what, root);
      layer_diff (rootfd, b.diff_ids, LAYER_DIFF_TREE, &f, what, tmp, &bar, &layer);
    }
  progress_end (&bar);

  /* A root that changed nothing of its base is its base: pushed as it is, with no empty
   * layer on top (docker tag + push). */
  bool unchanged = has_base && layer.entries == 0;
  if (unchanged)
    verbose ("%s: nothing changed from %s: its image is pushed as it is", name, m.image.ref);
  cleanup_free char *config = unchanged ? bytes_text (b.config, b.config_len)
                              : new_config (has_base ? &b : NULL, &m, &layer, &f, what);
  size_t config_len = strlen (config);
  cleanup_free char *config_digest = oci_digest_of (config, config_len);
  const char *media_type;
  cleanup_free char *manifest = new_manifest (has_base ? &b : NULL, unchanged ? NULL : &layer,
                                              config_digest, config_len,
                                              dref.kind == OCI_REF_LAYOUT, &media_type, what);
  size_t manifest_len = strlen (manifest);
  cleanup_free char *manifest_digest = oci_digest_of (manifest, manifest_len);

  /* Every blob the manifest names, the base's first, then the new layer and the config,
   * and the manifest last: to a registry, a layout or a docker save archive. */
  struct layout_out *lo = NULL;
  struct archive_out *ao = NULL;
  if (dref.kind == OCI_REF_LAYOUT)
    lo = layout_out_open (dref.path, dref.tag, what);
  else if (dref.kind == OCI_REF_ARCHIVE)
    cleanup_archive = ao = archive_out_open (dref.path, dref.tag, tmp, what);
  for (size_t i = 0; has_base && i < b.m.n_layers; i++)
    {
      const struct oci_descriptor *d = &b.m.layers[i];
      struct base_blob bb = { .b = &b, .d = d, .what = what, .src = { .fd = -1 } };
      struct upload_body body = { .fd = -1, .open = open_base_blob, .ctx = &bb };
      cleanup_free char *label = xasprintf ("%.19s", d->digest);
      if (u != NULL)
        upload_blob (u, d->digest, d->size, &body, label, true);
      else
        {
          open_base_blob (&body);
          if (lo != NULL)
            layout_out_blob (lo, d->digest, d->size, body.fd, body.offset, NULL);
          else
            archive_out_layer (ao, b.diff_ids[i], body.fd, body.offset, d->size);
        }
      source_clear (&bb.src);
      interrupt_check ();
    }
  cleanup_free char *label = xasprintf ("%.19s", layer.digest);
  if (lo != NULL)
    {
      if (!unchanged)
        layout_out_blob (lo, layer.digest, layer.size, layer.fd, 0, NULL);
      layout_out_blob (lo, config_digest, config_len, -1, 0, config);
      interrupt_check ();
      layout_out_manifest (lo, media_type, manifest, manifest_len);
      interrupt_commit ();
      layout_out_close (lo);
      printf ("oci:%s@%s\n", dref.path, manifest_digest);
    }
  else if (ao != NULL)
    {
      if (!unchanged)
        archive_out_layer (ao, layer.diff_id, layer.fd, 0, layer.size);
      interrupt_check ();
      archive_out_finish (ao, config_digest, config, config_len);
      interrupt_commit ();
      cleanup_archive = NULL;
      archive_out_close (ao);
      /* An archive has no manifest: its image is named by its config's digest (its ID). */
      printf ("docker-archive:%s@%s\n", dref.path, config_digest);
    }
  else
    {
      if (!unchanged)
        upload_blob (u, layer.digest, layer.size, &(struct upload_body) { .fd = layer.fd },
                     label, false);
      upload_blob (u, config_digest, config_len,
                   &(struct upload_body) { .fd = -1, .data = config }, "config", false);
      interrupt_check ();
      upload_manifest (u, media_type, manifest, manifest_len);
      interrupt_commit ();
      upload_close (u);
      printf ("docker://%s/%s@%s\n", dref.registry, dref.repository, manifest_digest);
    }

  set_die_cleanup (NULL);
  push_cleanup ();
  cleanup_dir = NULL;
  close (layer.fd);
  base_clear (&b);
  export_filter_clear (&f);
  meta_clear (&m);
  oci_ref_clear (&dref);
}
