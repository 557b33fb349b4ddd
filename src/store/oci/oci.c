/* OCI images as devroots (oci.h): resolving a reference to a manifest, and the two local
 * sources, an OCI image layout (oci:DIR) and a docker save archive (docker-archive:FILE).
 * The registry is in registry.c.
 *
 * Everything read here is untrusted and checked before use: documents are capped at
 * OCI_DOCUMENT_MAX and must match their descriptor's size and digest before they are
 * parsed; layers are verified by the extractor as they stream (a layer of a docker save
 * archive against the config's diff_ids, the only digests such an archive has). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "common/verbose.h"
#include "store/cache/digest.h"
#include "store/layers/layers.h"
#include "store/oci/oci-source.h"
#include "store/store-create.h"

#define DIGEST_PREFIX "sha256:"
#define LAYOUT_INDEX "index.json"
#define LAYOUT_MARKER "oci-layout"
#define ARCHIVE_MANIFEST "manifest.json"
#define ARCHIVE_BLOCK (64 * 1024)
#define MAX_INDEX_DEPTH 2 /* an index may name an index (a layout naming a multi-arch image) */

/* The hex part of a valid "sha256:HEX". */
static const char *
digest_hex (const char *digest)
{
  return digest + strlen (DIGEST_PREFIX);
}

char *
oci_digest_of (const void *data, size_t len)
{
  struct sha256 h;
  char hex[SHA256_HEX_LEN + 1];
  sha256_init (&h);
  sha256_update (&h, data, len);
  sha256_final (&h, hex);
  return xasprintf (DIGEST_PREFIX "%s", hex);
}

void
oci_check_digest (const char *what, const char *digest, const void *data, size_t len)
{
  cleanup_free char *got = oci_digest_of (data, len);
  if (strcmp (got, digest) != 0)
    die ("%s: digest mismatch: expected %s, got %s", what, digest, got);
}

char *
oci_read_document_fd (int fd, const struct oci_descriptor *d, const char *what, size_t *len)
{
  if (d->size > OCI_DOCUMENT_MAX)
    die ("%s: %s is %llu bytes, over the limit of %d for a manifest or config", what,
         d->digest, (unsigned long long) d->size, OCI_DOCUMENT_MAX);
  char *text = read_fd_all (fd, OCI_DOCUMENT_MAX + 1, len);
  if (text == NULL && errno == EFBIG)
    die ("%s: %s is over the limit of %d bytes for a manifest or config", what, d->digest,
         OCI_DOCUMENT_MAX);
  if (text == NULL)
    die_with_error ("%s: cannot read %s", what, d->digest);
  if (*len != d->size)
    {
      free (text);
      die ("%s: %s is %zu bytes, its descriptor says %llu", what, d->digest, *len,
           (unsigned long long) d->size);
    }
  oci_check_digest (what, d->digest, text, *len);
  return text;
}

/* ---- Walking from the first document to the image's manifest. */

/* TEXT (LEN bytes, digest DIGEST, media type MT) is an index or a manifest: follow indexes
 * to the manifest for PLATFORM. Returns the manifest's text and sets *DIGEST to its digest
 * (TEXT and *DIGEST are consumed). */
static char *
resolve_manifest (struct image_source *s, char *text, size_t *len, char **digest,
                  const char *mt, const struct oci_platform *platform)
{
  cleanup_free char *media_type = mt != NULL ? xstrdup (mt) : NULL;
  for (int depth = 0;; depth++)
    {
      cleanup_free char *what = xasprintf ("%s: %s", s->what, *digest);
      if (oci_document_kind (text, *len, media_type, what) == OCI_DOC_MANIFEST)
        return text;
      if (depth == MAX_INDEX_DEPTH)
        die ("%s: indexes nested deeper than %d", what, MAX_INDEX_DEPTH);
      struct oci_descriptor d;
      oci_index_select (text, *len, what, NULL, platform, &d);
      free (text);
      text = s->read_manifest (s, &d, len);
      free (*digest);
      *digest = steal_pointer (&d.digest);
      free (media_type);
      media_type = steal_pointer (&d.media_type);
      oci_descriptor_clear (&d);
    }
}

/* The layers not in the layer store yet, every one opened (a registry's downloaded and
 * verified into the cache) before the create starts: a failed or interrupted pull touches
 * no store, and a resumed one finds its partial download. A layer already in the store
 * (by its diff_id) is not opened at all: its blob may be gone from the download cache. */
struct apply
{
  const char *what;
  struct image_source *s;
  const struct oci_manifest *m;
  char **diff_ids; /* the config's, one per layer; NULL for a pull (everything opened) */
  struct source *layers;
  size_t n_layers;
  const char *workdir;
  const struct extract_opts *xopts;
};

static void
apply_open (struct apply *a, struct image_source *s, const struct oci_manifest *m,
            char **diff_ids, const char *workdir, const struct extract_opts *xopts)
{
  if (m->n_layers > OCI_MAX_LAYERS)
    die ("%s: %zu layers, over the limit of %d", s->what, m->n_layers, OCI_MAX_LAYERS);
  if (diff_ids != NULL && strv_length (diff_ids) != m->n_layers)
    die ("%s: %zu layers but %zu diff_ids in the config", s->what, m->n_layers,
         strv_length (diff_ids));
  *a = (struct apply) { .what = s->what, .s = s, .m = m, .diff_ids = diff_ids,
                        .n_layers = m->n_layers, .workdir = workdir, .xopts = xopts,
                        .layers = xcalloc (m->n_layers + 1, sizeof *a->layers) };
  for (size_t i = 0; i < m->n_layers; i++)
    {
      a->layers[i].fd = -1;
      if (diff_ids == NULL || !layer_present (digest_hex (diff_ids[i])))
        {
          s->open_blob (s, &m->layers[i], &a->layers[i]);
          verbose ("layer %zu/%zu: %s", i + 1, m->n_layers, a->layers[i].description);
        }
      else
        verbose ("layer %zu/%zu: %s in the layer store", i + 1, m->n_layers, diff_ids[i]);
    }
}

static void
apply_clear (struct apply *a)
{
  for (size_t i = 0; i < a->n_layers; i++)
    source_clear (&a->layers[i]);
  free (a->layers);
}

/* The image's WorkingDir must exist, as docker and podman make it (mkdir_p_beneath). */
static void
make_workdir (int rootfd, const char *what, const char *workdir)
{
  if (mkdir_p_beneath (rootfd, workdir) < 0)
    die_with_error ("%s: cannot create the WorkingDir %s in the root", what, workdir);
}

void
oci_layers_ensure (struct image_source *s, const struct oci_manifest *m, char **diff_ids,
                   struct source *blobs, const struct extract_opts *xopts,
                   char (*hexes)[SHA256_HEX_LEN + 1])
{
  /* The trees below each layer, top first: where its hard links to lower files point. */
  char **lowers = xcalloc (m->n_layers + 1, sizeof *lowers);
  for (size_t i = 0; i < m->n_layers; i++)
    {
      /* In the store when the create started, but a `cache clean` removed it since: the
       * blob is needed after all. */
      if (blobs[i].fd < 0 && !layer_present (digest_hex (diff_ids[i])))
        s->open_blob (s, &m->layers[i], &blobs[i]);
      struct extract_opts x = *xopts;
      x.lowers = lowers;
      layer_ensure (&blobs[i], diff_ids[i], &x, hexes[i]);
      memmove (lowers + 1, lowers, i * sizeof *lowers);
      lowers[0] = layer_tree_path (hexes[i]);
    }
  strv_free (lowers);
}

static void
apply_ensure (char (*hexes)[SHA256_HEX_LEN + 1], void *data)
{
  struct apply *a = data;
  oci_layers_ensure (a->s, a->m, a->diff_ids, a->layers, a->xopts, hexes);
}

static const char *
apply_unpack (struct extractor *x, size_t i, void *data)
{
  struct apply *a = data;
  /* In the store when the create started, but a `cache clean` removed it since. */
  if (a->layers[i].fd < 0)
    a->s->open_blob (a->s, &a->m->layers[i], &a->layers[i]);
  extract_layer (x, &a->layers[i]);
  return a->layers[i].description;
}

static void
apply_finish (int rootfd, void *data)
{
  struct apply *a = data;
  if (a->workdir != NULL)
    make_workdir (rootfd, a->what, a->workdir);
}

/* A's layers as store_create_from_layers takes them. */
static struct image_layers
apply_layers (struct apply *a)
{
  return (struct image_layers) { .n = a->n_layers, .diff_ids = a->diff_ids,
                                 .ensure = apply_ensure, .unpack = apply_unpack,
                                 .finish = apply_finish, .data = a };
}

/* From the manifest TEXT (digest DIGEST) to a devroot NAME. */
static void
create_from_manifest (const char *name, const char *ref, const char *transport,
                      struct image_source *s, const char *text, size_t len, const char *digest,
                      const struct extract_opts *xopts)
{
  cleanup_free char *what = xasprintf ("%s: manifest %s", s->what, digest);
  struct oci_manifest m;
  oci_manifest_parse (text, len, what, &m);
  size_t clen;
  cleanup_free char *config = s->read_document (s, &m.config, &clen);
  cleanup_free char *cwhat = xasprintf ("%s: config %s", s->what, m.config.digest);
  struct meta_image image = { .ref = xstrdup (ref), .digest = xstrdup (digest),
                              .transport = transport != NULL ? xstrdup (transport) : NULL };
  cleanup_strv char **diff_ids = NULL;
  oci_config_parse (config, clen, cwhat, &image, &diff_ids);
  struct apply a;
  apply_open (&a, s, &m, diff_ids, image.workdir, xopts);
  struct image_layers l = apply_layers (&a);
  store_create_from_layers (name, ref, digest_hex (digest), &image, &l, xopts);
  apply_clear (&a);
  meta_clear (&(struct meta) { .image = image });
  oci_manifest_clear (&m);
}

/* ---- oci:DIR[:TAG], an OCI image layout: oci-layout, index.json, blobs/sha256/HEX. */

struct layout
{
  int dirfd;
};

static int
open_layout_blob (struct image_source *s, const struct oci_descriptor *d)
{
  struct layout *l = s->data;
  cleanup_free char *rel = xasprintf ("blobs/sha256/%s", digest_hex (d->digest));
  /* No symlink as the blob itself: a layout is a tree of plain files. */
  int fd = openat (l->dirfd, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    die_with_error ("%s: cannot open blob %s", s->what, rel);
  struct stat st;
  if (fstat (fd, &st) < 0)
    die_with_error ("%s: cannot stat blob %s", s->what, rel);
  if (!S_ISREG (st.st_mode))
    die ("%s: blob %s is not a regular file", s->what, rel);
  if ((uint64_t) st.st_size != d->size)
    die ("%s: blob %s is %llu bytes, its descriptor says %llu", s->what, rel,
         (unsigned long long) st.st_size, (unsigned long long) d->size);
  return fd;
}

static char *
layout_read_document (struct image_source *s, const struct oci_descriptor *d, size_t *len)
{
  cleanup_fd int fd = open_layout_blob (s, d);
  return oci_read_document_fd (fd, d, s->what, len);
}

static void
layout_open_blob (struct image_source *s, const struct oci_descriptor *d, struct source *src)
{
  src->fd = open_layout_blob (s, d);
  src->description = xasprintf ("%s: layer %s", s->what, d->digest);
  src->origin = xstrdup (d->digest);
  src->expected_sha256 = xstrdup (digest_hex (d->digest));
  src->length = 0;
}

static void
create_from_layout (const char *name, const char *arg, const char *recorded,
                    const struct oci_ref *ref, const struct oci_platform *platform,
                    const struct extract_opts *xopts)
{
  struct layout l = { .dirfd = open (ref->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
  if (l.dirfd < 0)
    die_with_error ("%s: cannot open the image layout %s", arg, ref->path);
  struct image_source s = { .what = arg, .read_document = layout_read_document,
                            .read_manifest = layout_read_document,
                            .open_blob = layout_open_blob, .data = &l };
  if (faccessat (l.dirfd, LAYOUT_MARKER, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
    die ("%s: %s is not an OCI image layout (no %s file)", arg, ref->path, LAYOUT_MARKER);
  size_t len;
  cleanup_free char *index = load_file_at (l.dirfd, LAYOUT_INDEX, OCI_DOCUMENT_MAX + 1, &len);
  if (index == NULL && errno == EFBIG)
    die ("%s: %s is over the limit of %d bytes", arg, LAYOUT_INDEX, OCI_DOCUMENT_MAX);
  if (index == NULL)
    die_with_error ("%s: cannot read %s/%s", arg, ref->path, LAYOUT_INDEX);
  cleanup_free char *iwhat = xasprintf ("%s: %s", arg, LAYOUT_INDEX);
  if (ref->tag == NULL)
    oci_layout_require_tag (index, len, iwhat);
  struct oci_descriptor d;
  oci_index_select (index, len, iwhat, ref->tag, platform, &d);
  char *text = layout_read_document (&s, &d, &len);
  cleanup_free char *digest = steal_pointer (&d.digest);
  text = resolve_manifest (&s, text, &len, &digest, d.media_type, platform);
  oci_descriptor_clear (&d);
  create_from_manifest (name, recorded, NULL, &s, text, len, digest, xopts);
  free (text);
  close (l.dirfd);
}

/* ---- docker-archive:FILE[:REPO:TAG]: a tar holding manifest.json, a config and
 * uncompressed layer tars. The archive is scanned once for its members' offsets; layers
 * are then read in place (a window of the file), so nothing is copied. */

struct member
{
  char *name;
  off_t offset;
  uint64_t size;
};

struct archive_index
{
  int fd;
  struct member *members;
  size_t n;
  char **diff_ids;   /* the config's, one per layer */
  char **layers;     /* the members holding them */
  char *config_name; /* the member holding the config */
  char *config_digest;
};

static void
archive_index_build (struct archive_index *ai, const char *what)
{
  /* A plain tar only: the layers are read in place, which a compressed file forbids (the
   * reader's decompressors are there to recognise one and say so). */
  struct archive *a = extract_tar_reader ();
  if (archive_read_open_fd (a, ai->fd, ARCHIVE_BLOCK) != ARCHIVE_OK)
    die ("%s: %s", what, archive_why (a));
  for (;;)
    {
      struct archive_entry *e;
      int r = archive_read_next_header (a, &e);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        die ("%s: %s", what, archive_why (a));
      if (archive_filter_count (a) > 1)
        die ("%s: a compressed archive: decompress it first (docker save writes a plain tar)",
             what);
      if (archive_entry_filetype (e) != AE_IFREG || archive_entry_hardlink (e) != NULL
          || archive_entry_sparse_count (e) > 0 || archive_entry_pathname (e) == NULL)
        continue;
      ai->members = xrealloc (ai->members, (ai->n + 1) * sizeof *ai->members);
      ai->members[ai->n++] = (struct member) {
        .name = xstrdup (archive_entry_pathname (e)),
        /* The data starts where the header ends: what the reader consumed so far. */
        .offset = (off_t) archive_filter_bytes (a, 0),
        .size = (uint64_t) archive_entry_size (e),
      };
    }
  archive_read_free (a);
}

static const struct member *
archive_member (const struct archive_index *ai, const char *name, const char *what)
{
  /* docker save names members without "./"; tar may add it. */
  for (size_t i = 0; i < ai->n; i++)
    {
      const char *m = ai->members[i].name;
      if (str_has_prefix (m, "./"))
        m += 2;
      if (strcmp (m, name) == 0)
        return &ai->members[i];
    }
  die ("%s: the archive has no member '%s'", what, name);
}

static char *
archive_read_member (const struct archive_index *ai, const char *name, const char *what,
                     size_t *len)
{
  const struct member *m = archive_member (ai, name, what);
  if (m->size > OCI_DOCUMENT_MAX)
    die ("%s: %s is %llu bytes, over the limit of %d", what, name, (unsigned long long) m->size,
         OCI_DOCUMENT_MAX);
  char *text = xmalloc (m->size + 1);
  ssize_t n = pread (ai->fd, text, m->size, m->offset);
  if (n < 0 || (uint64_t) n != m->size)
    die ("%s: cannot read member '%s': %s", what, name, n < 0 ? strerror (errno) : "truncated");
  text[m->size] = '\0';
  *len = m->size;
  return text;
}

static void
archive_open_blob (struct image_source *s, const struct oci_descriptor *d, struct source *src)
{
  struct archive_index *ai = s->data;
  /* The layer is named by its diff_id (an archive's layers are plain tars): the same
   * diff_id twice is the same bytes twice, so the first member holding it will do. */
  const char *name = NULL;
  for (size_t i = 0; ai->diff_ids[i] != NULL && name == NULL; i++)
    if (strcmp (ai->diff_ids[i], d->digest) == 0)
      name = ai->layers[i];
  if (name == NULL)
    die ("%s: no layer %s in the archive", s->what, d->digest);
  const struct member *m = archive_member (ai, name, s->what);
  /* A file description of its own: every layer is opened before any is read, and a dup()
   * would share one file offset among them all (the last lseek would win). */
  cleanup_free char *self = xasprintf ("/proc/self/fd/%d", ai->fd);
  src->fd = open (self, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (src->fd < 0 || lseek (src->fd, m->offset, SEEK_SET) < 0)
    die_with_error ("%s: cannot read member '%s'", s->what, name);
  src->description = xasprintf ("%s: layer %s", s->what, name);
  src->origin = xstrdup (name);
  src->expected_sha256 = xstrdup (digest_hex (d->digest));
  /* An empty member would read to the end of the file: one byte, sure to mismatch. */
  src->length = m->size > 0 ? m->size : 1;
}

/* Open the archive REF names, index it and read the image's config (REF's tag picks the
 * image): into AI (its diff_ids and layer members set); returns the config's text. */
static char *
archive_open_image (struct archive_index *ai, const char *arg, const struct oci_ref *ref,
                    size_t *len)
{
  ai->fd = open (ref->path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (ai->fd < 0)
    die_with_error ("%s: cannot open %s", arg, ref->path);
  struct stat st;
  if (fstat (ai->fd, &st) < 0 || !S_ISREG (st.st_mode))
    die ("%s: %s is not a regular file", arg, ref->path);
  archive_index_build (ai, arg);

  cleanup_free char *mwhat = xasprintf ("%s: %s", arg, ARCHIVE_MANIFEST);
  cleanup_free char *manifest = archive_read_member (ai, ARCHIVE_MANIFEST, mwhat, len);
  oci_archive_manifest_parse (manifest, *len, mwhat, ref->tag, &ai->config_name, &ai->layers);
  cleanup_free char *cwhat = xasprintf ("%s: %s", arg, ai->config_name);
  char *config = archive_read_member (ai, ai->config_name, cwhat, len);
  ai->config_digest = oci_digest_of (config, *len);
  return config;
}

static void
archive_index_clear (struct archive_index *ai)
{
  for (size_t i = 0; i < ai->n; i++)
    free (ai->members[i].name);
  free (ai->members);
  strv_free (ai->diff_ids);
  strv_free (ai->layers);
  free (ai->config_name);
  free (ai->config_digest);
  if (ai->fd >= 0)
    close (ai->fd);
}

static void
create_from_archive (const char *name, const char *arg, const char *recorded,
                     const struct oci_ref *ref, const struct extract_opts *xopts)
{
  struct archive_index ai = { .fd = -1 };
  size_t len;
  cleanup_free char *config = archive_open_image (&ai, arg, ref, &len);
  cleanup_free char *cwhat = xasprintf ("%s: %s", arg, ai.config_name);
  /* The image ID: the config's digest names a docker save image as a manifest's would. */
  struct meta_image image = { .ref = xstrdup (recorded), .digest = xstrdup (ai.config_digest) };
  oci_config_parse (config, len, cwhat, &image, &ai.diff_ids);
  size_t n = strv_length (ai.layers);
  if (strv_length (ai.diff_ids) != n)
    die ("%s: %zu layers but %zu diff_ids in the config", arg, n, strv_length (ai.diff_ids));

  struct oci_manifest m = { .n_layers = n, .layers = xcalloc (n + 1, sizeof *m.layers) };
  for (size_t i = 0; i < n; i++)
    m.layers[i] = (struct oci_descriptor) { .digest = xstrdup (ai.diff_ids[i]) };
  struct image_source s = { .what = arg, .open_blob = archive_open_blob, .data = &ai };
  struct apply a;
  apply_open (&a, &s, &m, ai.diff_ids, image.workdir, xopts);
  struct image_layers l = apply_layers (&a);
  store_create_from_layers (name, recorded, digest_hex (image.digest), &image, &l, xopts);
  apply_clear (&a);
  meta_clear (&(struct meta) { .image = image });
  oci_manifest_clear (&m);
  archive_index_clear (&ai);
}

/* ---- push's base, read again where create read it (oci-source.h). */

static char *
archive_read_config (struct image_source *s, const struct oci_descriptor *d, size_t *len)
{
  struct archive_index *ai = s->data;
  if (strcmp (d->digest, ai->config_digest) != 0)
    die ("%s: the archive has no config %s", s->what, d->digest);
  char *text = archive_read_member (ai, ai->config_name, s->what, len);
  oci_check_digest (s->what, d->digest, text, *len);
  return text;
}

/* A docker save image as the Docker schema 2 manifest a registry would serve for it: its
 * layers are the archive's plain tars, named by their diff_ids. */
static char *
archive_manifest (struct archive_index *ai, const char *what, size_t config_len, size_t *len)
{
  json_t *layers = json_array ();
  for (size_t i = 0; ai->layers[i] != NULL; i++)
    {
      const struct member *m = archive_member (ai, ai->layers[i], what);
      json_array_append_new (layers, json_pack ("{s:s, s:s, s:I}", "mediaType",
                                                "application/vnd.docker.image.rootfs.diff.tar",
                                                "digest", ai->diff_ids[i], "size",
                                                (json_int_t) m->size));
    }
  json_t *root = json_pack ("{s:i, s:s, s:{s:s, s:s, s:I}, s:o}", "schemaVersion", 2,
                            "mediaType", "application/vnd.docker.distribution.manifest.v2+json",
                            "config", "mediaType",
                            "application/vnd.docker.container.image.v1+json", "digest",
                            ai->config_digest, "size", (json_int_t) config_len, "layers",
                            layers);
  char *text = root != NULL ? json_dumps (root, JSON_COMPACT) : NULL;
  json_decref (root);
  if (text == NULL)
    die ("%s: cannot write JSON", what);
  *len = strlen (text);
  return text;
}

char *
oci_local_base_open (struct image_source *s, const struct oci_ref *ref, const char *digest,
                     size_t *len)
{
  if (ref->kind == OCI_REF_LAYOUT)
    {
      struct layout *l = xcalloc (1, sizeof *l);
      l->dirfd = open (ref->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (l->dirfd < 0)
        die_with_error ("%s: cannot open the image layout %s", s->what, ref->path);
      s->read_document = s->read_manifest = layout_read_document;
      s->open_blob = layout_open_blob;
      s->data = l;
      /* By the digest create recorded, whatever the tag names now: its size is the file's,
       * its bytes are checked against the digest. */
      cleanup_free char *rel = xasprintf ("blobs/sha256/%s", digest_hex (digest));
      struct stat st;
      if (fstatat (l->dirfd, rel, &st, AT_SYMLINK_NOFOLLOW) < 0)
        die_with_error ("%s: cannot find its manifest %s in %s", s->what, digest, ref->path);
      cleanup_free char *copy = xstrdup (digest);
      struct oci_descriptor d = { .digest = copy, .size = (uint64_t) st.st_size };
      return layout_read_document (s, &d, len);
    }
  struct archive_index *ai = xcalloc (1, sizeof *ai);
  ai->fd = -1;
  s->read_document = s->read_manifest = archive_read_config;
  s->open_blob = archive_open_blob;
  s->data = ai;
  size_t clen;
  cleanup_free char *config = archive_open_image (ai, s->what, ref, &clen);
  if (strcmp (ai->config_digest, digest) != 0)
    die ("%s: the archive's image is not the one the root was made from (config %s, not %s)",
         s->what, ai->config_digest, digest);
  struct meta_image image = { 0 };
  oci_config_parse (config, clen, s->what, &image, &ai->diff_ids);
  meta_clear (&(struct meta) { .image = image });
  if (strv_length (ai->diff_ids) != strv_length (ai->layers))
    die ("%s: %zu layers but %zu diff_ids in the config", s->what, strv_length (ai->layers),
         strv_length (ai->diff_ids));
  return archive_manifest (ai, s->what, clen, len);
}

void
oci_local_base_close (struct image_source *s)
{
  if (s->open_blob == layout_open_blob)
    {
      struct layout *l = s->data;
      close (l->dirfd);
    }
  else
    archive_index_clear (s->data);
  free (s->data);
  s->data = NULL;
}

/* ---- docker://: the registry (registry.c). */

static void
create_from_registry (const char *name, const char *arg, const struct oci_ref *ref,
                      const struct oci_platform *platform, const struct oci_opts *o,
                      const struct extract_opts *xopts)
{
  struct image_source s = { .what = arg };
  registry_open (&s, ref, o);
  size_t len;
  cleanup_free char *digest = NULL, *mt = NULL;
  char *text = registry_first_manifest (&s, ref, &len, &digest, &mt);
  text = resolve_manifest (&s, text, &len, &digest, mt, platform);
  /* How it was pulled, for a push that reads it again (a mirror serves Docker Hub's images
   * over https whatever --insecure-http says). */
  bool http = o->insecure_http && (o->hub_mirror == NULL
                                   || strcmp (ref->registry, DOCKER_HUB_REGISTRY) != 0);
  create_from_manifest (name, arg, http ? "http" : NULL, &s, text, len, digest, xopts);
  free (text);
  registry_close (&s);
}

void
oci_create (const char *name, const char *arg, const struct oci_opts *o,
            const struct extract_opts *xopts)
{
  struct oci_ref ref;
  const char *why;
  if (oci_ref_parse (arg, &ref, &why) < 0)
    die ("create: invalid image reference '%s': %s", arg, why);
  struct oci_platform platform;
  oci_platform_parse (o->platform, &platform);
  cleanup_free char *recorded = oci_ref_recorded (arg, &ref);
  if (ref.kind == OCI_REF_LAYOUT)
    create_from_layout (name, arg, recorded, &ref, &platform, xopts);
  else if (ref.kind == OCI_REF_ARCHIVE)
    create_from_archive (name, arg, recorded, &ref, xopts);
  else
    create_from_registry (name, arg, &ref, &platform, o, xopts);
  oci_platform_clear (&platform);
  oci_ref_clear (&ref);
}

void
oci_pull (const char *arg, const struct oci_opts *o)
{
  struct oci_ref ref;
  const char *why;
  if (oci_ref_parse (arg, &ref, &why) < 0)
    die ("fetch: invalid image reference '%s': %s", arg, why);
  if (ref.kind != OCI_REF_DOCKER)
    die ("fetch --from %s: only a docker:// image is fetched (create reads the others where "
         "they are)", arg);
  struct oci_platform platform;
  oci_platform_parse (o->platform, &platform);
  struct image_source s = { .what = arg };
  registry_open (&s, &ref, o);
  size_t len;
  cleanup_free char *digest = NULL, *mt = NULL;
  char *text = registry_first_manifest (&s, &ref, &len, &digest, &mt);
  cleanup_free char *pinned = xasprintf ("docker://%s/%s@%s", ref.registry, ref.repository,
                                         digest);
  /* The index (if any) and the manifest for the platform are cached on the way. */
  text = resolve_manifest (&s, text, &len, &digest, mt, &platform);
  cleanup_free char *what = xasprintf ("%s: manifest %s", arg, digest);
  struct oci_manifest m;
  oci_manifest_parse (text, len, what, &m);
  free (text);
  size_t clen;
  free (s.read_document (&s, &m.config, &clen));
  struct apply a;
  apply_open (&a, &s, &m, NULL, NULL, NULL);
  apply_clear (&a);
  oci_manifest_clear (&m);
  registry_close (&s);
  oci_platform_clear (&platform);
  oci_ref_clear (&ref);
  printf ("%s\n", pinned);
}
