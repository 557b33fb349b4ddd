/* The new layer of a push: what the root changed from its base image's tree.
 *
 * The base image's tree is the layer store's trees of its layers, read as an overlay of them
 * would show it (layer-view.h): nothing is applied again. The root is walked with walk.c
 * (one component at a time from the parent's fd, every file read through the fd the walk
 * checked, a tree changing underneath stops us with one line), in either of two ways:
 *
 * - a whole tree (a flat root, or an overlay root's merged tree when it has no base): an
 *   entry goes into the layer when it is new, of another type, or differs in mode, size,
 *   symlink target or content (compared byte by byte: an mtime can stay the same across an
 *   edit, and a copy of the same bytes is no change). A name of the base that the root no
 *   longer has becomes ".wh.NAME";
 * - an overlay root's upper directory (LAYER_DIFF_UPPER): only what the root changed is
 *   there, so only that is walked and compared (a file copied up unchanged, or create's
 *   passwd line added to the base's file, is no change), and its deletions are said by the
 *   upper itself: a whiteout (0/0 character device) of a name of the base becomes
 *   ".wh.NAME", a directory overlayfs made opaque (user.overlay.opaque="y") over one of the
 *   base is written whole after ".wh..wh..opq". The upper is written by whatever ran in
 *   the root: it is read exactly as a root is (walk.c), its xattr through the fd the walk
 *   opened; devices other than whiteouts, FIFOs and sockets are left out, never opened.
 *
 * Either way a directory present in both is written only when its mode changed or something
 * below it is written (its entry first, as tar readers expect); a directory where the base
 * had something else gets ".wh..wh..opq", and something else where the base had a
 * directory is preceded by ".wh.NAME" (a whiteout applies to the layers below only, so both
 * in one layer are unambiguous).
 *
 * Reproducible as export: entries in byte order, numeric owners 0:0, whole-second mtimes
 * (clamped to $SOURCE_DATE_EPOCH when set), pax-restricted tar, and gzip through zlib with
 * a zero time, no name and a fixed OS byte. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "common/layer-view.h"
#include "common/util.h"
#include "store/cache/digest.h"
#include "store/interrupt.h"
#include "store/ship/layer-diff.h"
#include "store/progress.h"
#include "common/walk.h"

#define COPY_BLOCK (256 * 1024)
#define FILE_MAX_SMALL (16 * 1024 * 1024)

struct level
{
  struct layer_view_dir base; /* this directory in the base (no layers: the base has none) */
  char **names;        /* the base directory's names, sorted (whole trees only) */
  size_t n_names;
  bool *seen;
  bool pending;        /* present in both and not written yet */
  char *path;          /* its path, for a pending entry */
  struct stat st;      /* the root's, for a pending entry */
};

struct differ
{
  const struct export_filter *f;
  const char *what;
  struct archive *a;
  struct archive_entry *entry;
  bool upper;                     /* walking an overlay root's upper directory */
  struct layer_view_dir root_base; /* the base's root, until the walk's root takes it */
  struct level levels[WALK_MAX_DEPTH + 1];
  int tarfd;
  struct sha256 tar_hash;
  char *buf, *buf2;
  char **emitted_links; /* paths of multiply-linked files written, for later names */
  size_t n_emitted_links;
  unsigned long entries;
  struct progress *bar; /* the bytes of the root read */
  uint64_t read;
};

static void
check (struct differ *d, int r, const char *path)
{
  if (r < ARCHIVE_WARN)
    die ("%s: %s: %s", d->what, path, archive_error_string (d->a));
}

static la_ssize_t
tar_write_cb (struct archive *a, void *data, const void *buf, size_t len)
{
  struct differ *d = data;
  sha256_update (&d->tar_hash, buf, len);
  if (write_all (d->tarfd, buf, len) < 0)
    {
      archive_set_error (a, errno, "%s", strerror (errno));
      return -1;
    }
  return (la_ssize_t) len;
}

static int
cmp_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* L's base directory's names (PATH, for messages), for the whiteouts of a whole tree. */
static void
level_load (struct differ *d, struct level *l, const char *path)
{
  if (d->upper)
    return; /* an upper says what it removed */
  char **names = layer_view_names (&l->base, path, d->what);
  l->n_names = strv_length (names);
  l->names = names;
  l->seen = xcalloc (l->n_names + 1, sizeof *l->seen);
}

static void
level_clear (struct level *l)
{
  layer_view_dir_clear (&l->base);
  strv_free (l->names);
  free (l->seen);
  free (l->path);
  *l = (struct level) { 0 };
}

static void
mark_seen (struct level *l, const char *name)
{
  if (l->n_names == 0) /* bsearch may not be handed a NULL array */
    return;
  char **hit = bsearch (&name, l->names, l->n_names, sizeof *l->names, cmp_names);
  if (hit != NULL)
    l->seen[hit - l->names] = true;
}

static void
header (struct differ *d, const char *path, mode_t mode, time_t mtime)
{
  archive_entry_clear (d->entry);
  cleanup_free char *p = xasprintf ("./%s", path);
  archive_entry_set_pathname (d->entry, p);
  archive_entry_set_mode (d->entry, mode);
  archive_entry_set_uid (d->entry, 0);
  archive_entry_set_gid (d->entry, 0);
  archive_entry_set_mtime (d->entry, mtime, 0);
  d->entries++;
}

/* Write the pending directories above depth DEPTH (outermost first). */
static void
flush_parents (struct differ *d, unsigned depth)
{
  for (unsigned i = 1; i < depth; i++)
    {
      struct level *l = &d->levels[i];
      if (!l->pending)
        continue;
      header (d, l->path, l->st.st_mode, export_mtime (d->f, &l->st));
      check (d, archive_write_header (d->a, d->entry), l->path);
      l->pending = false;
    }
}

/* An empty regular file NAME in the directory at PATH: a whiteout. */
static void
write_whiteout (struct differ *d, const char *dir, const char *name, time_t mtime)
{
  cleanup_free char *path = dir[0] != '\0' ? xasprintf ("%s/%s", dir, name) : xstrdup (name);
  header (d, path, S_IFREG | 0644, mtime);
  archive_entry_set_size (d->entry, 0);
  check (d, archive_write_header (d->a, d->entry), path);
}

/* ".wh.NAME" beside E: the base's NAME removed. */
static void
whiteout_beside (struct differ *d, const struct walk_entry *e, time_t mtime)
{
  const char *slash = strrchr (e->path, '/');
  cleanup_free char *dir = slash != NULL ? xasprintf ("%.*s", (int) (slash - e->path), e->path)
                                         : xstrdup ("");
  cleanup_free char *wh = xasprintf (".wh.%s", e->name);
  write_whiteout (d, dir, wh, mtime);
}

/* N more bytes of the root read. */
static void
pushed_block (size_t n, void *data)
{
  struct differ *d = data;
  interrupt_check ();
  d->read += n;
  progress_update (d->bar, d->read, 0);
}

/* Whether FD (from the root) and the base's regular file NAME in BASEFD hold the same
 * SIZE bytes. Both are rewound. */
static bool
same_content (struct differ *d, int fd, int basefd, const char *name, off_t size)
{
  cleanup_fd int bfd = openat (basefd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (bfd < 0)
    return false;
  bool same = true;
  for (off_t left = size; left > 0 && same;)
    {
      size_t want = left < COPY_BLOCK ? (size_t) left : COPY_BLOCK;
      ssize_t n = read (fd, d->buf, want);
      if (n <= 0)
        die_with_error ("%s: cannot read a file of the root", d->what);
      ssize_t m = read (bfd, d->buf2, (size_t) n);
      same = m == n && memcmp (d->buf, d->buf2, (size_t) n) == 0;
      left -= n;
      pushed_block ((size_t) n, d);
    }
  if (lseek (fd, 0, SEEK_SET) < 0)
    die_with_error ("%s: cannot rewind a file of the root", d->what);
  return same;
}

static bool
link_emitted (struct differ *d, const char *path)
{
  for (size_t i = 0; i < d->n_emitted_links; i++)
    if (strcmp (d->emitted_links[i], path) == 0)
      return true;
  return false;
}


static void
write_file (struct differ *d, const struct walk_entry *e, const char *content, size_t len,
            bool substituted)
{
  if (substituted)
    {
      archive_entry_set_size (d->entry, (la_int64_t) len);
      check (d, archive_write_header (d->a, d->entry), e->path);
      if (len > 0 && archive_write_data (d->a, content, len) != (la_ssize_t) len)
        die ("%s: %s: %s", d->what, e->path, archive_error_string (d->a));
      return;
    }
  archive_entry_set_size (d->entry, e->st.st_size);
  check (d, archive_write_header (d->a, d->entry), e->path);
  export_copy_data (d->a, e, d->buf, d->what, "pushing", pushed_block, d);
  if (e->st.st_nlink > 1)
    {
      d->emitted_links = xrealloc (d->emitted_links,
                                   (d->n_emitted_links + 1) * sizeof *d->emitted_links);
      d->emitted_links[d->n_emitted_links++] = xstrdup (e->path);
    }
}

/* The directory E, whose base is B (taken). */
static enum walk_step
diff_dir (struct differ *d, const struct walk_entry *e, struct layer_view_entry *b)
{
  struct level *l = &d->levels[e->depth];
  *l = (struct level) { 0 };
  time_t mtime = export_mtime (d->f, &e->st);
  bool in_base = b->kind != LAYER_VIEW_NONE;
  /* An upper's directory that overlayfs made opaque (it replaced the base's): all of it
   * is new. The xattr is read through the fd the walk opened and checked. */
  bool opaque = d->upper && in_base && layer_view_is_opaque (e->fd);
  if (b->kind == LAYER_VIEW_DIR && !opaque)
    {
      l->base = b->dir;
      level_load (d, l, e->path);
      /* Not its mtime: adding a file changes it, and so does what create and
       * entering add (home/USER, the DNS copies), which are not the root's. */
      bool changed = (b->st.st_mode & 07777) != (e->st.st_mode & 07777);
      l->path = xstrdup (e->path);
      l->st = e->st;
      l->pending = true;
      if (changed)
        flush_parents (d, e->depth + 1);
      return WALK_DESCEND;
    }
  layer_view_dir_clear (&b->dir);
  flush_parents (d, e->depth);
  header (d, e->path, e->st.st_mode, mtime);
  check (d, archive_write_header (d->a, d->entry), e->path);
  if (in_base)
    write_whiteout (d, e->path, ".wh..wh..opq", mtime);
  return WALK_DESCEND;
}

static enum walk_step
diff_entry (const struct walk_entry *e, void *data)
{
  struct differ *d = data;
  interrupt_check ();
  unsigned depth = e->depth;
  if (depth == 0)
    {
      /* The root directory itself is not written: an image's root is always there. */
      struct level *l = &d->levels[0];
      *l = (struct level) { .base = d->root_base };
      d->root_base = (struct layer_view_dir) { 0 };
      level_load (d, l, "");
      return WALK_DESCEND;
    }
  struct level *parent = &d->levels[depth - 1];
  mark_seen (parent, e->name);
  if (export_filter_skip (d->f, e))
    return WALK_SKIP;
  bool whiteout = d->upper && layer_view_is_whiteout (&e->st);
  if (!whiteout && !S_ISDIR (e->st.st_mode) && !S_ISREG (e->st.st_mode)
      && !S_ISLNK (e->st.st_mode))
    return WALK_DESCEND; /* FIFOs, sockets, devices: left out, as export does */

  struct layer_view_entry b;
  layer_view_lookup (&parent->base, e->name, e->path, &b, d->what);
  if (S_ISDIR (e->st.st_mode))
    return diff_dir (d, e, &b);
  layer_view_dir_clear (&b.dir);
  bool in_base = b.kind != LAYER_VIEW_NONE;
  bool same_type = in_base && (b.st.st_mode & S_IFMT) == (e->st.st_mode & S_IFMT);
  time_t mtime = export_mtime (d->f, &e->st);
  if (whiteout)
    {
      /* An upper's deletion: of a name the base has (one over nothing removes nothing). */
      if (in_base)
        {
          flush_parents (d, depth);
          whiteout_beside (d, e, mtime);
        }
      return WALK_DESCEND;
    }

  /* Create's and entering's own files (a /dev stand-in, the DNS copies): the base's stays
   * as it is, and none is added where the base has none. */
  if (S_ISREG (e->st.st_mode) && e->first_link == NULL && export_filter_written_empty (d->f, e)
      && (same_type || !in_base))
    return WALK_DESCEND;
  /* userns mode's mount points for the host's resolv.conf and hosts (hostfiles.c creates
   * them empty where the root has none): not the root's either. */
  if (!in_base && S_ISREG (e->st.st_mode) && e->st.st_size == 0
      && (strcmp (e->path, "etc/resolv.conf") == 0 || strcmp (e->path, "etc/hosts") == 0))
    return WALK_DESCEND;
  cleanup_free char *content = NULL;
  size_t len = 0;
  bool substituted = S_ISREG (e->st.st_mode) && e->first_link == NULL
                     && export_filter_substitute (d->f, e, &content, &len);
  if (same_type && S_ISLNK (e->st.st_mode))
    {
      char target[PATH_MAX];
      ssize_t n = readlinkat (b.dirfd, e->name, target, sizeof target - 1);
      if (n >= 0 && (size_t) n == strlen (e->target) && memcmp (target, e->target, (size_t) n) == 0)
        return WALK_DESCEND;
    }
  else if (same_type && substituted)
    {
      size_t blen;
      cleanup_free char *base = load_regular_file_at (b.dirfd, e->name, FILE_MAX_SMALL,
                                                      &blen);
      if (base != NULL && blen == len && memcmp (base, content, len) == 0)
        return WALK_DESCEND;
    }
  else if (same_type && S_ISREG (e->st.st_mode)
           && (e->first_link == NULL || !link_emitted (d, e->first_link))
           && (b.st.st_mode & 07777) == (e->st.st_mode & 07777)
           && b.st.st_size == e->st.st_size
           && same_content (d, e->fd, b.dirfd, e->name, e->st.st_size))
    return WALK_DESCEND;
  flush_parents (d, depth);
  if (in_base && !same_type && S_ISDIR (b.st.st_mode))
    whiteout_beside (d, e, mtime);
  header (d, e->path, e->st.st_mode, mtime);
  if (S_ISLNK (e->st.st_mode))
    {
      archive_entry_set_symlink (d->entry, e->target);
      check (d, archive_write_header (d->a, d->entry), e->path);
    }
  else if (e->first_link != NULL && link_emitted (d, e->first_link))
    {
      cleanup_free char *target = xasprintf ("./%s", e->first_link);
      archive_entry_set_hardlink (d->entry, target);
      archive_entry_set_size (d->entry, 0);
      check (d, archive_write_header (d->a, d->entry), e->path);
    }
  else
    write_file (d, e, content, len, substituted);
  return WALK_DESCEND;
}

static void
diff_leave (const struct walk_entry *e, void *data)
{
  struct differ *d = data;
  struct level *l = &d->levels[e->depth];
  if (e->depth > 0 && !S_ISDIR (e->st.st_mode))
    return;
  if (e->depth > 0 && export_filter_skip (d->f, e))
    return;
  for (size_t i = 0; i < l->n_names; i++)
    if (!l->seen[i])
      {
        flush_parents (d, e->depth + 1);
        cleanup_free char *wh = xasprintf (".wh.%s", l->names[i]);
        write_whiteout (d, e->path, wh, export_mtime (d->f, &e->st));
      }
  level_clear (l);
}

/* Compress the tar at IN into OUT with zlib: a gzip header with no name and time 0. */
static void
gzip_file (const char *what, int in, int out, struct sha256 *h, uint64_t *size)
{
  z_stream z = { 0 };
  if (deflateInit2 (&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    die ("%s: cannot set up gzip", what);
  /* zlib's default header: no name, no comment, mtime 0; the OS byte fixed here. */
  gz_header head = { .os = 3 };
  deflateSetHeader (&z, &head);
  cleanup_free unsigned char *ibuf = xmalloc (COPY_BLOCK), *obuf = xmalloc (COPY_BLOCK);
  if (lseek (in, 0, SEEK_SET) < 0)
    die_with_error ("%s: cannot rewind the layer", what);
  *size = 0;
  for (bool end = false; !end;)
    {
      ssize_t n = read (in, ibuf, COPY_BLOCK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die_with_error ("%s: cannot read the layer", what);
      end = n == 0;
      z.next_in = ibuf;
      z.avail_in = (uInt) n;
      do
        {
          z.next_out = obuf;
          z.avail_out = COPY_BLOCK;
          int r = deflate (&z, end ? Z_FINISH : Z_NO_FLUSH);
          if (r == Z_STREAM_ERROR)
            die ("%s: gzip failed", what);
          size_t have = COPY_BLOCK - z.avail_out;
          sha256_update (h, obuf, have);
          if (write_all (out, obuf, have) < 0)
            die_with_error ("%s: cannot write the layer", what);
          *size += have;
        }
      while (z.avail_out == 0);
    }
  deflateEnd (&z);
}

static int
tmpfile_in (const char *dir, const char *what)
{
  int fd = open (dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
  if (fd < 0)
    {
      cleanup_free char *name = xasprintf ("%s/layer.XXXXXX", dir);
      fd = mkstemp (name);
      if (fd >= 0)
        unlink (name);
    }
  if (fd < 0)
    die_with_error ("%s: cannot create a temporary file in %s", what, dir);
  return fd;
}

void
layer_diff (int rootfd, char *const *base, enum layer_diff_mode mode,
            const struct export_filter *f, const char *what, const char *tmpdir,
            struct progress *bar, struct layer_blob *out)
{
  struct differ *d = xcalloc (1, sizeof *d);
  d->bar = bar;
  d->f = f;
  d->what = what;
  d->upper = mode == LAYER_DIFF_UPPER;
  /* The root's level takes it when its entry comes. */
  layer_view_root (&d->root_base, base, strv_length (base), what);
  d->tarfd = tmpfile_in (tmpdir, what);
  sha256_init (&d->tar_hash);
  d->buf = xmalloc (COPY_BLOCK);
  d->buf2 = xmalloc (COPY_BLOCK);
  d->a = archive_write_new ();
  d->entry = archive_entry_new ();
  if (d->a == NULL || d->entry == NULL)
    die ("%s: out of memory", what);
  check (d, archive_write_set_format_pax_restricted (d->a), "the layer");
  check (d, archive_write_set_bytes_in_last_block (d->a, 1), "the layer");
  check (d, archive_write_open (d->a, d, NULL, tar_write_cb, NULL), "the layer");
  walk_tree (rootfd, what, &(struct walk_ops) { .entry = diff_entry, .leave = diff_leave }, d);
  layer_view_dir_clear (&d->root_base);
  check (d, archive_write_close (d->a), "the layer");
  archive_write_free (d->a);
  archive_entry_free (d->entry);
  char hex[SHA256_HEX_LEN + 1];
  sha256_final (&d->tar_hash, hex);
  sha256_free (&d->tar_hash);
  snprintf (out->diff_id, sizeof out->diff_id, "sha256:%s", hex);

  out->fd = tmpfile_in (tmpdir, what);
  struct sha256 h;
  sha256_init (&h);
  gzip_file (what, d->tarfd, out->fd, &h, &out->size);
  sha256_final (&h, hex);
  sha256_free (&h);
  snprintf (out->digest, sizeof out->digest, "sha256:%s", hex);
  out->entries = d->entries;
  close (d->tarfd);
  free_string_array (d->emitted_links, d->n_emitted_links);
  free (d->buf);
  free (d->buf2);
  free (d);
}
