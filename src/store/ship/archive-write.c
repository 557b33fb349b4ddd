/* push NAME docker-archive:FILE[:REPO:TAG]: the image as `docker save` writes it, which
 * `docker load`, `podman load` and `skopeo copy docker-archive:` read: one plain tar with
 *
 *   HEX/layer.tar     each layer uncompressed (HEX: its diff_id's), as docker save names them
 *   HEX.json          the config (HEX: its digest's, the image ID)
 *   manifest.json     [{"Config": ..., "RepoTags": [REPO:TAG], "Layers": [...]}]
 *   repositories      {"REPO": {"TAG": top layer's HEX}}, for older readers (with a tag only)
 *
 * Layers arrive compressed (a registry's, push's new one) or not (a docker save base's):
 * each is decompressed into the push's temporary directory and checked against its diff_id
 * there, before anything is written to FILE. The tar is then written to a temporary file
 * beside FILE (entries owned 0:0, mtime 0: the same root gives the same bytes) and renamed
 * over it: a failure leaves FILE as it was. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/util.h"
#include "store/ship/archive-write.h"
#include "store/cache/digest.h"

#define COPY_BLOCK (256 * 1024)
#define DIGEST_PREFIX "sha256:"

struct staged
{
  char *hex;  /* the diff_id's hex digits */
  int fd;     /* the uncompressed tar, unlinked */
  uint64_t size;
};

struct archive_out
{
  char *path;
  char *repo_tag;
  char *tmpdir;
  const char *what;
  struct staged *layers;
  size_t n;
  struct atomic_file out; /* the temporary beside PATH while it is written */
};

struct archive_out *
archive_out_open (const char *path, const char *repo_tag, const char *tmpdir, const char *what)
{
  struct archive_out *a = xcalloc (1, sizeof *a);
  a->path = xstrdup (path);
  a->repo_tag = repo_tag != NULL ? xstrdup (repo_tag) : NULL;
  a->tmpdir = xstrdup (tmpdir);
  a->what = what;
  a->out.fd = -1;
  return a;
}

void
archive_out_close (struct archive_out *a)
{
  for (size_t i = 0; i < a->n; i++)
    {
      free (a->layers[i].hex);
      close (a->layers[i].fd);
    }
  free (a->layers);
  atomic_file_discard (&a->out);
  free (a->path);
  free (a->repo_tag);
  free (a->tmpdir);
  free (a);
}

void
archive_out_abandon (struct archive_out *a)
{
  if (a != NULL)
    atomic_file_discard (&a->out);
}

/* libarchive reading SIZE bytes of FD from OFFSET (a member of a docker save archive, a
 * blob in the cache): pread, so the fd's offset is never moved. */
struct window
{
  int fd;
  off_t offset;
  uint64_t size, done;
  char *buf;
};

static ssize_t
window_read (struct archive *ar, void *data, const void **out)
{
  struct window *w = data;
  size_t want = w->size - w->done < COPY_BLOCK ? (size_t) (w->size - w->done) : COPY_BLOCK;
  if (want == 0)
    return 0;
  ssize_t n;
  do
    n = pread (w->fd, w->buf, want, w->offset + (off_t) w->done);
  while (n < 0 && errno == EINTR);
  if (n <= 0)
    {
      archive_set_error (ar, n < 0 ? errno : EIO, "%s", n < 0 ? strerror (errno) : "truncated");
      return -1;
    }
  w->done += (uint64_t) n;
  *out = w->buf;
  return n;
}

void
archive_out_layer (struct archive_out *a, const char *diff_id, int fd, off_t offset,
                   uint64_t size)
{
  const char *hex = diff_id + strlen (DIGEST_PREFIX);
  for (size_t i = 0; i < a->n; i++)
    if (strcmp (a->layers[i].hex, hex) == 0)
      {
        /* The same layer twice in one image: one member, named twice in Layers. */
        a->layers = xrealloc (a->layers, (a->n + 1) * sizeof *a->layers);
        a->layers[a->n] = (struct staged) { .hex = xstrdup (hex), .fd = dup (a->layers[i].fd),
                                            .size = a->layers[i].size };
        if (a->layers[a->n].fd < 0)
          die_with_error ("%s: dup", a->what);
        a->n++;
        return;
      }
  cleanup_free char *tpath = xasprintf ("%s/layer.XXXXXX", a->tmpdir);
  int out = mkstemp (tpath);
  if (out < 0)
    die_with_error ("%s: cannot create a file in %s", a->what, a->tmpdir);
  unlink (tpath);

  struct window w = { .fd = fd, .offset = offset, .size = size, .buf = xmalloc (COPY_BLOCK) };
  struct archive *ar = archive_read_new ();
  archive_read_support_filter_all (ar);
  archive_read_support_format_raw (ar);
  struct archive_entry *e;
  if (archive_read_open (ar, &w, NULL, window_read, NULL) != ARCHIVE_OK
      || archive_read_next_header (ar, &e) != ARCHIVE_OK)
    die ("%s: layer %s: %s", a->what, diff_id, archive_error_string (ar));
  struct sha256 h;
  sha256_init (&h);
  uint64_t total = 0;
  cleanup_free char *buf = xmalloc (COPY_BLOCK);
  for (;;)
    {
      la_ssize_t n = archive_read_data (ar, buf, COPY_BLOCK);
      if (n < 0)
        die ("%s: layer %s: %s", a->what, diff_id, archive_error_string (ar));
      if (n == 0)
        break;
      sha256_update (&h, buf, (size_t) n);
      if (write_all (out, buf, (size_t) n) < 0)
        die_with_error ("%s: cannot write to %s", a->what, a->tmpdir);
      total += (uint64_t) n;
    }
  archive_read_free (ar);
  free (w.buf);
  char got[SHA256_HEX_LEN + 1];
  sha256_final (&h, got);
  if (strcmp (got, hex) != 0)
    die ("%s: layer %s: its uncompressed bytes have digest sha256:%s", a->what, diff_id, got);
  a->layers = xrealloc (a->layers, (a->n + 1) * sizeof *a->layers);
  a->layers[a->n++] = (struct staged) { .hex = xstrdup (hex), .fd = out, .size = total };
}

static void
add_entry (struct archive *w, struct archive_out *a, const char *name, int fd,
           const char *data, uint64_t size)
{
  struct archive_entry *e = archive_entry_new ();
  archive_entry_set_pathname (e, name);
  archive_entry_set_filetype (e, AE_IFREG);
  archive_entry_set_perm (e, 0644);
  archive_entry_set_size (e, (la_int64_t) size);
  archive_entry_set_mtime (e, 0, 0);
  if (archive_write_header (w, e) != ARCHIVE_OK)
    die ("%s: cannot write %s: %s", a->what, a->out.tmp, archive_error_string (w));
  archive_entry_free (e);
  if (fd < 0)
    {
      if (archive_write_data (w, data, (size_t) size) != (la_ssize_t) size)
        die ("%s: cannot write %s: %s", a->what, a->out.tmp, archive_error_string (w));
      return;
    }
  cleanup_free char *buf = xmalloc (COPY_BLOCK);
  for (uint64_t off = 0; off < size;)
    {
      size_t want = size - off < COPY_BLOCK ? (size_t) (size - off) : COPY_BLOCK;
      ssize_t n = pread (fd, buf, want, (off_t) off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        die ("%s: cannot read a staged layer: %s", a->what, n < 0 ? strerror (errno) : "truncated");
      if (archive_write_data (w, buf, (size_t) n) != n)
        die ("%s: cannot write %s: %s", a->what, a->out.tmp, archive_error_string (w));
      off += (uint64_t) n;
    }
}

static char *
dump (json_t *j, const char *what)
{
  char *s = j != NULL ? json_dumps (j, JSON_COMPACT) : NULL;
  json_decref (j);
  if (s == NULL)
    die ("%s: cannot write JSON", what);
  return s;
}

void
archive_out_finish (struct archive_out *a, const char *config_digest, const char *config,
                    size_t config_len)
{
  cleanup_free char *config_name = xasprintf ("%s.json", config_digest + strlen (DIGEST_PREFIX));
  json_t *layers = json_array ();
  for (size_t i = 0; i < a->n; i++)
    json_array_append_new (layers, json_sprintf ("%s/layer.tar", a->layers[i].hex));
  json_t *tags = json_array ();
  json_t *repos = json_object ();
  if (a->repo_tag != NULL)
    {
      json_array_append_new (tags, json_string (a->repo_tag));
      /* REPO:TAG: the tag follows the last ':' after the last '/' (oci-ref.c added one). */
      const char *colon = strrchr (a->repo_tag, ':');
      cleanup_free char *repo = xasprintf ("%.*s", (int) (colon - a->repo_tag), a->repo_tag);
      if (a->n > 0)
        json_object_set_new (repos, repo, json_pack ("{s:s}", colon + 1, a->layers[a->n - 1].hex));
    }
  cleanup_free char *manifest = dump (json_pack ("[{s:s, s:o, s:o}]", "Config", config_name,
                                                 "RepoTags", tags, "Layers", layers),
                                      a->what);
  cleanup_free char *repositories = dump (repos, a->what);

  if (atomic_file_open (&a->out, AT_FDCWD, a->path, 0644) < 0)
    die_with_error ("%s: cannot create a file beside %s", a->what, a->path);
  int fd = a->out.fd;
  struct archive *w = archive_write_new ();
  if (archive_write_set_format_pax_restricted (w) != ARCHIVE_OK
      || archive_write_set_bytes_in_last_block (w, 1) != ARCHIVE_OK
      || archive_write_open_fd (w, fd) != ARCHIVE_OK)
    die ("%s: cannot write %s: %s", a->what, a->out.tmp, archive_error_string (w));
  for (size_t i = 0; i < a->n; i++)
    {
      bool again = false;
      for (size_t k = 0; k < i; k++)
        again = again || strcmp (a->layers[k].hex, a->layers[i].hex) == 0;
      if (again)
        continue;
      cleanup_free char *name = xasprintf ("%s/layer.tar", a->layers[i].hex);
      add_entry (w, a, name, a->layers[i].fd, NULL, a->layers[i].size);
    }
  add_entry (w, a, config_name, -1, config, config_len);
  add_entry (w, a, "manifest.json", -1, manifest, strlen (manifest));
  if (a->repo_tag != NULL)
    add_entry (w, a, "repositories", -1, repositories, strlen (repositories));
  if (archive_write_close (w) != ARCHIVE_OK)
    die ("%s: cannot write %s: %s", a->what, a->out.tmp, archive_error_string (w));
  archive_write_free (w);
  /* 0644 whatever the umask, as docker save writes it. */
  if (fchmod (fd, 0644) < 0 || atomic_file_commit (&a->out, ATOMIC_FSYNC) < 0)
    die_with_error ("%s: cannot write %s", a->what, a->path);
  atomic_file_discard (&a->out);
}
