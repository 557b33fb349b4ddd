/* The content-addressed download cache (layout in cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/util.h"
#include "store/cache.h"
#include "store/clone.h"
#include "store/digest.h"
#include "store/interrupt.h"
#include "store/userconfig.h"

#define CACHE_DIR_MODE 0700
#define ORIGIN_MAX_BYTES 8192

void
cache_init (struct cache *c, const char *base)
{
  c->base = xstrdup (base);
  c->sha256 = xasprintf ("%s/sha256", c->base);
  c->origin = xasprintf ("%s/origin", c->base);
  c->partial = xasprintf ("%s/partial", c->base);
  c->locks = xasprintf ("%s/locks", c->base);
}

void
cache_open (struct cache *c)
{
  cleanup_free char *base = config_cache_dir ();
  cache_init (c, base);
  const char *dirs[] = { c->base, c->sha256, c->origin, c->partial, c->locks };
  for (size_t i = 0; i < N_ELEMENTS (dirs); i++)
    if (mkdir_p (dirs[i], CACHE_DIR_MODE) < 0)
      die_with_error ("cannot create cache directory %s", dirs[i]);
}

void
cache_clear (struct cache *c)
{
  free (c->base);
  free (c->sha256);
  free (c->origin);
  free (c->partial);
  free (c->locks);
  *c = (struct cache) { 0 };
}

static int
open_lock (const struct cache *c, const char *key)
{
  cleanup_free char *path = xasprintf ("%s/%s.lock", c->locks, key);
  int fd = open (path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0)
    die_with_error ("cannot open lock file %s", path);
  return fd;
}

/* A write lock on all of FD, owned by the open file description (an OFD lock): an fcntl
 * lock, so NFS carries it to the server and every client sees it (flock may be local to one
 * client on cluster filesystems), yet not lost when another fd of this process on the same
 * file is closed, as a classic POSIX lock would be. The kernel (or, on NFS, the server when
 * the client's lease expires) drops it when its holder dies: a crashed fetch never leaves a
 * stale lock behind. -1 with errno EAGAIN when WAIT is false and someone holds it. A wait
 * ends on SIGINT, SIGTERM or SIGHUP (interrupt.h): a cancelled job waiting for another
 * node's download exits now, not when that download is done. */
static int
lock_whole_file (int fd, bool wait)
{
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
  int r;
  if (wait)
    interrupt_check ();
  while ((r = fcntl (fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l)) < 0 && errno == EINTR)
    interrupt_check ();
  if (r < 0 && errno == EACCES)
    errno = EAGAIN; /* what some systems answer for a held lock */
  return r;
}

int
cache_lock (const struct cache *c, const char *key, bool quiet)
{
  int fd = open_lock (c, key);
  if (lock_whole_file (fd, false) == 0)
    return fd;
  if (errno != EAGAIN)
    die_with_error ("cannot lock %s/%s.lock", c->locks, key);
  if (!quiet)
    fprintf (stderr, "%s: waiting for another process fetching the same file\n", PROGRAM_NAME);
  if (lock_whole_file (fd, true) < 0)
    die_with_error ("cannot lock %s/%s.lock", c->locks, key);
  return fd;
}

int
cache_open_verified (const struct cache *c, const char *hex)
{
  cleanup_free char *path = xasprintf ("%s/%s", c->sha256, hex);
  cleanup_fd int fd = open (path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0 && errno == ENOENT)
    return -1;
  if (fd < 0)
    die_with_error ("cannot open cached file %s", path);
  struct stat st;
  if (fstat (fd, &st) < 0)
    die_with_error ("cannot stat %s", path);
  if (!S_ISREG (st.st_mode))
    die ("cached file %s is not a regular file", path);
  char got[SHA256_HEX_LEN + 1];
  if (sha256_fd (fd, UINT64_MAX, got) < 0)
    die_with_error ("cannot read cached file %s", path);
  if (strcmp (got, hex) != 0)
    {
      warn ("cached file %s is corrupt (its SHA-256 is %s): deleting it", path, got);
      if (unlink (path) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", path);
      return -1;
    }
  if (lseek (fd, 0, SEEK_SET) < 0)
    die_with_error ("cannot rewind %s", path);
  return steal_fd (&fd);
}

void
cache_commit (const struct cache *c, const char *key, const char *hex, const char *origin)
{
  cleanup_free char *from = xasprintf ("%s/%s", c->partial, key);
  cleanup_free char *to = xasprintf ("%s/%s", c->sha256, hex);
  cleanup_free char *validators = xasprintf ("%s/%s.validators", c->partial, key);
  cleanup_free char *origin_path = xasprintf ("%s/%s", c->origin, hex);
  cleanup_free char *origin_tmp = xasprintf ("%s/.%s.tmp", c->origin, hex);

  /* The origin first: a cached file without one is listed as "unknown", never wrong. */
  cleanup_fd int ofd = open (origin_tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                             0600);
  cleanup_free char *line = xasprintf ("%s\n", origin);
  if (ofd < 0 || write_all (ofd, line, strlen (line)) < 0 || rename (origin_tmp, origin_path) < 0)
    die_with_error ("cannot write %s", origin_path);
  if (rename (from, to) < 0)
    die_with_error ("cannot move %s to %s", from, to);
  if (unlink (validators) < 0 && errno != ENOENT)
    die_with_error ("cannot delete %s", validators);
}

static bool
is_hex_name (const char *s)
{
  if (strlen (s) != SHA256_HEX_LEN)
    return false;
  for (const char *p = s; *p != '\0'; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
      return false;
  return true;
}

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The sorted entries of DIR that are digests. */
static char **
list_digests (const char *dir)
{
  DIR *d = opendir (dir);
  if (d == NULL)
    die_with_error ("cannot read %s", dir);
  size_t n = 0;
  char **v = xcalloc (1, sizeof *v);
  struct dirent *de;
  while ((errno = 0, de = readdir (d)) != NULL)
    if (is_hex_name (de->d_name))
      {
        v = xrealloc (v, (n + 2) * sizeof *v);
        v[n++] = xstrdup (de->d_name);
        v[n] = NULL;
      }
  if (errno != 0)
    die_with_error ("cannot read %s", dir);
  closedir (d);
  qsort (v, n, sizeof *v, compare_strings);
  return v;
}

static char *
read_origin (const struct cache *c, const char *hex)
{
  cleanup_free char *path = xasprintf ("%s/%s", c->origin, hex);
  char *s = load_file_at (AT_FDCWD, path, ORIGIN_MAX_BYTES, NULL);
  if (s == NULL)
    return xstrdup ("unknown");
  s[strcspn (s, "\n")] = '\0';
  return s;
}

void
cache_list (const struct cache *c, bool json)
{
  cleanup_strv char **digests = list_digests (c->sha256);
  struct strbuf sb = { 0 };
  if (json)
    strbuf_append_c (&sb, '[');
  else /* even when empty: an empty cache then reads as one, not as a failure */
    strbuf_appendf (&sb, "%-64s  %12s  %s\n", "SHA256", "SIZE", "ORIGIN");
  for (size_t i = 0; digests[i] != NULL; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", c->sha256, digests[i]);
      cleanup_free char *origin = read_origin (c, digests[i]);
      struct stat st;
      if (lstat (path, &st) < 0)
        continue; /* removed by a concurrent clean */
      if (json)
        {
          strbuf_append (&sb, i > 0 ? ",\n  {" : "\n  {");
          strbuf_append (&sb, "\"sha256\": ");
          json_append_string (&sb, digests[i]);
          strbuf_appendf (&sb, ", \"size_bytes\": %jd, \"origin\": ", (intmax_t) st.st_size);
          json_append_string (&sb, origin);
          strbuf_append (&sb, ", \"path\": ");
          json_append_string (&sb, path);
          strbuf_append_c (&sb, '}');
        }
      else
        strbuf_appendf (&sb, "%s  %12jd  %s\n", digests[i], (intmax_t) st.st_size, origin);
    }
  bool first = digests[0] == NULL;
  unpacked_list (&sb, json, &first);
  if (json)
    strbuf_append (&sb, !first ? "\n]\n" : "]\n");
  cleanup_free char *text = strbuf_steal (&sb);
  fputs (text, stdout);
}

/* Remove partial/KEY and its validators unless someone is fetching KEY right now. */
static bool
clean_partial (const struct cache *c, const char *key)
{
  cleanup_fd int lockfd = open_lock (c, key);
  if (lock_whole_file (lockfd, false) < 0)
    return false;
  cleanup_free char *path = xasprintf ("%s/%s", c->partial, key);
  cleanup_free char *validators = xasprintf ("%s/%s.validators", c->partial, key);
  if ((unlink (path) < 0 && errno != ENOENT) || (unlink (validators) < 0 && errno != ENOENT))
    die_with_error ("cannot delete %s", path);
  return true;
}

void
cache_clean (const struct cache *c, bool quiet)
{
  unsigned long removed = 0, busy = 0;
  uintmax_t bytes = 0;
  cleanup_strv char **digests = list_digests (c->sha256);
  for (size_t i = 0; digests[i] != NULL; i++)
    {
      /* A fetch holding this digest's lock may be about to hand the file to an unpack:
       * it keeps its open fd either way, so unlinking under it is safe. */
      cleanup_free char *path = xasprintf ("%s/%s", c->sha256, digests[i]);
      cleanup_free char *origin = xasprintf ("%s/%s", c->origin, digests[i]);
      struct stat st;
      if (lstat (path, &st) == 0)
        bytes += (uintmax_t) st.st_size;
      if (unlink (path) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", path);
      if (unlink (origin) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", origin);
      removed++;
    }
  DIR *d = opendir (c->partial);
  if (d == NULL)
    die_with_error ("cannot read %s", c->partial);
  struct dirent *de;
  cleanup_strv char **keys = xcalloc (1, sizeof *keys);
  size_t n = 0;
  /* Every KEY with a partial file, or with validators whose partial file is gone. */
  while ((de = readdir (d)) != NULL)
    {
      const char *dot = strchr (de->d_name, '.');
      if (de->d_name[0] == '.' || (dot != NULL && strcmp (dot, ".validators") != 0))
        continue;
      cleanup_free char *key = strndup (de->d_name, dot != NULL ? (size_t) (dot - de->d_name)
                                                                : strlen (de->d_name));
      if (key == NULL)
        die ("out of memory");
      if (dot != NULL && faccessat (dirfd (d), key, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        continue; /* counted with its partial file */
      keys = xrealloc (keys, (n + 2) * sizeof *keys);
      keys[n++] = steal_pointer (&key);
      keys[n] = NULL;
    }
  closedir (d);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *path = xasprintf ("%s/%s", c->partial, keys[i]);
      struct stat st;
      off_t size = lstat (path, &st) == 0 ? st.st_size : 0;
      if (clean_partial (c, keys[i]))
        bytes += (uintmax_t) size, removed++;
      else
        busy++;
    }
  unsigned long trees = unpacked_clean ();
  if (quiet)
    return;
  printf ("removed %lu file%s (%ju bytes)", removed, removed == 1 ? "" : "s", bytes);
  if (trees > 0)
    printf (" and %lu unpacked cop%s", trees, trees == 1 ? "y" : "ies");
  if (busy > 0)
    printf ("; %lu download%s in progress left alone", busy, busy == 1 ? "" : "s");
  printf ("\n");
}
