/* Unpacking an untrusted rootfs archive into a private directory.
 *
 * Why not archive_write_disk: its SECURE_* checks are path-based (lstat of each prefix,
 * then a path-based open), so they are raceable and have a history of bypasses (libarchive
 * CVE-2016-5418, CVE-2021-31566, CVE-2021-23177). Instead every entry is created relative to
 * a directory fd we hold, walking its parent one component at a time with
 * openat(O_DIRECTORY|O_NOFOLLOW): a single component contains no '/', names are normalised
 * so none is "..", and O_NOFOLLOW refuses a symlink, so no lookup can leave the root or go
 * through a link, on any kernel (openat2's RESOLVE_BENEATH would give the same for the walk
 * but is not needed for it). Final components are created with O_EXCL/mkdirat/symlinkat/
 * linkat, which never follow a symlink either; an existing non-directory is unlinked first
 * (unlinking a symlink removes the link, never its target).
 *
 * Rules: member names are normalised by archive_path_normalize (leading '/' stripped like
 * bsdtar, ".." refused); symlinks are created as they are and never followed; hardlinks may
 * only name a regular file, symlink or FIFO already unpacked (the directory is private and
 * new, so anything in it came from this archive; linkat without AT_SYMLINK_FOLLOW links a
 * symlink itself, as GNU ln does); FIFOs are created; device nodes and sockets are skipped
 * (an unprivileged user cannot create devices, and a socket file means nothing without the
 * program listening on it), and so are hard links to them, with one summary warning; setuid
 * and setgid bits are dropped, sticky kept; ownership is never restored; file times are.
 * Directories are created 0700 and get their own modes and times at the end, deepest
 * first, reopened with the same no-symlink walk (a read-only directory cannot block its
 * children, and a directory later replaced by a symlink cannot redirect the fixup:
 * CVE-2021-31566); a directory listed more than once (in two layers, or twice in one tar)
 * gets one fixup, the last entry's: a second fixup could not reopen a directory the first
 * made unreadable.
 * Extended attributes (restore_xattrs): user.* are set, and security.capability where the
 * kernel takes it (root in a user namespace, where it becomes a namespaced v3 capability
 * that means nothing outside that namespace; a plain user gets EPERM); every other name
 * (trusted.*, other security.*, system.*, user.overlay.*) is dropped. They are set with
 * fsetxattr on the fd the entry was created or reopened through, never by path; what was
 * dropped is said in one warning per create.
 *
 * OCI image layers (extract_begin + extract_layer, one call per layer, in order) go into the
 * same directory with the same rules, plus the image-spec's whiteouts (layer.md):
 *   - ".wh.NAME" removes NAME, file or whole tree, as left by the lower layers; entries of
 *     the same layer are never hidden (the spec: a whiteout applies to lower layers only),
 *     whichever comes first in the tar. ".wh..wh..opq" does the same for every lower-layer
 *     entry of its directory, recursively. Whiteout files never appear in the result.
 *   - A whiteout is resolved with the same no-symlink walk as every other entry: one whose
 *     parent path goes through a symlink or a non-directory is refused (the image is
 *     broken or hostile: umoci CVE-2021-29136 removed files outside the root that way);
 *     one whose parent does not exist, or that names nothing, removes nothing.
 *   - ".wh.", ".wh.." and ".wh..." (a whiteout of nothing, of "." or of "..") are refused, as
 *     is any other ".wh..wh." name (aufs metadata, which no OCI image needs).
 *   - A later layer may replace a lower layer's directory by a file or symlink (the tree is
 *     removed first) and a file by a directory.
 *   - A hardlink may name a file from an earlier layer: everything in the private staging
 *     directory came from this image, as in one archive.
 *   - Absolute symlinks are created as they are: they resolve inside the chroot.
 *   - Each layer's bytes must have the SHA-256 of its descriptor (checked as they stream).
 *
 * The layer store (layers.h, extract_opts.overlay_form) unpacks each layer alone into a
 * tree of its own, where the whiteouts are kept for an overlay or a flattening to apply
 * rather than applied (extract-whiteout.c keep_whiteout: ".wh.NAME" becomes a 0/0
 * character device, ".wh..wh..opq" user.overlay.opaque="y"; one through a lower layer's
 * symlink is still refused, looked up in extract_opts.lowers); user.overlay.* and
 * trusted.overlay.* attributes are dropped as everywhere (never in a layer); a hard link
 * to a lower layer's file becomes a copy of it; and the uncompressed tar stream is hashed
 * (result.diff_id), whatever the compression (extract-read.c).
 *
 * Formats: the tar family only (ustar, pax, GNU, v7): a rootfs is a tarball, and the other
 * format parsers (zip, rar, 7z, iso9660, cpio ...) would only add attack surface. Filters:
 * none, gzip, bzip2, xz/lzma, zstd, lz4 and compress, all in-library (no external helper
 * program is ever spawned); gzip and lz4 are decoded here with zlib and liblz4, which
 * verify the checksums libarchive skips (gunzip.h, unlz4.h). Memory stays flat: data is streamed block by block; only the
 * list of directories (for the final fixups) grows with the archive.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract/extract-internal.h"

/* Errors on the untrusted-input path are returned, not die()d: the message goes to x->error
 * and -1 up to the public entry points below, which die() with it (so the CLI says the same
 * one line), while the fuzzers call the error-returning functions and free everything. */
int
extract_fail_with (struct extractor *x, const char *error, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *message = xvasprintf (format, args);
  va_end (args);
  /* The first error is the one to report: the rest follows from it. One line, whatever
   * an entry's name holds (a newline, an escape), for the fuzzers as for die(). */
  if (x->error == NULL)
    x->error = str_one_line (error != NULL ? xasprintf ("%s: %s", message, error)
                                           : xstrdup (message));
  return -1;
}

const char *
extractor_error (const struct extractor *x)
{
  return x->error;
}

/* The public entry points' end of an error: the one line, then die()'s cleanups. */
static void
die_on_error (struct extractor *x, int r)
{
  if (r < 0)
    die ("%s", x->error);
}

static int
extract_entry (struct extractor *x, struct archive *a, struct archive_entry *e)
{
  const char *entry = archive_entry_pathname (e);
  if (entry == NULL)
    return extract_fail (x, "%s: refusing an entry without a usable name", x->desc);

  cleanup_free char *rel = NULL;
  const char *why;
  bool absolute;
  if (archive_path_normalize (entry, &rel, &absolute, &why) < 0)
    return refuse (x, entry, "%s", why);
  if (absolute && !x->warned_absolute)
    {
      warn ("%s: removing leading '/' from member names", x->desc);
      x->warned_absolute = true;
    }

  if (x->layer)
    {
      int whiteout = is_whiteout (x, entry, rel);
      if (whiteout != 0)
        return whiteout < 0 ? -1 : x->opts->overlay_form ? keep_whiteout (x, entry, rel)
                                                         : apply_whiteout (x, entry, rel);
    }
  const char *hardlink = archive_entry_hardlink (e);
  mode_t type = archive_entry_filetype (e);

  if (rel[0] == '\0')
    {
      /* "./" itself: only a directory may describe the root (umoci CVE-2021-29136). */
      if (hardlink != NULL || type != AE_IFDIR)
        return refuse (x, entry, "it would replace the root directory");
      add_fixup (x, rel, e);
      return 0;
    }

  if (hardlink == NULL && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK
      && type != AE_IFIFO)
    {
      /* Character and block devices, sockets: nothing an unprivileged user can (or should)
       * create; counted and reported once, and remembered for the hard links to them. */
      x->result->skipped_special++;
      path_set_add (&x->skipped, rel);
      return 0;
    }

  cleanup_free char *copy = NULL;
  const char *leaf;
  cleanup_fd int dfd = open_parent_or_refuse (x, entry, rel, true, &copy, &leaf);
  if (dfd < 0)
    return -1;

  int r;
  if (hardlink != NULL)
    r = extract_hardlink (x, entry, rel, dfd, leaf, hardlink);
  else if (type == AE_IFREG)
    r = extract_regular (x, a, e, entry, rel, dfd, leaf);
  else if (type == AE_IFLNK)
    r = extract_symlink (x, e, entry, rel, dfd, leaf);
  else if (type == AE_IFIFO)
    r = extract_fifo (x, e, entry, rel, dfd, leaf);
  else
    r = extract_directory (x, e, entry, rel, dfd, leaf);
  if (r < 0)
    return -1;
  /* Once it is there (it may replace a lower layer's entry), this layer's own. */
  if (x->layer)
    mark_upper (x, rel);
  return 0;
}

void
extract_entry_fd (struct extractor *x, const char *desc, struct archive_entry *e, int fd)
{
  x->desc = desc;
  x->entry_fd = fd;
  int r = extract_entry (x, NULL, e);
  x->entry_fd = -1;
  die_on_error (x, r);
}

struct extractor *
extractor_new (int rootfd, const struct extract_opts *opts, struct extract_result *result)
{
  /* A file-size limit (RLIMIT_FSIZE) must end in one error line and a
   * cleaned-up staging directory, not in SIGXFSZ killing us mid-write:
   * ignored, the write fails with EFBIG and die() cleans up. */
  signal (SIGXFSZ, SIG_IGN);

  struct extractor *x = xcalloc (1, sizeof *x);
  x->rootfd = rootfd;
  x->opts = opts;
  x->result = result;
  x->fd = -1;
  x->entry_fd = -1;
  x->cache = (struct dir_cache) { .path = NULL, .fd = -1 };
  *result = (struct extract_result) { 0 };
  return x;
}

struct extractor *
extract_begin (int rootfd, const struct extract_opts *opts, struct extract_result *result)
{
  return extractor_new (rootfd, opts, result);
}

/* Every entry of the archive A opened on the extractor's source; *ENTRIES counts them. */
static int
extract_entries (struct extractor *x, struct archive *a, unsigned long *entries)
{
  if (archive_read_open (a, x, NULL, read_and_hash, NULL) != ARCHIVE_OK)
    return extract_fail (x, "%s: %s", x->desc, archive_why (a));
  struct archive_entry *e;
  int r;
  while ((r = archive_read_next_header (a, &e)) != ARCHIVE_EOF && r >= ARCHIVE_WARN)
    {
      if (extract_entry (x, a, e) < 0)
        return -1;
      (*entries)++;
    }
  if (r != ARCHIVE_EOF)
    return extract_fail (x, "%s: %s", x->desc, archive_why (a));
  if (archive_read_close (a) != ARCHIVE_OK)
    return extract_fail (x, "%s: %s", x->desc, archive_why (a));
  return 0;
}

int
extractor_unpack (struct extractor *x, struct source *src, char hex[SHA256_HEX_LEN + 1])
{
  x->desc = src->description;
  x->fd = src->fd;
  x->remaining = src->length != 0 ? src->length : UINT64_MAX;
  x->started = false;
  x->dec = NULL;
  sha256_init (&x->hash);
  sha256_init (&x->tar_hash);
  x->pending = 0;

  struct archive *a = extract_tar_reader ();
  unsigned long entries = 0;
  int r = extract_entries (x, a, &entries);
  archive_read_free (a);
  /* An image layer may be empty (a tar of nothing but its end blocks); a root may not. */
  if (r == 0 && entries == 0 && !x->layer)
    r = extract_fail (x, "%s: the archive is empty", x->desc);
  if (r == 0)
    r = drain_and_hash (x);
  if (r < 0)
    {
      const char *why;
      (void) decoder_finish (steal_pointer (&x->dec), &why); /* frees the decoder an error left */
      return -1;
    }
  sha256_final (&x->hash, hex);
  sha256_final (&x->tar_hash, x->result->diff_id);
  if (!x->opts->overlay_form && !x->opts->diff_id)
    x->result->diff_id[0] = '\0'; /* not the uncompressed stream's: never used */
  if (src->expected_sha256 != NULL && strcmp (src->expected_sha256, hex) != 0)
    return extract_fail (x, "%s: SHA-256 mismatch: expected %s, got %s", x->desc,
                         src->expected_sha256, hex);
  return 0;
}

static void
warn_skipped (struct extractor *x, unsigned long special, unsigned long self_links)
{
  if (special > 0)
    warn ("%s: skipped %lu device node(s) or socket(s), or hard link(s) to them: an "
          "unprivileged user cannot create a device node, and a socket is made by the "
          "program that listens on it", x->desc, special);
  if (self_links > 0)
    warn ("%s: skipped %lu duplicate member(s) stored as a hard link to itself (a path "
          "listed twice to tar): the earlier copy is kept", x->desc, self_links);
}

void
extract_warn_skipped (struct extractor *x)
{
  warn_skipped (x, x->result->skipped_special, x->result->skipped_self_links);
}

struct extractor *
extract_archive (int rootfd, struct source *src, const struct extract_opts *opts,
                 struct extract_result *result)
{
  struct extractor *x = extractor_new (rootfd, opts, result);
  die_on_error (x, extractor_unpack (x, src, result->sha256));
  warn_skipped (x, result->skipped_special, result->skipped_self_links);
  return x;
}

int
extractor_layer (struct extractor *x, struct source *src)
{
  if (src->expected_sha256 == NULL)
    return extract_fail (x, "%s: an image layer needs its digest", src->description);
  x->layer = true;
  path_set_clear (&x->upper);
  char hex[SHA256_HEX_LEN + 1];
  int r = extractor_unpack (x, src, hex);
  path_set_clear (&x->upper);
  return r;
}

void
extract_layer (struct extractor *x, struct source *src)
{
  unsigned long skipped_before = x->result->skipped_special;
  unsigned long self_links_before = x->result->skipped_self_links;
  die_on_error (x, extractor_layer (x, src));
  warn_skipped (x, x->result->skipped_special - skipped_before,
                x->result->skipped_self_links - self_links_before);
  /* Named by its layer, as when each layer is unpacked alone (the layer store). */
  warn_xattr_drops (x);
  xattr_drops_clear (&x->drops);
}

void
extract_finish (struct extractor *x)
{
  die_on_error (x, extractor_fix_dirs (x));
  warn_xattr_drops (x);
}

void
extract_finish_root (struct extractor *x)
{
  die_on_error (x, extractor_fix_root (x));
  extractor_free (x);
}

void
extractor_free (struct extractor *x)
{
  for (size_t i = 0; i < x->n_fixups; i++)
    free (x->fixups[i].path);
  free (x->fixups);
  if (x->cache.fd >= 0)
    close (x->cache.fd);
  free (x->cache.path);
  sha256_free (&x->hash); /* after sha256_final, a no-op; after an error, the context */
  sha256_free (&x->tar_hash);
  if (x->inner != NULL)
    archive_read_free (x->inner);
  path_set_clear (&x->upper);
  path_set_clear (&x->skipped);
  xattr_drops_clear (&x->drops);
  free (x->error);
  free (x);
}
