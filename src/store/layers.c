/* The layer store and flat roots made from it (see layers.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "store/clone.h"
#include "store/digest.h"
#include "store/interrupt.h"
#include "store/layers.h"

#define LAYERS_DIR_MODE 0700
#define DIGEST_PREFIX "sha256:"
#define OPAQUE_XATTR "user.overlay.opaque"
/* Deeper trees cannot come out of the extractor (PATH_MAX bounds them); each level of the
 * merge holds two fds. */
#define FLATTEN_MAX_DEPTH 2048

/* The layer being unpacked: removed if the create dies. */
static char *staging;

void
layers_cleanup (void)
{
  if (staging != NULL && rm_rf_at (AT_FDCWD, staging) < 0)
    fprintf (stderr, "%s: cannot remove %s: %s\n", PROGRAM_NAME, staging, strerror (errno));
}

static char *
layers_dir (void)
{
  cleanup_free char *home = paths_xdg_dir ("XDG_CACHE_HOME", ".cache");
  return xasprintf ("%s/enter-devroot/layers", home);
}

static char *
layer_dir (const char *hex)
{
  cleanup_free char *dir = layers_dir ();
  return xasprintf ("%s/sha256/%s", dir, hex);
}

char *
layer_tree_path (const char *hex)
{
  cleanup_free char *dir = layers_dir ();
  return xasprintf ("%s/sha256/%s/tree", dir, hex);
}

static bool
is_hex64 (const char *s)
{
  size_t i = 0;
  for (; s[i] != '\0'; i++)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
      return false;
  return i == SHA256_HEX_LEN;
}

/* Open the layer HEX's directory and take a shared lock on it, held until this process
 * exits (the fd is never closed), so `cache clean` leaves it alone while this create
 * copies from it. False when it is not there (or a clean removed it meanwhile). */
static bool
layer_hold (const char *hex)
{
  cleanup_free char *dir = layer_dir (hex);
  int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  /* A clean removing it holds the lock exclusively: wait for it, then see whether the
   * directory is still there (an rmdir()ed one has no links). */
  if (flock (fd, LOCK_SH) < 0 || fstat (fd, &st) < 0 || st.st_nlink == 0)
    {
      close (fd);
      return false;
    }
  cleanup_free char *meta = xasprintf ("%s/meta.json", dir);
  if (access (meta, F_OK) < 0)
    {
      close (fd);
      return false;
    }
  return true; /* fd kept: the lock lasts until exit */
}

bool
layer_present (const char *hex)
{
  cleanup_free char *dir = layer_dir (hex);
  cleanup_free char *meta = xasprintf ("%s/meta.json", dir);
  return access (meta, F_OK) == 0;
}

uint64_t
layer_size (const char *hex)
{
  cleanup_free char *dir = layer_dir (hex);
  cleanup_free char *meta_path = xasprintf ("%s/meta.json", dir);
  struct meta m = { 0 };
  if (meta_read (meta_path, &m) < 0)
    return 0;
  uint64_t size = m.size_bytes;
  meta_clear (&m);
  return size;
}

/* The layer a plain tarball whose SHA-256 is AHEX was unpacked into, if it is kept. */
static bool
archive_layer (const char *ahex, char hex[SHA256_HEX_LEN + 1])
{
  cleanup_free char *dir = layers_dir ();
  cleanup_free char *link = xasprintf ("%s/archives/%s", dir, ahex);
  char target[SHA256_HEX_LEN + 2];
  ssize_t n = readlink (link, target, sizeof target - 1);
  if (n != SHA256_HEX_LEN)
    return false;
  target[n] = '\0';
  if (!is_hex64 (target) || !layer_hold (target))
    return false;
  memcpy (hex, target, SHA256_HEX_LEN + 1);
  return true;
}

static void
archive_layer_record (const char *ahex, const char *hex)
{
  cleanup_free char *dir = layers_dir ();
  cleanup_free char *adir = xasprintf ("%s/archives", dir);
  cleanup_free char *link = xasprintf ("%s/%s", adir, ahex);
  cleanup_free char *tmp = xasprintf ("%s/.%s.%d", adir, ahex, (int) getpid ());
  /* An index only: without it the next create unpacks again, so a failure is a warning. */
  if (mkdir_p (adir, LAYERS_DIR_MODE) < 0 || (unlink (tmp), symlink (hex, tmp)) < 0
      || rename (tmp, link) < 0)
    {
      warn ("cannot record the layer of %s in %s: %s", ahex, adir, strerror (errno));
      unlink (tmp);
    }
}

static void
write_layer_meta (int dirfd, const char *hex, uint64_t size)
{
  struct strbuf sb = { 0 };
  cleanup_free char *created = format_rfc3339_utc (time (NULL));
  strbuf_appendf (&sb, "{\"diff_id\": \"" DIGEST_PREFIX "%s\", \"size_bytes\": %" PRIu64
                  ", \"created\": \"%s\"}\n", hex, size, created);
  cleanup_free char *text = strbuf_steal (&sb);
  cleanup_fd int fd = openat (dirfd, "meta.json", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 || write_all (fd, text, strlen (text)) < 0)
    die_with_error ("cannot write %s/meta.json", staging);
}

/* Remove the layers being made (.HEX.XXXXXX) that no process is making: debris of a create
 * killed half-way (each maker holds its directory's lock until it is renamed or removed). */
static void
remove_debris (const char *dir)
{
  DIR *d = opendir (dir);
  for (struct dirent *de; d != NULL && (de = readdir (d)) != NULL;)
    if (de->d_name[0] == '.' && strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        cleanup_fd int fd = openat (dirfd (d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd >= 0 && flock (fd, LOCK_EX | LOCK_NB) < 0)
          continue; /* being made right now */
        if (rm_rf_at (dirfd (d), de->d_name) < 0)
          die_with_error ("cannot delete %s/%s", dir, de->d_name);
      }
  if (d != NULL)
    closedir (d);
}

/* Whether the filesystem of DIRFD clones files by reference: two unnamed one-byte files
 * (O_TMPFILE: nothing to clean up), one FICLONE. */
static bool
can_clone (int dirfd)
{
  cleanup_fd int from = openat (dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  cleanup_fd int to = openat (dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  return from >= 0 && to >= 0 && write_all (from, "", 1) == 0 && ioctl (to, FICLONE, from) == 0;
}

/* Unpack SRC into a new layer; WANT: the diff_id it must have (NULL: a plain tarball,
 * unpacked as one archive, no whiteouts). Sets HEX, and ARCHIVE_HEX (the SHA-256 of SRC's
 * bytes) when not NULL. */
static void
layer_unpack (struct source *src, const char *want, const struct extract_opts *xopts,
              char hex[SHA256_HEX_LEN + 1], char *archive_hex)
{
  cleanup_free char *dir = layers_dir ();
  cleanup_free char *sha_dir = xasprintf ("%s/sha256", dir);
  if (mkdir_p (sha_dir, LAYERS_DIR_MODE) < 0)
    die_with_error ("cannot create %s", sha_dir);
  remove_debris (dir);
  /* Locked while it is made, so that another create or `cache clean` removes only what a
   * killed one left (the lock goes with the process); one removed between its mkdtemp and
   * its lock has no links by then: made again. */
  cleanup_fd int sfd = -1;
  for (;;)
    {
      staging = xasprintf ("%s/.%s.XXXXXX", dir,
                           want != NULL ? want : src->expected_sha256 != NULL
                                                   ? src->expected_sha256 : "archive");
      if (mkdtemp (staging) == NULL)
        die_with_error ("cannot create a directory in %s", dir);
      sfd = open (staging, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      struct stat st;
      if (sfd < 0 || flock (sfd, LOCK_EX) < 0 || fstat (sfd, &st) < 0)
        die_with_error ("cannot lock %s", staging);
      if (st.st_nlink > 0)
        break;
      close (steal_fd (&sfd));
      free (staging);
    }
  if (mkdirat (sfd, "tree", 0700) < 0)
    die_with_error ("cannot create %s/tree", staging);
  cleanup_fd int treefd = openat (sfd, "tree", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (treefd < 0)
    die_with_error ("cannot open %s/tree", staging);

  struct extract_opts opts = *xopts;
  opts.overlay_form = true;
  /* Where roots will clone the layer's files (FICLONE writes back each source file's dirty
   * pages before sharing them), start that writeback as each file is written. */
  opts.start_writeback = can_clone (sfd);
  struct extract_result res = { 0 };
  struct extractor *x;
  if (want != NULL)
    {
      x = extract_begin (treefd, &opts, &res);
      extract_layer (x, src);
    }
  else
    x = extract_archive (treefd, src, &opts, &res);
  extract_finish (x);
  /* The tree's root gets its mode now: the staging directory around it is private. */
  extract_finish_root (x);

  if (res.diff_id[0] == '\0')
    die ("%s: the extractor gave no digest of the uncompressed stream", src->description);
  if (want != NULL && strcmp (want, res.diff_id) != 0)
    die ("%s: diff_id mismatch: the image's config says " DIGEST_PREFIX "%s, the uncompressed "
         "layer is " DIGEST_PREFIX "%s", src->description, want, res.diff_id);
  memcpy (hex, res.diff_id, SHA256_HEX_LEN + 1);
  if (archive_hex != NULL)
    memcpy (archive_hex, res.sha256, SHA256_HEX_LEN + 1);
  write_layer_meta (sfd, hex, res.size_bytes);

  cleanup_free char *final = layer_dir (hex);
  interrupt_check ();
  if (rename (staging, final) == 0)
    {
      /* In place: the lock becomes this create's shared hold (layer_hold), kept to exit. */
      if (flock (sfd, LOCK_SH) < 0)
        die_with_error ("cannot lock %s", final);
      steal_fd (&sfd);
      free (staging);
      staging = NULL;
      return;
    }
  /* Another create unpacked the same layer first: use theirs, drop ours. */
  if (errno != EEXIST && errno != ENOTEMPTY)
    die_with_error ("cannot move %s into place as %s", staging, final);
  if (rm_rf_at (AT_FDCWD, staging) < 0)
    warn ("cannot remove %s: %s", staging, strerror (errno));
  free (staging);
  staging = NULL;
  close (steal_fd (&sfd));
  if (!layer_hold (hex))
    die ("layer %s: removed (by a cache clean?) as it was put in place: try again", hex);
}

void
layer_ensure (struct source *blob, const char *diff_id, const struct extract_opts *xopts,
              char hex[SHA256_HEX_LEN + 1])
{
  if (diff_id == NULL)
    {
      char ahex[SHA256_HEX_LEN + 1];
      layer_ensure_archive (blob, xopts, hex, ahex);
      return;
    }
  if (!str_has_prefix (diff_id, DIGEST_PREFIX) || !is_hex64 (diff_id + strlen (DIGEST_PREFIX)))
    die ("%s: diff_id '%s' is not sha256:HEX", blob->description, diff_id);
  const char *want = diff_id + strlen (DIGEST_PREFIX);
  if (layer_hold (want))
    {
      memcpy (hex, want, SHA256_HEX_LEN + 1);
      return;
    }
  layer_unpack (blob, want, xopts, hex, NULL);
}

void
layer_ensure_archive (struct source *src, const struct extract_opts *xopts,
                      char hex[SHA256_HEX_LEN + 1], char archive_hex[SHA256_HEX_LEN + 1])
{
  /* A regular file is hashed first (reading is much cheaper than unpacking) to find the
   * layer a create from the same bytes made; a mismatch with the digest it must have is
   * refused here, as the extractor would. */
  struct stat st;
  if (fstat (src->fd, &st) == 0 && S_ISREG (st.st_mode) && src->length == 0)
    {
      if (sha256_fd (src->fd, UINT64_MAX, archive_hex) < 0)
        die_with_error ("%s: read error", src->description);
      if (lseek (src->fd, 0, SEEK_SET) < 0)
        die_with_error ("%s: cannot rewind", src->description);
      if (src->expected_sha256 != NULL && strcmp (src->expected_sha256, archive_hex) != 0)
        die ("%s: SHA-256 mismatch: expected %s, got %s", src->description,
             src->expected_sha256, archive_hex);
      if (archive_layer (archive_hex, hex))
        return;
    }
  layer_unpack (src, NULL, xopts, hex, archive_hex);
  archive_layer_record (archive_hex, hex);
}

/* ---- Flattening */

struct dir_fix
{
  char *path;
  struct stat st;
  size_t seq;
};

struct flattener
{
  struct cloner c;
  const char *hex; /* the layer being merged, for messages */
  struct dir_fix *fixes;
  size_t n_fixes, cap_fixes;
};

__attribute__((noreturn)) static void
flatten_fail (struct flattener *f, const char *rel)
{
  die_with_error ("cannot copy '%s' of layer %s into the new root", rel[0] ? rel : ".", f->hex);
}

static bool
is_whiteout (const struct stat *st)
{
  return S_ISCHR (st->st_mode) && st->st_rdev == makedev (0, 0);
}

static bool
is_opaque (int dirfd)
{
  char v[2];
  return fgetxattr (dirfd, OPAQUE_XATTR, v, sizeof v) == 1 && v[0] == 'y';
}

/* Remove everything inside DIRFD (what lower layers left in an opaque directory). */
static void
empty_dir (struct flattener *f, int dirfd, const char *rel)
{
  int dfd = dup (dirfd);
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      flatten_fail (f, rel);
    }
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    if (strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
      {
        if (rm_rf_at (dirfd, de->d_name) < 0)
          flatten_fail (f, rel);
        rewinddir (d);
      }
  closedir (d);
}

static void
add_fix (struct flattener *f, const char *rel, const struct stat *st)
{
  if (f->n_fixes == f->cap_fixes)
    {
      f->cap_fixes = f->cap_fixes ? 2 * f->cap_fixes : 64;
      f->fixes = xrealloc (f->fixes, f->cap_fixes * sizeof *f->fixes);
    }
  f->fixes[f->n_fixes] = (struct dir_fix) { xstrdup (rel), *st, f->n_fixes };
  f->n_fixes++;
}

/* Merge the layer directory SRC into the root's directory DST (REL from the root). */
static void
merge_dir (struct flattener *f, int src, int dst, const char *rel, int depth)
{
  if (depth > FLATTEN_MAX_DEPTH)
    {
      errno = ELOOP;
      flatten_fail (f, rel);
    }
  int dfd = dup (src);
  DIR *d = dfd >= 0 ? fdopendir (dfd) : NULL;
  if (d == NULL)
    {
      if (dfd >= 0)
        close (dfd);
      flatten_fail (f, rel);
    }
  struct dirent *de;
  while ((errno = 0, de = readdir (d)) != NULL)
    {
      const char *name = de->d_name;
      if (strcmp (name, ".") == 0 || strcmp (name, "..") == 0)
        continue;
      interrupt_check ();
      cleanup_free char *path = rel[0] ? xasprintf ("%s/%s", rel, name) : xstrdup (name);
      struct stat st, below;
      if (fstatat (src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        flatten_fail (f, path);
      bool exists = fstatat (dst, name, &below, AT_SYMLINK_NOFOLLOW) == 0;
      if (is_whiteout (&st))
        {
          if (exists && rm_rf_at (dst, name) < 0)
            flatten_fail (f, path);
          continue;
        }
      /* A directory its owner cannot read or search (0311, 0000), a file it cannot read:
       * given the permission while it is copied (an overlay's mounter has it through its
       * user namespace; a plain user copying has only this). */
      mode_t need = S_ISDIR (st.st_mode) ? S_IRUSR | S_IXUSR : S_ISREG (st.st_mode) ? S_IRUSR : 0;
      bool opened_up = (st.st_mode & need) != need;
      if (opened_up && fchmodat (src, name, (st.st_mode | need) & 07777, 0) < 0)
        flatten_fail (f, path);
      if (S_ISDIR (st.st_mode))
        {
          cleanup_fd int s = openat (src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (s < 0)
            flatten_fail (f, path);
          if (exists && !S_ISDIR (below.st_mode))
            {
              if (unlinkat (dst, name, 0) < 0)
                flatten_fail (f, path);
              exists = false;
            }
          /* Created 0700: the layers above may still write into it; its own mode and
           * times come at the end (flatten_fixups). */
          if (!exists && mkdirat (dst, name, 0700) < 0)
            flatten_fail (f, path);
          cleanup_fd int t = openat (dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (t < 0)
            flatten_fail (f, path);
          if (exists && is_opaque (s))
            empty_dir (f, t, path);
          merge_dir (f, s, t, path, depth + 1);
          if (clone_xattrs (s, t) < 0)
            flatten_fail (f, path);
          add_fix (f, path, &st);
        }
      else
        {
          if (exists && rm_rf_at (dst, name) < 0)
            flatten_fail (f, path);
          if (clone_entry (&f->c, src, dst, name, &st, path) < 0)
            flatten_fail (f, path);
        }
      if (opened_up && fchmodat (src, name, st.st_mode & 07777, 0) < 0)
        flatten_fail (f, path);
    }
  if (errno != 0)
    flatten_fail (f, rel);
  closedir (d);
}

static int
compare_fix_path (const void *pa, const void *pb)
{
  const struct dir_fix *a = pa, *b = pb;
  int c = strcmp (a->path, b->path);
  return c != 0 ? c : (a->seq > b->seq) - (a->seq < b->seq);
}

static size_t
path_depth (const char *p)
{
  size_t n = 1;
  for (; *p; p++)
    n += *p == '/';
  return n;
}

static int
compare_fix_depth (const void *pa, const void *pb)
{
  const struct dir_fix *a = pa, *b = pb;
  size_t da = path_depth (a->path), db = path_depth (b->path);
  return (da < db) - (da > db); /* deepest first */
}

/* Each directory's mode and times, from the topmost layer that has it, deepest first (a
 * read-only directory cannot block its children's). One a later layer replaced by a file
 * or removed is skipped. */
static void
flatten_fixups (struct flattener *f, int rootfd)
{
  if (f->n_fixes == 0)
    return;
  qsort (f->fixes, f->n_fixes, sizeof *f->fixes, compare_fix_path);
  size_t kept = 0;
  for (size_t i = 0; i < f->n_fixes; i++)
    if (i + 1 < f->n_fixes && strcmp (f->fixes[i].path, f->fixes[i + 1].path) == 0)
      free (f->fixes[i].path);
    else
      f->fixes[kept++] = f->fixes[i];
  f->n_fixes = kept;
  qsort (f->fixes, f->n_fixes, sizeof *f->fixes, compare_fix_depth);
  for (size_t i = 0; i < f->n_fixes; i++)
    {
      const struct dir_fix *x = &f->fixes[i];
      struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
                              .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
                                         | RESOLVE_NO_MAGICLINKS };
      cleanup_fd int fd = (int) syscall (SYS_openat2, rootfd, x->path, &how, sizeof how);
      if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
        continue;
      struct timespec t[2] = { x->st.st_atim, x->st.st_mtim };
      if (fd < 0 || fchmod (fd, x->st.st_mode & 07777) < 0 || futimens (fd, t) < 0)
        die_with_error ("cannot set the mode and times of '%s' in the new root", x->path);
    }
}

uint64_t
layers_flatten (int rootfd, char *const *hexes, size_t n)
{
  struct flattener f = { .c = { .dst_root = rootfd } };
  for (size_t i = 0; i < n; i++)
    {
      f.hex = hexes[i];
      cleanup_free char *tree = layer_tree_path (hexes[i]);
      cleanup_fd int src = open (tree, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (src < 0)
        die_with_error ("cannot open layer %s", tree);
      if (i > 0 && is_opaque (src))
        empty_dir (&f, rootfd, "");
      cloner_forget_links (&f.c);
      merge_dir (&f, src, rootfd, "", 0);
    }
  flatten_fixups (&f, rootfd);
  for (size_t i = 0; i < f.n_fixes; i++)
    free (f.fixes[i].path);
  free (f.fixes);
  cloner_forget_links (&f.c);
  return f.c.bytes;
}

void
layers_root_mode (int rootfd, const char *hex)
{
  cleanup_free char *tree = layer_tree_path (hex);
  struct stat st;
  if (stat (tree, &st) < 0)
    die_with_error ("cannot read the mode of %s", tree);
  struct timespec t[2] = { st.st_atim, st.st_mtim };
  if (fchmod (rootfd, st.st_mode & 07777) < 0 || futimens (rootfd, t) < 0)
    die_with_error ("cannot set the mode and times of the new root");
}

/* ---- cache list, cache clean */

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The layers in the store, sorted. */
static char **
layer_hexes (void)
{
  cleanup_free char *dir = layers_dir ();
  cleanup_free char *sha_dir = xasprintf ("%s/sha256", dir);
  char **names = xcalloc (1, sizeof *names);
  size_t n = 0;
  DIR *d = opendir (sha_dir);
  for (struct dirent *de; d != NULL && (de = readdir (d)) != NULL;)
    if (is_hex64 (de->d_name))
      {
        names = xrealloc (names, (n + 2) * sizeof *names);
        names[n++] = xstrdup (de->d_name);
        names[n] = NULL;
      }
  if (d != NULL)
    closedir (d);
  if (n > 0)
    qsort (names, n, sizeof *names, compare_strings);
  return names;
}

/* The roots and the layers each names in its metadata. */
struct root_layers
{
  char **names;
  char ***layers; /* per root, NULL-terminated "sha256:HEX" (or NULL) */
  size_t n;
};

static void
root_layers_read (struct root_layers *r)
{
  r->names = roots_names ();
  r->n = strv_length (r->names);
  r->layers = xcalloc (r->n + 1, sizeof *r->layers);
  for (size_t i = 0; i < r->n; i++)
    {
      struct meta m;
      if (roots_read_meta (r->names[i], &m))
        r->layers[i] = steal_pointer (&m.layers);
      meta_clear (&m);
    }
}

static void
root_layers_clear (struct root_layers *r)
{
  for (size_t i = 0; i < r->n; i++)
    strv_free (r->layers[i]);
  free (r->layers);
  strv_free (r->names);
}

static bool
root_uses (const struct root_layers *r, size_t i, const char *hex)
{
  for (char **l = r->layers[i]; l != NULL && *l != NULL; l++)
    if (str_has_prefix (*l, DIGEST_PREFIX) && strcmp (*l + strlen (DIGEST_PREFIX), hex) == 0)
      return true;
  return false;
}

void
layers_list (struct strbuf *sb, bool json, bool *first)
{
  cleanup_strv char **hexes = layer_hexes ();
  struct root_layers r = { 0 };
  root_layers_read (&r);
  for (size_t k = 0; hexes[k] != NULL; k++)
    {
      const char *hex = hexes[k];
      if (!layer_present (hex))
        continue;
      uint64_t size = layer_size (hex);
      cleanup_free char *tree = layer_tree_path (hex);
      struct strbuf users = { 0 };
      if (json)
        {
          strbuf_append (sb, *first ? "\n  {" : ",\n  {");
          strbuf_append (sb, "\"layer\": ");
          cleanup_free char *digest = xasprintf (DIGEST_PREFIX "%s", hex);
          json_append_string (sb, digest);
          strbuf_appendf (sb, ", \"size_bytes\": %" PRIu64 ", \"path\": ", size);
          json_append_string (sb, tree);
          strbuf_append (sb, ", \"roots\": [");
          bool any = false;
          for (size_t i = 0; i < r.n; i++)
            if (root_uses (&r, i, hex))
              {
                strbuf_append (sb, any ? ", " : "");
                json_append_string (sb, r.names[i]);
                any = true;
              }
          strbuf_append (sb, "]}");
        }
      else
        {
          for (size_t i = 0; i < r.n; i++)
            if (root_uses (&r, i, hex))
              {
                strbuf_append (&users, users.len > 0 ? " " : "");
                strbuf_append (&users, r.names[i]);
              }
          strbuf_appendf (sb, "%s  %12" PRIu64 "  layer, used by: %s\n", hex, size,
                          users.len > 0 ? users.str : "no root");
        }
      free (users.str);
      *first = false;
    }
  root_layers_clear (&r);
}

void
layers_clean (unsigned long *removed, uint64_t *bytes, unsigned long *kept)
{
  cleanup_free char *dir = layers_dir ();
  cleanup_free char *sha_dir = xasprintf ("%s/sha256", dir);
  cleanup_strv char **hexes = layer_hexes ();
  struct root_layers r = { 0 };
  root_layers_read (&r);
  for (size_t k = 0; hexes[k] != NULL; k++)
    {
      bool used = false;
      for (size_t i = 0; i < r.n && !used; i++)
        used = root_uses (&r, i, hexes[k]);
      cleanup_free char *path = xasprintf ("%s/%s", sha_dir, hexes[k]);
      cleanup_fd int fd = used ? -1 : open (path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      /* A create copying from it holds it shared (layer_hold). */
      if (used || fd < 0 || flock (fd, LOCK_EX | LOCK_NB) < 0)
        {
          (*kept)++;
          continue;
        }
      uint64_t size = layer_size (hexes[k]);
      if (rm_rf_at (AT_FDCWD, path) < 0)
        die_with_error ("cannot delete %s", path);
      (*removed)++;
      *bytes += size;
    }
  root_layers_clear (&r);

  /* Debris: staging directories of interrupted unpacks (.HEX.XXXXXX), and index links
   * whose layer is gone. */
  remove_debris (dir);
  cleanup_free char *adir = xasprintf ("%s/archives", dir);
  DIR *d = opendir (adir);
  for (struct dirent *de; d != NULL && (de = readdir (d)) != NULL;)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      char target[SHA256_HEX_LEN + 2];
      ssize_t n = readlinkat (dirfd (d), de->d_name, target, sizeof target - 1);
      if (n >= 0)
        target[n] = '\0';
      if (n == SHA256_HEX_LEN && is_hex64 (target) && layer_present (target))
        continue;
      if (unlinkat (dirfd (d), de->d_name, 0) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s/%s", adir, de->d_name);
    }
  if (d != NULL)
    closedir (d);
}
