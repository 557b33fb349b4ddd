/* The layer store (see layers.h); the flat roots made from it are flatten.c's. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/layers/clone.h"
#include "store/cache/digest.h"
#include "store/interrupt.h"
#include "store/layers/layers.h"

#define LAYERS_DIR_MODE 0700
#define DIGEST_PREFIX "sha256:"

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

/* Hold the layer HEX (overlay_layer_hold) until this process exits (the fd is never
 * closed), so `cache clean` leaves it alone while this create copies from it. False when
 * it is not there (or a clean removed it meanwhile). */
static bool
layer_hold (const char *hex)
{
  cleanup_free char *diff_id = xasprintf (DIGEST_PREFIX "%s", hex);
  return overlay_layer_hold (diff_id) >= 0; /* fd kept: the lock lasts until exit */
}

bool
layer_present (const char *hex)
{
  cleanup_free char *dir = layer_dir (hex);
  cleanup_free char *meta = xasprintf ("%s/meta.json", dir);
  return access (meta, F_OK) == 0;
}

size_t
layers_stored (char *const *layers)
{
  size_t n = 0;
  for (; layers != NULL && *layers != NULL; layers++)
    {
      const char *l = *layers;
      n += str_has_prefix (l, DIGEST_PREFIX) && is_hex64 (l + strlen (DIGEST_PREFIX))
           && layer_present (l + strlen (DIGEST_PREFIX));
    }
  return n;
}

void
layer_check_diff_id (const char *what, const char *want, const char *got)
{
  if (strcmp (want, got) != 0)
    die ("%s: diff_id mismatch: the image's config says " DIGEST_PREFIX "%s, the uncompressed "
         "layer is " DIGEST_PREFIX "%s", what, want, got);
}

uint64_t
layer_size (const char *hex)
{
  cleanup_free char *diff_id = xasprintf (DIGEST_PREFIX "%s", hex);
  return overlay_layer_size (diff_id);
}

/* The layer a plain tarball whose SHA-256 is AHEX was unpacked into, if it is kept. */
bool
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
  /* An index only: without it the next create unpacks again, so a failure is a warning. */
  if (mkdir_p (adir, LAYERS_DIR_MODE) < 0 || atomic_symlink (AT_FDCWD, link, hex) < 0)
    warn ("cannot record the layer of %s in %s: %s", ahex, adir, strerror (errno));
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

/* Remove the layer just unpacked (staging, locked by *SFD) whose digest HEX is stored: in
 * a child of its own, which holds the lock until it is done, so that the create goes on at
 * once (a large tree takes seconds to delete) and no other create takes the directory for
 * debris meanwhile. A child killed half-way leaves debris the next create or cache clean
 * removes (remove_debris). Where no child can be made (or threads run), here and now. */
static void
drop_duplicate (const char *hex, int *sfd)
{
  verbose ("layer %s is stored already: removing the copy just unpacked (%s) in the background",
           hex, staging);
  fflush (stderr);
  /* A fork of a threaded process may find malloc's lock held: only a single thread forks. */
  struct stat task;
  pid_t pid = stat ("/proc/self/task", &task) == 0 && task.st_nlink == 3 ? fork () : -1;
  if (pid == 0)
    {
      /* Away from the terminal's signals and the caller's wait; nothing of die()'s. */
      setsid ();
      if (nice (10) < 0 && errno != 0)
        errno = 0;
      _exit (rm_rf_at (AT_FDCWD, staging) < 0 ? 1 : 0);
    }
  if (pid < 0 && rm_rf_at (AT_FDCWD, staging) < 0)
    warn ("cannot remove %s: %s", staging, strerror (errno));
  free (staging);
  staging = NULL;
  close (steal_fd (sfd));
}

/* Whether a file in the directory FROM can be cloned by reference into the directory TO
 * (one filesystem that shares extents): two unnamed one-byte files (O_TMPFILE: nothing to
 * clean up), one FICLONE. */
static bool
can_clone (int from_dir, int to_dir)
{
  cleanup_fd int from = openat (from_dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  cleanup_fd int to = openat (to_dir, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
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

  verbose ("%s: unpacking a new layer into %s", src->description, staging);
  struct extract_opts opts = *xopts;
  opts.overlay_form = true;
  /* Where roots will clone the layer's files (FICLONE writes back each source file's dirty
   * pages before sharing them), start that writeback as each file is written. */
  opts.start_writeback = can_clone (sfd, sfd);
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
  if (want != NULL)
    layer_check_diff_id (src->description, want, res.diff_id);
  memcpy (hex, res.diff_id, SHA256_HEX_LEN + 1);
  if (archive_hex != NULL)
    memcpy (archive_hex, res.sha256, SHA256_HEX_LEN + 1);
  write_layer_meta (sfd, hex, res.size_bytes);

  cleanup_free char *final = layer_dir (hex);
  interrupt_check ();
  if (tree_place (staging, final) == 0)
    {
      /* In place: the lock becomes this create's shared hold (layer_hold), kept to exit. */
      if (flock (sfd, LOCK_SH) < 0)
        die_with_error ("cannot lock %s", final);
      steal_fd (&sfd);
      free (staging);
      staging = NULL;
      return;
    }
  /* The layer was stored already (a stream's digest is known only once it is read, or
   * another create unpacked it first): use that one, drop ours. */
  if (errno != EEXIST && errno != ENOTEMPTY)
    die_with_error ("cannot move %s into place as %s", staging, final);
  drop_duplicate (hex, &sfd);
  if (!layer_hold (hex))
    die ("layer %s: removed (by a cache clean?) as it was put in place: try again", hex);
}

/* One unpack of a digest at a time: a create that finds another unpacking the same layer
 * waits for it and takes its layer, instead of unpacking it again beside it (eight tasks of
 * a cold Slurm step each unpacked the same image: bench/slurm-jobs). KIND and HEX name the
 * digest ("diff", a diff_id; "archive", a plain tarball's bytes). The lock goes with the
 * returned fd, or with the process when it dies; waiting is interruptible (interrupt.h). */
static int
unpack_lock (const char *kind, const char *hex, const char *what)
{
  cleanup_free char *dir = layers_dir ();
  cleanup_free char *locks = xasprintf ("%s/locks", dir);
  cleanup_free char *path = xasprintf ("%s/%s-%s", locks, kind, hex);
  if (mkdir_p (locks, LAYERS_DIR_MODE) < 0)
    die_with_error ("cannot create %s", locks);
  int fd = open (path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0)
    die_with_error ("cannot open %s", path);
  for (bool said = false; flock (fd, LOCK_EX | LOCK_NB) < 0;)
    {
      if (errno != EWOULDBLOCK && errno != EINTR)
        die_with_error ("cannot lock %s", path);
      if (!said)
        verbose ("%s: another create is unpacking its layer: waiting for it", what);
      said = true;
      interrupt_check ();
      nanosleep (&(struct timespec) { .tv_nsec = 50 * 1000 * 1000 }, NULL);
    }
  return fd;
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
  if (!layer_hold (want))
    {
      cleanup_fd int lock = unpack_lock ("diff", want, blob->description);
      if (!layer_hold (want)) /* nor made by a create we waited for */
        {
          layer_unpack (blob, want, xopts, hex, NULL);
          return;
        }
    }
  memcpy (hex, want, SHA256_HEX_LEN + 1);
}

bool
layer_find_archive (struct source *src, char hex[SHA256_HEX_LEN + 1],
                    char archive_hex[SHA256_HEX_LEN + 1])
{
  archive_hex[0] = '\0';
  /* Bytes the cache hashed from this very fd just before (a template, a URL), or none at
   * all (fd -1: a template whose layer the catalogue's digest found), are not read (again)
   * when their layer is stored: the root is that layer. */
  if (src->verified && src->expected_sha256 != NULL && archive_layer (src->expected_sha256, hex))
    {
      memcpy (archive_hex, src->expected_sha256, SHA256_HEX_LEN + 1);
      verbose ("%s: sha256:%s is layer sha256:%s, kept before: not read again",
               src->description, archive_hex, hex);
      return true;
    }
  if (src->fd < 0)
    die ("%s: layer of sha256:%s no longer in the layer store", src->description,
         src->expected_sha256 != NULL ? src->expected_sha256 : "?");
  /* A regular file is hashed first (reading is much cheaper than unpacking) to find the
   * layer a create from the same bytes made; a mismatch with the digest it must have is
   * refused here, as the extractor would. */
  struct stat st;
  if (fstat (src->fd, &st) < 0 || !S_ISREG (st.st_mode) || src->length != 0)
    return false;
  if (sha256_fd (src->fd, UINT64_MAX, archive_hex) < 0)
    die_with_error ("%s: read error", src->description);
  if (lseek (src->fd, 0, SEEK_SET) < 0)
    die_with_error ("%s: cannot rewind", src->description);
  if (src->expected_sha256 != NULL && strcmp (src->expected_sha256, archive_hex) != 0)
    die ("%s: SHA-256 mismatch: expected %s, got %s", src->description, src->expected_sha256,
         archive_hex);
  return archive_layer (archive_hex, hex);
}

void
layer_unpack_archive (struct source *src, const struct extract_opts *xopts,
                      char hex[SHA256_HEX_LEN + 1], char archive_hex[SHA256_HEX_LEN + 1])
{
  cleanup_fd int lock = -1; /* that digest's, while it is unpacked (unpack_lock) */
  if (archive_hex[0] != '\0')
    {
      lock = unpack_lock ("archive", archive_hex, src->description);
      if (archive_layer (archive_hex, hex)) /* the create we waited for made it */
        return;
    }
  layer_unpack (src, NULL, xopts, hex, archive_hex);
  archive_layer_record (archive_hex, hex);
}

void
layer_ensure_archive (struct source *src, const struct extract_opts *xopts,
                      char hex[SHA256_HEX_LEN + 1], char archive_hex[SHA256_HEX_LEN + 1])
{
  if (!layer_find_archive (src, hex, archive_hex))
    layer_unpack_archive (src, xopts, hex, archive_hex);
}

bool
layers_clone_into (int rootfd)
{
  cleanup_free char *dir = layers_dir ();
  if (mkdir_p (dir, LAYERS_DIR_MODE) < 0)
    die_with_error ("cannot create %s", dir);
  cleanup_fd int fd = open (dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot open %s", dir);
  return can_clone (fd, rootfd);
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
