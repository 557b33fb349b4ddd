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
 * Formats: the tar family only (ustar, pax, GNU, v7): a rootfs is a tarball, and the other
 * format parsers (zip, rar, 7z, iso9660, cpio ...) would only add attack surface. Filters:
 * none, gzip, bzip2, xz/lzma, zstd, lz4 and compress, all in-library (no external helper
 * program is ever spawned); gzip and lz4 are decoded here with zlib and liblz4, which
 * verify the checksums libarchive skips (gunzip.h, unlz4.h). Memory stays flat: data is streamed block by block; only the
 * list of directories (for the final fixups) grows with the archive.
 */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/roots.h"
#include "common/util.h"
#include "store/digest.h"
#include "store/extract.h"
#include "store/gunzip.h"
#include "store/interrupt.h"
#include "store/unlz4.h"

#define READ_BLOCK_SIZE (64 * 1024)
#define DIR_CREATE_MODE 0700       /* while unpacking; the archive's mode comes at the end */
#define IMPLICIT_DIR_MODE 0755     /* parents the archive does not list */
#define ROOT_DEFAULT_MODE 0755     /* when the archive has no "./" entry */
#define MODE_KEPT_BITS (07777 & ~(S_ISUID | S_ISGID))
#define WHITEOUT_PREFIX ".wh."
#define WHITEOUT_META_PREFIX ".wh..wh."
#define WHITEOUT_OPAQUE ".wh..wh..opq"
#define XATTR_USER_PREFIX "user."
/* overlayfs obeys these on a userxattr mount (redirects, opaque dirs): an image's own
 * would steer any unprivileged overlay stacked on the root. */
#define XATTR_OVERLAY_PREFIX "user.overlay."
#define XATTR_CAPABILITY "security.capability"

int
archive_path_normalize (const char *in, char **out, bool *was_absolute, const char **why)
{
  struct strbuf sb = { 0 };
  const char *p = in;

  *was_absolute = (*p == '/');
  while (*p != '\0')
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      size_t len = strcspn (p, "/");
      if (len == 1 && p[0] == '.')
        ;
      else if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          free (sb.str);
          *why = "it contains a '..' component";
          return -1;
        }
      else if (len > NAME_MAX)
        {
          free (sb.str);
          *why = "a path component is longer than NAME_MAX";
          return -1;
        }
      else
        {
          if (sb.len > 0)
            strbuf_append_c (&sb, '/');
          strbuf_append_len (&sb, p, len);
        }
      p += len;
    }
  /* Nothing could use a longer path inside the root, and it bounds the tree's depth (and
   * so the cost of walking it and the fds remove needs). */
  if (sb.len >= PATH_MAX - 1)
    {
      free (sb.str);
      *why = "the path is longer than PATH_MAX";
      return -1;
    }
  *out = strbuf_steal (&sb);
  return 0;
}

struct dir_fixup
{
  char *path;
  mode_t mode;
  struct timespec mtime;
  bool has_mtime;
  size_t depth;
  size_t seq;
  bool removed;  /* a later layer removed or replaced it */
};

/* The paths one layer has created so far: a whiteout hides only what lower layers left. An
 * open-addressing hash set of strings, cleared between layers. */
struct path_set
{
  char **slots;
  size_t n, cap;
};

static size_t
path_hash (const char *s)
{
  size_t h = 14695981039346656037ULL; /* FNV-1a */
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ULL;
  return h;
}

static bool
path_set_has (const struct path_set *set, const char *path)
{
  if (set->cap == 0)
    return false;
  for (size_t i = path_hash (path) & (set->cap - 1); set->slots[i] != NULL;
       i = (i + 1) & (set->cap - 1))
    if (strcmp (set->slots[i], path) == 0)
      return true;
  return false;
}

static void
path_set_add (struct path_set *set, const char *path)
{
  if (path_set_has (set, path))
    return;
  if (2 * (set->n + 1) > set->cap)
    {
      struct path_set bigger = { .cap = set->cap ? 2 * set->cap : 256 };
      bigger.slots = xcalloc (bigger.cap, sizeof *bigger.slots);
      for (size_t i = 0; i < set->cap; i++)
        if (set->slots[i] != NULL)
          {
            size_t j = path_hash (set->slots[i]) & (bigger.cap - 1);
            while (bigger.slots[j] != NULL)
              j = (j + 1) & (bigger.cap - 1);
            bigger.slots[j] = set->slots[i];
          }
      bigger.n = set->n;
      free (set->slots);
      *set = bigger;
    }
  size_t i = path_hash (path) & (set->cap - 1);
  while (set->slots[i] != NULL)
    i = (i + 1) & (set->cap - 1);
  set->slots[i] = xstrdup (path);
  set->n++;
}

static void
path_set_clear (struct path_set *set)
{
  for (size_t i = 0; i < set->cap; i++)
    free (set->slots[i]);
  free (set->slots);
  *set = (struct path_set) { 0 };
}

/* The directory the last walk ended in: most entries share their parent (or a prefix of it)
 * with the entry before, so walks start there instead of at the root. Sound because a
 * directory, once reached without following symlinks, is never renamed or removed during
 * the extraction (a non-directory can never replace one), so its fd still names REL. */
struct dir_cache
{
  char *path; /* relative to the root; "" is the root */
  int fd;
};

/* The compressions decoded here rather than by libarchive, which does not verify their
 * checksums (gunzip.h, unlz4.h); libarchive then reads the plain tar. */
enum decoder_kind
{
  DECODER_NONE,
  DECODER_GZIP,
  DECODER_LZ4,
};

struct decoder
{
  enum decoder_kind kind;
  struct gunzip *gz;
  struct unlz4 *lz4;
};

static void
decoder_start (struct decoder *d, const unsigned char *first, size_t len)
{
  if ((d->gz = gunzip_new (first, len)) != NULL)
    d->kind = DECODER_GZIP;
  else if ((d->lz4 = unlz4_new (first, len)) != NULL)
    d->kind = DECODER_LZ4;
}

static const char *
decoder_name (const struct decoder *d)
{
  return d->kind == DECODER_GZIP ? "gzip" : "lz4";
}

static void
decoder_input (struct decoder *d, const unsigned char *buf, size_t len)
{
  if (d->kind == DECODER_GZIP)
    gunzip_input (d->gz, buf, len);
  else if (d->kind == DECODER_LZ4)
    unlz4_input (d->lz4, buf, len);
}

static ssize_t
decoder_output (struct decoder *d, const unsigned char **out, const char **why)
{
  if (d->kind == DECODER_GZIP)
    return gunzip_output (d->gz, out, why);
  if (d->kind == DECODER_LZ4)
    return unlz4_output (d->lz4, out, why);
  return 0;
}

static bool
decoder_over (const struct decoder *d)
{
  if (d->kind == DECODER_GZIP)
    return gunzip_over (d->gz);
  if (d->kind == DECODER_LZ4)
    return unlz4_over (d->lz4);
  return true;
}

/* -1 with *why if the stream was cut short; the decoder is then done with. */
static int
decoder_finish (struct decoder *d, const char **why)
{
  int r = 0;
  if (d->kind == DECODER_GZIP)
    r = gunzip_finish (d->gz, why);
  else if (d->kind == DECODER_LZ4)
    r = unlz4_finish (d->lz4, why);
  *d = (struct decoder) { .kind = DECODER_NONE };
  return r;
}

/* Extended attributes not restored, for the one warning extract_finish gives. */
enum xattr_drop_kind
{
  DROP_NEVER,      /* not user.* or security.capability: never restored */
  DROP_CAPABILITY, /* security.capability the kernel refused (a plain user) */
  DROP_USER,       /* user.* the kernel or the filesystem refused */
  N_DROP_KINDS,
};

struct xattr_drops
{
  unsigned long count[N_DROP_KINDS];
  char *example[N_DROP_KINDS]; /* the first one: "NAME on 'ENTRY'" */
  int error[N_DROP_KINDS];     /* its errno (0 for DROP_NEVER) */
};

struct extractor
{
  int rootfd;
  const char *desc;        /* the source, for messages */
  const struct extract_opts *opts;
  struct extract_result *result;
  struct dir_fixup *fixups;
  size_t n_fixups, cap_fixups;
  bool warned_absolute;
  bool layer;              /* an OCI layer: whiteouts apply (extract_layer) */
  struct path_set upper;   /* what the current layer created */
  int entry_fd;            /* extract_entry_fd: the current entry's data; else -1 */
  struct path_set skipped; /* device nodes and sockets not created: their hard links follow */
  struct xattr_drops drops;
  /* reading */
  int fd;
  uint64_t remaining;      /* bytes the source may still give */
  struct dir_cache cache;
  struct sha256 hash;
  struct decoder dec;      /* gzip and lz4 are decoded here (they verify what libarchive does not) */
  bool started;
  unsigned char buf[READ_BLOCK_SIZE];
};

/* The next block of the file into x->buf, hashed and counted: its length, 0 at the end,
 * -1 with errno. */
static ssize_t
read_raw (struct extractor *x)
{
  ssize_t n;
  size_t want = x->remaining < sizeof x->buf ? (size_t) x->remaining : sizeof x->buf;
  do
    {
      interrupt_check ();
      n = read (x->fd, x->buf, want);
    }
  while (n < 0 && errno == EINTR);
  if (n > 0)
    x->remaining -= (uint64_t) n;
  if (n <= 0)
    return n;
  sha256_update (&x->hash, x->buf, (size_t) n);
  if (x->opts->progress != NULL)
    x->opts->progress ((uint64_t) n, x->opts->progress_data);
  return n;
}

/* libarchive's read callback: the file as it is, or for gzip and lz4 the tar inside it. */
static ssize_t
read_and_hash (struct archive *a, void *data, const void **buffer)
{
  struct extractor *x = data;
  ssize_t n;
  if (!x->started || x->dec.kind == DECODER_NONE)
    {
      n = read_raw (x);
      if (n < 0)
        {
          archive_set_error (a, errno, "read error");
          return -1;
        }
      if (!x->started)
        {
          x->started = true;
          decoder_start (&x->dec, x->buf, (size_t) n);
        }
      if (x->dec.kind == DECODER_NONE)
        {
          *buffer = x->buf;
          return n;
        }
      decoder_input (&x->dec, x->buf, (size_t) n);
    }
  for (;;)
    {
      const unsigned char *out;
      const char *why;
      ssize_t m = decoder_output (&x->dec, &out, &why);
      if (m < 0)
        {
          archive_set_error (a, EIO, "corrupt %s stream: %s", decoder_name (&x->dec), why);
          return -1;
        }
      if (m > 0)
        {
          *buffer = out;
          return m;
        }
      if (decoder_over (&x->dec))
        return 0; /* trailing bytes: drain_and_hash hashes them */
      n = read_raw (x);
      if (n < 0)
        {
          archive_set_error (a, errno, "read error");
          return -1;
        }
      if (n == 0)
        {
          if (decoder_finish (&x->dec, &why) < 0)
            {
              archive_set_error (a, EIO, "%s", why);
              return -1;
            }
          return 0;
        }
      decoder_input (&x->dec, x->buf, (size_t) n);
    }
}

/* Hash whatever follows the end of the archive too: the digest covers the whole file; and
 * decode the rest of a gzip member or lz4 frame libarchive did not need, so its checksum
 * is verified. */
static void
drain_and_hash (struct extractor *x)
{
  const char *why;
  for (;;)
    {
      if (!decoder_over (&x->dec))
        {
          const unsigned char *out;
          ssize_t m = decoder_output (&x->dec, &out, &why);
          if (m < 0)
            die ("%s: corrupt %s stream: %s", x->desc, decoder_name (&x->dec), why);
          if (m > 0)
            continue;
        }
      ssize_t n = read_raw (x);
      if (n < 0)
        die_with_error ("%s: read error", x->desc);
      if (n == 0)
        break;
      decoder_input (&x->dec, x->buf, (size_t) n);
    }
  if (decoder_finish (&x->dec, &why) < 0)
    die ("%s: %s", x->desc, why);
}

__attribute__((noreturn, format (printf, 3, 4))) static void
refuse (struct extractor *x, const char *entry, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *why = xvasprintf (format, args);
  va_end (args);
  die ("%s: refusing entry '%s': %s", x->desc, entry, why);
}

/* Open the directory holding REL's last component, walking from the root (or from CACHE
 * when it holds a prefix) one component at a time without following symlinks, creating
 * missing directories when CREATE. Returns the fd and points *leaf at the last component
 * inside *copy (caller frees *copy), or -1 with errno and *bad naming the component that
 * failed. */
static int
open_parent (int rootfd, struct dir_cache *cache, const char *rel, bool create, char **copy,
             const char **leaf, const char **bad)
{
  *copy = xstrdup (rel);
  char *comp = *copy;
  const char *last_slash = strrchr (*copy, '/');
  size_t parent_len = last_slash != NULL ? (size_t) (last_slash - *copy) : 0;
  int dfd = -1;
  if (cache != NULL && cache->fd >= 0)
    {
      size_t clen = strlen (cache->path);
      if (clen > 0 && clen <= parent_len && strncmp (*copy, cache->path, clen) == 0
          && (*copy)[clen] == '/')
        {
          /* The cached directory is an ancestor: walk down from it. */
          dfd = dup (cache->fd);
          comp = *copy + clen + 1;
        }
      else if (parent_len > 0 && parent_len < clen && strncmp (*copy, cache->path, parent_len) == 0
               && cache->path[parent_len] == '/')
        {
          /* It is a descendant (directory fixups go deepest first): climb with "..", which
           * stays inside the tree because no directory in it moves. */
          dfd = dup (cache->fd);
          for (const char *p = cache->path + parent_len; dfd >= 0 && *p != '\0'; p++)
            if (*p == '/')
              {
                int up = openat (dfd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                close (dfd);
                dfd = up;
              }
          comp = *copy + parent_len + 1;
        }
    }
  if (dfd < 0)
    {
      dfd = dup (rootfd);
      comp = *copy;
    }
  if (dfd < 0)
    return -1;
  for (char *slash; (slash = strchr (comp, '/')) != NULL; comp = slash + 1)
    {
      *slash = '\0';
      int next = openat (dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT && create)
        {
          if (mkdirat (dfd, comp, IMPLICIT_DIR_MODE) < 0 && errno != EEXIST)
            goto fail;
          next = openat (dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      if (next < 0)
        goto fail;
      close (dfd);
      dfd = next;
      *slash = '/';
    }
  *leaf = comp;
  if (cache != NULL && parent_len > 0)
    {
      int keep = dup (dfd);
      if (keep >= 0)
        {
          if (cache->fd >= 0)
            close (cache->fd);
          free (cache->path);
          cache->path = xasprintf ("%.*s", (int) parent_len, *copy);
          cache->fd = keep;
        }
    }
  return dfd;

fail:
  {
    int errsv = errno;
    *bad = comp;
    close (dfd);
    errno = errsv;
    return -1;
  }
}

/* The target of the symlink at REL in the root, read without following anything; NULL
 * when REL is not a symlink. */
static char *
symlink_target (struct extractor *x, const char *rel)
{
  cleanup_free char *copy = NULL;
  const char *leaf, *bad;
  cleanup_fd int dfd = open_parent (x->rootfd, NULL, rel, false, &copy, &leaf, &bad);
  char buf[PATH_MAX];
  ssize_t n = dfd >= 0 ? readlinkat (dfd, leaf, buf, sizeof buf - 1) : -1;
  if (n <= 0)
    return NULL;
  return xasprintf ("%.*s", (int) n, buf);
}

/* Where the symlink LINK (a path in the root) to TARGET points, as a path in the root;
 * NULL when that would need a '..' (the message then says less). */
static char *
canonical_path (const char *link, const char *target)
{
  const char *slash = strrchr (link, '/');
  cleanup_free char *joined = target[0] == '/' || slash == NULL
    ? xstrdup (target) : xasprintf ("%.*s/%s", (int) (slash - link), link, target);
  char *out;
  bool absolute;
  const char *why;
  if (archive_path_normalize (joined, &out, &absolute, &why) < 0)
    return NULL;
  return out;
}

static int
open_parent_or_refuse (struct extractor *x, const char *entry, const char *rel, bool create,
                       char **copy, const char **leaf)
{
  const char *bad = NULL;
  int dfd = open_parent (x->rootfd, &x->cache, rel, create, copy, leaf, &bad);
  if (dfd >= 0)
    return dfd;
  if (errno == ELOOP || errno == ENOTDIR)
    {
      /* *copy now ends with the component that failed: the path of that symlink. */
      cleanup_free char *target = symlink_target (x, *copy);
      cleanup_free char *canonical = target != NULL ? canonical_path (*copy, target) : NULL;
      if (canonical != NULL)
        refuse (x, entry, "its path goes through '%s', a symlink to '%s', and symlinks are never "
                "followed: repack the archive with canonical paths ('%s/...' rather than "
                "'%s/...')", *copy, target, canonical, *copy);
      if (target != NULL)
        refuse (x, entry, "its path goes through '%s', a symlink to '%s', and symlinks are never "
                "followed: repack the archive with the paths it points to", *copy, target);
      refuse (x, entry, "its path goes through '%s', which is not a directory", bad);
    }
  refuse (x, entry, "cannot open directory '%s': %s", bad, strerror (errno));
}

/* Remove REL (LEAF in DFD), a file or a whole tree a lower layer left: the walk cache may
 * hold a directory inside it, and the directory fixups under it no longer apply. */
static void
remove_lower (struct extractor *x, const char *entry, int dfd, const char *leaf, const char *rel)
{
  if (x->cache.fd >= 0)
    close (x->cache.fd);
  free (x->cache.path);
  x->cache = (struct dir_cache) { .path = NULL, .fd = -1 };
  if (rm_rf_at (dfd, leaf) < 0)
    refuse (x, entry, "cannot remove '%s': %s", rel, strerror (errno));
  size_t len = strlen (rel);
  for (size_t i = 0; i < x->n_fixups; i++)
    if (strncmp (x->fixups[i].path, rel, len) == 0
        && (x->fixups[i].path[len] == '\0' || x->fixups[i].path[len] == '/'))
      x->fixups[i].removed = true;
}

/* Make room for a non-directory REL called LEAF: remove an earlier non-directory of that
 * name (never following it); refuse to replace a directory, unless a lower layer left it. */
static void
clear_for_non_directory (struct extractor *x, const char *entry, const char *rel, int dfd,
                         const char *leaf)
{
  struct stat st;
  if (fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return;
      refuse (x, entry, "cannot stat it: %s", strerror (errno));
    }
  if (S_ISDIR (st.st_mode) && x->layer && !path_set_has (&x->upper, rel))
    {
      remove_lower (x, entry, dfd, leaf, rel);
      return;
    }
  if (S_ISDIR (st.st_mode))
    refuse (x, entry, "it would replace a directory");
  if (unlinkat (dfd, leaf, 0) < 0)
    refuse (x, entry, "cannot replace the earlier entry: %s", strerror (errno));
}

static void
entry_times (struct archive_entry *e, struct timespec times[2])
{
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;
  times[1] = times[0];
  if (archive_entry_atime_is_set (e))
    {
      times[0].tv_sec = archive_entry_atime (e);
      times[0].tv_nsec = archive_entry_atime_nsec (e);
    }
  if (archive_entry_mtime_is_set (e))
    {
      times[1].tv_sec = archive_entry_mtime (e);
      times[1].tv_nsec = archive_entry_mtime_nsec (e);
    }
}

static void
drop_xattr (struct extractor *x, enum xattr_drop_kind kind, const char *name, const char *entry,
            int error)
{
  struct xattr_drops *d = &x->drops;
  if (d->count[kind]++ == 0)
    {
      d->example[kind] = xasprintf ("%s on '%s'", name, entry);
      d->error[kind] = error;
    }
}

/* Set E's extended attributes on FD, the file or directory the entry was created or
 * reopened as (fsetxattr: never a path, so nothing is followed); FD -1 for an entry that
 * cannot carry them (a symlink: the kernel refuses user.* there). The rules are at the top
 * of this file. Call it after the data is written: a write clears security.capability. */
static void
restore_xattrs (struct extractor *x, struct archive_entry *e, const char *entry, int fd)
{
  const char *name;
  const void *value;
  size_t size;
  archive_entry_xattr_reset (e);
  while (archive_entry_xattr_next (e, &name, &value, &size) == ARCHIVE_OK)
    {
      bool capability = strcmp (name, XATTR_CAPABILITY) == 0;
      if (!capability && (!str_has_prefix (name, XATTR_USER_PREFIX)
                          || str_has_prefix (name, XATTR_OVERLAY_PREFIX)))
        {
          drop_xattr (x, DROP_NEVER, name, entry, 0);
          continue;
        }
      enum xattr_drop_kind kind = capability ? DROP_CAPABILITY : DROP_USER;
      if (fd < 0)
        drop_xattr (x, kind, name, entry, EPERM);
      else if (fsetxattr (fd, name, value, size, 0) < 0)
        drop_xattr (x, kind, name, entry, errno);
    }
}

/* The one warning for every extended attribute a create dropped, by kind, each with its
 * first instance and reason. */
static void
warn_xattr_drops (struct extractor *x)
{
  static const char *const why[N_DROP_KINDS] = {
    [DROP_NEVER] = "only user.* (not user.overlay.*) and security.capability are restored",
    [DROP_CAPABILITY] = "a file capability is set only by root in a user namespace, where "
                        "the kernel confines it to that namespace",
    [DROP_USER] = "user.* attributes go on regular files and directories only, on a "
                  "filesystem that supports them",
  };
  struct xattr_drops *d = &x->drops;
  struct strbuf sb = { 0 };
  for (int k = 0; k < N_DROP_KINDS; k++)
    {
      if (d->count[k] == 0)
        continue;
      cleanup_free char *part = d->error[k] != 0
        ? xasprintf ("%s%lu (first %s: %s; %s)", sb.len > 0 ? "; " : "", d->count[k],
                     d->example[k], strerror (d->error[k]), why[k])
        : xasprintf ("%s%lu (first %s; %s)", sb.len > 0 ? "; " : "", d->count[k],
                     d->example[k], why[k]);
      strbuf_append (&sb, part);
    }
  if (sb.len > 0)
    warn ("%s: dropped extended attribute(s): %s", x->desc, sb.str);
  free (sb.str);
}

static void
xattr_drops_clear (struct xattr_drops *d)
{
  for (int k = 0; k < N_DROP_KINDS; k++)
    free (d->example[k]);
  *d = (struct xattr_drops) { 0 };
}

const char *
archive_why (struct archive *a)
{
  const char *s = archive_error_string (a);
  return s != NULL && *s != '\0' ? s : "truncated or corrupt archive";
}

static void
account_bytes (struct extractor *x, const char *entry, uint64_t n)
{
  x->result->size_bytes += n;
  if (x->opts->max_bytes != 0 && x->result->size_bytes > x->opts->max_bytes)
    die ("%s: entry '%s': unpacked size exceeds the limit of %llu bytes (raise it with "
         "--max-size or ENTER_DEVROOT_MAX_ROOT_SIZE)", x->desc, entry,
         (unsigned long long) x->opts->max_bytes);
}

/* Write the entry's data blocks into FD at their offsets; the file's size so far. */
static la_int64_t
write_entry_data (struct extractor *x, struct archive *a, const char *entry, int fd)
{
  la_int64_t end = 0; /* the file was created empty */
  for (;;)
    {
      const void *buf;
      size_t size;
      la_int64_t offset;
      int r = archive_read_data_block (a, &buf, &size, &offset);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        die ("%s: entry '%s': %s", x->desc, entry, archive_why (a));
      const char *p = buf;
      while (size > 0)
        {
          ssize_t n = pwrite (fd, p, size, (off_t) offset);
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            die_with_error ("%s: cannot write entry '%s'", x->desc, entry);
          p += n;
          size -= (size_t) n;
          offset += n;
        }
      if (offset > end)
        end = offset;
    }
  return end;
}

/* Copy bytes [FROM, TO) of x->entry_fd into OUT at the same offsets. */
static void
copy_entry_range (struct extractor *x, const char *entry, int out, off_t from, off_t to)
{
  for (off_t done = from; done < to;)
    {
      size_t want = to - done < READ_BLOCK_SIZE ? (size_t) (to - done) : READ_BLOCK_SIZE;
      ssize_t n = pread (x->entry_fd, x->buf, want, done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die_with_error ("%s: cannot read entry '%s'", x->desc, entry);
      if (n == 0)
        die ("%s: entry '%s' shrank while being read: stop what runs in the tree, then retry",
             x->desc, entry);
      for (ssize_t w = 0; w < n;)
        {
          ssize_t m = pwrite (out, x->buf + w, (size_t) (n - w), done + w);
          if (m < 0 && errno == EINTR)
            continue;
          if (m < 0)
            die_with_error ("%s: cannot write entry '%s'", x->desc, entry);
          w += m;
        }
      done += n;
    }
}

/* create --from DIR (tree.c): the entry's data from the file the walk opened and checked
 * (x->entry_fd, at its start), never from a path: cloned by reference where the
 * filesystem can (a reflink costs no data), else its data ranges copied (holes stay
 * holes, SEEK_DATA/SEEK_HOLE); never more than the size the walk saw, which the size
 * limit counted. The end of what was written. */
static la_int64_t
copy_entry_fd (struct extractor *x, struct archive_entry *e, const char *entry, int out)
{
  off_t size = archive_entry_size (e);
  struct stat st;
  if (size == 0
      || (ioctl (out, FICLONE, x->entry_fd) == 0 && fstat (out, &st) == 0 && st.st_size == size))
    return size;
  if (ftruncate (out, 0) < 0) /* a clone of a file that grew since: copy SIZE bytes */
    die_with_error ("%s: cannot write entry '%s'", x->desc, entry);
  off_t end = 0;
  while (end < size)
    {
      off_t data = lseek (x->entry_fd, end, SEEK_DATA);
      if ((data < 0 && errno == ENXIO) || data >= size)
        break; /* a hole to the end: extract_regular sizes the file */
      if (data < 0)
        data = end; /* no SEEK_DATA here: copy it all */
      off_t hole = lseek (x->entry_fd, data, SEEK_HOLE);
      if (hole <= data || hole > size)
        hole = size;
      copy_entry_range (x, entry, out, data, hole);
      end = hole;
    }
  return end;
}

/* The entry's mode (set-id bits dropped), extended attributes and times, on FD, the file
 * or FIFO just made; after its data (a write clears a capability). */
static void
set_metadata (struct extractor *x, struct archive_entry *e, const char *entry, int fd)
{
  if (fchmod (fd, archive_entry_perm (e) & MODE_KEPT_BITS) < 0)
    die_with_error ("%s: cannot set the mode of entry '%s'", x->desc, entry);
  restore_xattrs (x, e, entry, fd);
  struct timespec times[2];
  entry_times (e, times);
  if (futimens (fd, times) < 0)
    die_with_error ("%s: cannot set the times of entry '%s'", x->desc, entry);
}

static void
extract_regular (struct extractor *x, struct archive *a, struct archive_entry *e,
                 const char *entry, const char *rel, int dfd, const char *leaf)
{
  clear_for_non_directory (x, entry, rel, dfd, leaf);
  cleanup_fd int fd = openat (dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              0600);
  if (fd < 0)
    refuse (x, entry, "cannot create it: %s", strerror (errno));

  if (archive_entry_size_is_set (e) && archive_entry_size (e) > 0)
    account_bytes (x, entry, (uint64_t) archive_entry_size (e));

  la_int64_t end = x->entry_fd >= 0 ? copy_entry_fd (x, e, entry, fd)
                                    : write_entry_data (x, a, entry, fd);
  /* A sparse file may end in a hole that no data block covers. Only then: on XFS a
   * truncate costs a transaction, and makes close() flush the file's data. */
  if (archive_entry_size_is_set (e) && archive_entry_size (e) != end
      && ftruncate (fd, (off_t) archive_entry_size (e)) < 0)
    die_with_error ("%s: cannot size entry '%s'", x->desc, entry);
  /* Best effort: it only moves work earlier (see extract_opts). */
  if (x->opts->start_writeback && end > 0)
    (void) sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  set_metadata (x, e, entry, fd);
}

/* A FIFO: mkfifoat needs no privilege. Its mode, attributes and times go through an fd
 * (opening a FIFO for reading with O_NONBLOCK never waits for a writer), checked to be
 * the FIFO just made. */
static void
extract_fifo (struct extractor *x, struct archive_entry *e, const char *entry,
              const char *rel, int dfd, const char *leaf)
{
  clear_for_non_directory (x, entry, rel, dfd, leaf);
  if (mkfifoat (dfd, leaf, 0600) < 0)
    refuse (x, entry, "cannot create FIFO: %s", strerror (errno));
  cleanup_fd int fd = openat (dfd, leaf, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISFIFO (st.st_mode))
    refuse (x, entry, "cannot reopen the FIFO just created: %s",
            fd < 0 ? strerror (errno) : "it is not one");
  set_metadata (x, e, entry, fd);
}

static void
extract_symlink (struct extractor *x, struct archive_entry *e, const char *entry,
                 const char *rel, int dfd, const char *leaf)
{
  const char *target = archive_entry_symlink (e);
  if (target == NULL || target[0] == '\0')
    refuse (x, entry, "symlink with an empty target");
  clear_for_non_directory (x, entry, rel, dfd, leaf);
  if (symlinkat (target, dfd, leaf) < 0)
    refuse (x, entry, "cannot create symlink: %s", strerror (errno));
  restore_xattrs (x, e, entry, -1);
  struct timespec times[2];
  entry_times (e, times);
  /* Best effort: some filesystems cannot time a symlink. */
  (void) utimensat (dfd, leaf, times, AT_SYMLINK_NOFOLLOW);
}

static void
extract_hardlink (struct extractor *x, const char *entry, const char *rel, int dfd,
                  const char *leaf, const char *raw_target)
{
  cleanup_free char *target = NULL;
  const char *why;
  bool absolute;
  if (archive_path_normalize (raw_target, &target, &absolute, &why) < 0)
    refuse (x, entry, "hardlink target '%s': %s", raw_target, why);
  if (target[0] == '\0')
    refuse (x, entry, "hardlink to the root directory");
  if (strcmp (target, rel) == 0)
    {
      /* GNU tar stores the second copy of a path listed twice (tar -T) as a hard link to
       * itself: the file is already here, as bsdtar concludes too. */
      struct stat st;
      if (fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
        refuse (x, entry, "hardlink to itself, and no earlier regular file of that name");
      x->result->skipped_self_links++;
      return;
    }

  cleanup_free char *tcopy = NULL;
  const char *tleaf, *bad;
  cleanup_fd int tdfd = open_parent (x->rootfd, &x->cache, target, false, &tcopy, &tleaf, &bad);
  struct stat st;
  if (tdfd < 0 || fstatat (tdfd, tleaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (path_set_has (&x->skipped, target))
        {
          /* A link to a device node or socket that was skipped: skipped with it. */
          x->result->skipped_special++;
          return;
        }
      refuse (x, entry, "hardlink target '%s' is not an earlier entry of the archive", raw_target);
    }
  if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode) && !S_ISFIFO (st.st_mode))
    refuse (x, entry, "hardlink target '%s' is not a regular file, symlink or FIFO", raw_target);

  clear_for_non_directory (x, entry, rel, dfd, leaf);
  /* No AT_SYMLINK_FOLLOW: a link to a symlink is to the symlink itself. */
  if (linkat (tdfd, tleaf, dfd, leaf, 0) < 0)
    refuse (x, entry, "cannot create hardlink: %s", strerror (errno));
}

static void
add_fixup (struct extractor *x, const char *rel, struct archive_entry *e)
{
  if (x->n_fixups == x->cap_fixups)
    {
      x->cap_fixups = x->cap_fixups ? 2 * x->cap_fixups : 64;
      x->fixups = xrealloc (x->fixups, x->cap_fixups * sizeof *x->fixups);
    }
  struct dir_fixup *f = &x->fixups[x->n_fixups];
  *f = (struct dir_fixup) {
    .path = xstrdup (rel),
    .mode = archive_entry_perm (e) & MODE_KEPT_BITS,
    .has_mtime = archive_entry_mtime_is_set (e),
    .seq = x->n_fixups,
  };
  f->mtime.tv_sec = archive_entry_mtime (e);
  f->mtime.tv_nsec = archive_entry_mtime_nsec (e);
  if (rel[0] != '\0')
    {
      f->depth = 1;
      for (const char *p = rel; *p != '\0'; p++)
        f->depth += (*p == '/');
    }
  x->n_fixups++;
}

static void
extract_directory (struct extractor *x, struct archive_entry *e, const char *entry,
                   const char *rel, int dfd, const char *leaf)
{
  struct stat st;
  if (fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (!S_ISDIR (st.st_mode) && unlinkat (dfd, leaf, 0) < 0)
        refuse (x, entry, "cannot replace the earlier entry: %s", strerror (errno));
    }
  else if (errno != ENOENT)
    refuse (x, entry, "cannot stat it: %s", strerror (errno));
  if (mkdirat (dfd, leaf, DIR_CREATE_MODE) < 0 && errno != EEXIST)
    refuse (x, entry, "cannot create directory: %s", strerror (errno));
  add_fixup (x, rel, e);
  if (archive_entry_xattr_count (e) > 0)
    {
      /* Still 0700 and ours until the fixups; O_NOFOLLOW: the directory just made or kept. */
      cleanup_fd int fd = openat (dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        refuse (x, entry, "cannot reopen directory: %s", strerror (errno));
      restore_xattrs (x, e, entry, fd);
    }
}

/* Opaque directory DFD (REL): remove every entry no file of the current layer created,
 * and recurse into the directories it did create, which may hold lower-layer entries. */
static void
clear_opaque (struct extractor *x, const char *entry, int dfd, const char *rel)
{
  cleanup_fd int scan = dup (dfd);
  DIR *d = scan >= 0 ? fdopendir (scan) : NULL;
  if (d == NULL)
    refuse (x, entry, "cannot read directory '%s': %s", rel, strerror (errno));
  scan = -1; /* owned by d now */
  /* The names first: removing while reading a directory may skip entries. */
  char **names = NULL;
  size_t n = 0;
  struct dirent *de;
  while ((errno = 0, de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        names = xrealloc (names, (n + 1) * sizeof *names);
        names[n++] = xstrdup (de->d_name);
      }
  if (errno != 0)
    refuse (x, entry, "cannot read directory '%s': %s", rel, strerror (errno));
  closedir (d);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *child = rel[0] != '\0' ? xasprintf ("%s/%s", rel, names[i])
                                                 : xstrdup (names[i]);
      if (!path_set_has (&x->upper, child))
        remove_lower (x, entry, dfd, names[i], child);
      else
        {
          cleanup_fd int sub = openat (dfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW
                                                      | O_CLOEXEC);
          if (sub >= 0)
            clear_opaque (x, entry, sub, child);
        }
      free (names[i]);
    }
  free (names);
}

/* A whiteout entry ENTRY (REL, whose last component starts with ".wh."): apply it to what
 * the lower layers left (see the top of this file for the rules). */
static void
apply_whiteout (struct extractor *x, const char *entry, const char *rel)
{
  cleanup_free char *copy = NULL;
  const char *leaf, *bad = NULL;
  cleanup_fd int dfd = open_parent (x->rootfd, NULL, rel, false, &copy, &leaf, &bad);
  if (dfd < 0 && errno == ENOENT)
    return; /* no such directory: nothing to remove */
  if (dfd < 0 && (errno == ELOOP || errno == ENOTDIR))
    refuse (x, entry, "whiteout through '%s', which is a symlink or not a directory", bad);
  if (dfd < 0)
    refuse (x, entry, "cannot open directory '%s': %s", bad, strerror (errno));
  size_t parent_len = (size_t) (leaf - copy);
  cleanup_free char *parent = xasprintf ("%.*s", parent_len > 0 ? (int) parent_len - 1 : 0,
                                         copy);
  if (strcmp (leaf, WHITEOUT_OPAQUE) == 0)
    {
      clear_opaque (x, entry, dfd, parent);
      return;
    }
  if (str_has_prefix (leaf, WHITEOUT_META_PREFIX))
    refuse (x, entry, "unsupported whiteout type (aufs metadata)");
  const char *victim = leaf + strlen (WHITEOUT_PREFIX);
  if (victim[0] == '\0' || strcmp (victim, ".") == 0 || strcmp (victim, "..") == 0)
    refuse (x, entry, "whiteout of '%s'", victim[0] == '\0' ? "nothing" : victim);
  cleanup_free char *target = parent[0] != '\0' ? xasprintf ("%s/%s", parent, victim)
                                                : xstrdup (victim);
  struct stat st;
  if (path_set_has (&x->upper, target) || fstatat (dfd, victim, &st, AT_SYMLINK_NOFOLLOW) < 0)
    return; /* created by this layer (kept), or nothing there */
  remove_lower (x, entry, dfd, victim, target);
}

/* Whether REL's last component is a whiteout; refuses one in the middle of the path (a
 * whiteout is a marker, never a directory holding entries). */
static bool
is_whiteout (struct extractor *x, const char *entry, const char *rel)
{
  for (const char *p = rel;; p++)
    {
      const char *slash = strchr (p, '/');
      if (!str_has_prefix (p, WHITEOUT_PREFIX))
        ; /* not this component */
      else if (slash == NULL)
        return true;
      else
        refuse (x, entry, "a path through a whiteout name");
      if (slash == NULL)
        return false;
      p = slash;
    }
}

static void
extract_entry (struct extractor *x, struct archive *a, struct archive_entry *e)
{
  const char *entry = archive_entry_pathname (e);
  if (entry == NULL)
    die ("%s: refusing an entry without a usable name", x->desc);

  cleanup_free char *rel = NULL;
  const char *why;
  bool absolute;
  if (archive_path_normalize (entry, &rel, &absolute, &why) < 0)
    refuse (x, entry, "%s", why);
  if (absolute && !x->warned_absolute)
    {
      warn ("%s: removing leading '/' from member names", x->desc);
      x->warned_absolute = true;
    }

  if (x->layer && is_whiteout (x, entry, rel))
    {
      apply_whiteout (x, entry, rel);
      return;
    }
  const char *hardlink = archive_entry_hardlink (e);
  mode_t type = archive_entry_filetype (e);

  if (rel[0] == '\0')
    {
      /* "./" itself: only a directory may describe the root (umoci CVE-2021-29136). */
      if (hardlink != NULL || type != AE_IFDIR)
        refuse (x, entry, "it would replace the root directory");
      add_fixup (x, rel, e);
      return;
    }

  if (hardlink == NULL && type != AE_IFREG && type != AE_IFDIR && type != AE_IFLNK
      && type != AE_IFIFO)
    {
      /* Character and block devices, sockets: nothing an unprivileged user can (or should)
       * create; counted and reported once, and remembered for the hard links to them. */
      x->result->skipped_special++;
      path_set_add (&x->skipped, rel);
      return;
    }

  cleanup_free char *copy = NULL;
  const char *leaf;
  cleanup_fd int dfd = open_parent_or_refuse (x, entry, rel, true, &copy, &leaf);

  if (hardlink != NULL)
    extract_hardlink (x, entry, rel, dfd, leaf, hardlink);
  else if (type == AE_IFREG)
    extract_regular (x, a, e, entry, rel, dfd, leaf);
  else if (type == AE_IFLNK)
    extract_symlink (x, e, entry, rel, dfd, leaf);
  else if (type == AE_IFIFO)
    extract_fifo (x, e, entry, rel, dfd, leaf);
  else
    extract_directory (x, e, entry, rel, dfd, leaf);

  if (x->layer)
    {
      /* Once it is there (it may replace a lower layer's entry), this layer's own; its
       * parents too: an opaque whiteout must keep a directory this layer wrote into. */
      for (char *slash = strchr (rel, '/'); slash != NULL; slash = strchr (slash + 1, '/'))
        {
          *slash = '\0';
          path_set_add (&x->upper, rel);
          *slash = '/';
        }
      path_set_add (&x->upper, rel);
    }
}

void
extract_entry_fd (struct extractor *x, const char *desc, struct archive_entry *e, int fd)
{
  x->desc = desc;
  x->entry_fd = fd;
  extract_entry (x, NULL, e);
  x->entry_fd = -1;
}

struct archive *
extract_tar_reader (void)
{
  struct archive *a = archive_read_new ();
  if (a == NULL)
    die ("out of memory");
  if (archive_read_support_format_tar (a) != ARCHIVE_OK
      || archive_read_support_filter_gzip (a) != ARCHIVE_OK
      || archive_read_support_filter_bzip2 (a) != ARCHIVE_OK
      || archive_read_support_filter_xz (a) != ARCHIVE_OK
      || archive_read_support_filter_lzma (a) != ARCHIVE_OK
      || archive_read_support_filter_zstd (a) != ARCHIVE_OK
      || archive_read_support_filter_lz4 (a) != ARCHIVE_OK
      || archive_read_support_filter_compress (a) != ARCHIVE_OK)
    die ("libarchive lacks a decompressor it was expected to have: %s",
         archive_why (a));
  return a;
}

struct extractor *
extract_begin (int rootfd, const struct extract_opts *opts, struct extract_result *result)
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

/* Unpack one archive SRC into the extractor's root; its digest goes to HEX. */
static void
unpack_one (struct extractor *x, struct source *src, char hex[SHA256_HEX_LEN + 1])
{
  x->desc = src->description;
  x->fd = src->fd;
  x->remaining = src->length != 0 ? src->length : UINT64_MAX;
  x->started = false;
  x->dec = (struct decoder) { .kind = DECODER_NONE };
  sha256_init (&x->hash);

  struct archive *a = extract_tar_reader ();
  if (archive_read_open (a, x, NULL, read_and_hash, NULL) != ARCHIVE_OK)
    die ("%s: %s", x->desc, archive_why (a));

  unsigned long entries = 0;
  for (;;)
    {
      struct archive_entry *e;
      int r = archive_read_next_header (a, &e);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        die ("%s: %s", x->desc, archive_why (a));
      extract_entry (x, a, e);
      entries++;
    }
  if (archive_read_close (a) != ARCHIVE_OK)
    die ("%s: %s", x->desc, archive_why (a));
  archive_read_free (a);
  /* An image layer may be empty (a tar of nothing but its end blocks); a root may not. */
  if (entries == 0 && !x->layer)
    die ("%s: the archive is empty", x->desc);

  drain_and_hash (x);
  sha256_final (&x->hash, hex);
  if (src->expected_sha256 != NULL && strcmp (src->expected_sha256, hex) != 0)
    die ("%s: SHA-256 mismatch: expected %s, got %s", x->desc, src->expected_sha256, hex);
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
  struct extractor *x = extract_begin (rootfd, opts, result);
  unpack_one (x, src, result->sha256);
  warn_skipped (x, result->skipped_special, result->skipped_self_links);
  return x;
}

void
extract_layer (struct extractor *x, struct source *src)
{
  if (src->expected_sha256 == NULL)
    die ("%s: an image layer needs its digest", src->description);
  x->layer = true;
  path_set_clear (&x->upper);
  unsigned long skipped_before = x->result->skipped_special;
  unsigned long self_links_before = x->result->skipped_self_links;
  char hex[SHA256_HEX_LEN + 1];
  unpack_one (x, src, hex);
  path_set_clear (&x->upper);
  warn_skipped (x, x->result->skipped_special - skipped_before,
                x->result->skipped_self_links - self_links_before);
}

/* Deepest first; a path's fixups together, in the order of their entries. */
static int
compare_fixups (const void *pa, const void *pb)
{
  const struct dir_fixup *a = pa, *b = pb;
  if (a->depth != b->depth)
    return a->depth > b->depth ? -1 : 1;
  int c = strcmp (a->path, b->path);
  if (c != 0)
    return c;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static void
apply_fixup (struct extractor *x, const struct dir_fixup *f)
{
  cleanup_fd int fd = -1;
  if (f->path[0] == '\0')
    fd = openat (x->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  else
    {
      cleanup_free char *copy = NULL;
      const char *leaf, *bad;
      cleanup_fd int dfd = open_parent (x->rootfd, &x->cache, f->path, false, &copy, &leaf, &bad);
      if (dfd >= 0)
        fd = openat (dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (fd < 0)
    die_with_error ("%s: cannot reopen directory '%s' to set its mode", x->desc, f->path);
  if (fchmod (fd, f->mode) < 0)
    die_with_error ("%s: cannot set the mode of directory '%s'", x->desc, f->path);
  if (f->has_mtime)
    {
      struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, f->mtime };
      if (futimens (fd, times) < 0)
        die_with_error ("%s: cannot set the times of directory '%s'", x->desc, f->path);
    }
}

void
extract_finish (struct extractor *x)
{
  /* qsort's array must not be NULL, even when empty (an archive without directories). */
  if (x->n_fixups > 0)
    qsort (x->fixups, x->n_fixups, sizeof *x->fixups, compare_fixups);
  for (size_t i = 0; i < x->n_fixups; i++)
    {
      const struct dir_fixup *f = &x->fixups[i];
      /* Only the last entry of a path: the directory as the tar (or the top layer) left
       * it. Applied twice, the first could make it unreadable to the second's reopen. */
      bool superseded = i + 1 < x->n_fixups && strcmp (x->fixups[i + 1].path, f->path) == 0;
      if (f->path[0] != '\0' && !f->removed && !superseded)
        apply_fixup (x, f);
    }
  warn_xattr_drops (x);
}

void
extract_finish_root (struct extractor *x)
{
  /* Sorted deepest first, so the root's entries come last; the last one wins. */
  const struct dir_fixup *root = NULL;
  for (size_t i = 0; i < x->n_fixups; i++)
    if (x->fixups[i].path[0] == '\0')
      root = &x->fixups[i];
  if (root != NULL)
    apply_fixup (x, root);
  else if (fchmod (x->rootfd, ROOT_DEFAULT_MODE) < 0)
    die_with_error ("cannot set the mode of the new root");
  for (size_t i = 0; i < x->n_fixups; i++)
    free (x->fixups[i].path);
  free (x->fixups);
  if (x->cache.fd >= 0)
    close (x->cache.fd);
  free (x->cache.path);
  sha256_free (&x->hash); /* after sha256_final, a no-op; after a die(), the context */
  path_set_clear (&x->upper);
  path_set_clear (&x->skipped);
  xattr_drops_clear (&x->drops);
  free (x);
}
