/* The content-addressed download cache (layout and trust model in cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"
#include "common/util.h"
#include "common/verbose.h"
#include "store/cache/cache.h"
#include "store/cache/catalog.h"
#include "store/layers/layers.h"
#include "store/cache/digest.h"
#include "store/interrupt.h"
#include "store/cache/userconfig.h"

#define CACHE_DIR_MODE 0700
/* In a cache others use, what they must be able to do with our files: read a verified one,
 * lock a lock file (an fcntl write lock needs the file open for writing). */
#define SHARED_FILE_MODE 0644
#define SHARED_LOCK_MODE 0666
#define ORIGIN_MAX_BYTES 8192
#define HOLDER_MAX_BYTES 256
#define COPY_BLOCK (256 * 1024)
/* A lock is polled this often, and given up on when its holder's download made no progress
 * for ENTER_DEVROOT_LOCK_TIMEOUT seconds: longer than a live transfer can stall (the low-speed
 * limit aborts one after 30 s, the connect timeout after 30 s), short enough that another
 * user holding a lock forever costs a bounded wait. */
#define LOCK_POLL_MS 200
#define DEFAULT_LOCK_TIMEOUT_S 120

void
cache_init (struct cache *c, const char *base)
{
  c->shared = false;
  c->base = xstrdup (base);
  c->sha256 = xasprintf ("%s/sha256", c->base);
  c->origin = xasprintf ("%s/origin", c->base);
  c->partial = xasprintf ("%s/partial", c->base);
  c->locks = xasprintf ("%s/locks", c->base);
}

/* "user NAME (uid N)", or "uid N" for a uid without a name, for messages. */
static char *
describe_uid (uid_t uid)
{
  struct passwd *pw = getpwuid (uid);
  if (pw != NULL && pw->pw_name != NULL)
    return xasprintf ("user %s (uid %u)", pw->pw_name, (unsigned) uid);
  return xasprintf ("uid %u", (unsigned) uid);
}

/* Nobody but the caller and root can change a file or directory with this stat. */
static bool
is_private (const struct stat *st)
{
  return (st->st_uid == getuid () || st->st_uid == 0) && (st->st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

/* A directory of the cache must be the caller's or root's (its owner could rename or
 * replace anything in it), and one that others can write must be sticky (else they could
 * rename or delete the caller's files). Sets *OPEN_TO_OTHERS when others can write it. */
static void
check_dir (const char *path, bool follow, bool *open_to_others)
{
  cleanup_fd int fd = open (path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0)
    die_with_error ("cannot open cache directory %s", path);
  if (st.st_uid != getuid () && st.st_uid != 0)
    {
      cleanup_free char *owner = describe_uid (st.st_uid);
      die ("cache directory %s: owned by %s, not by you or root: its owner could replace "
           "what you fetch (use a cache directory of your own)", path, owner);
    }
  bool writable = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
  if (writable && (st.st_mode & S_ISVTX) == 0)
    die ("cache directory %s: writable by others without the sticky bit (mode %04o): they "
         "could rename or delete your files in it (chmod +t it, as /tmp is)", path,
         (unsigned) (st.st_mode & 07777));
  *open_to_others = *open_to_others || writable;
}

/* cache_open and cache_open_existing: with MAKE false, a directory that is not there is
 * neither made nor checked. */
static void
open_dirs (struct cache *c, bool make)
{
  cleanup_free char *base = config_cache_dir ();
  cache_init (c, base);
  if (make && mkdir_p (c->base, CACHE_DIR_MODE) < 0)
    die_with_error ("cannot create cache directory %s", c->base);
  if (!make && access (c->base, F_OK) < 0 && errno == ENOENT)
    return;
  /* The directory the user named may be reached through symlinks of theirs; what is in it
   * never is. */
  check_dir (c->base, true, &c->shared);
  const char *dirs[] = { c->sha256, c->origin, c->partial, c->locks };
  for (size_t i = 0; i < N_ELEMENTS (dirs); i++)
    {
      bool missing = faccessat (AT_FDCWD, dirs[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0
                     && errno == ENOENT;
      if (!make && missing)
        continue;
      /* In a cache others can write, a subdirectory made by one user would be refused by
       * the others (not theirs nor root's): root makes them, as it made the cache. */
      if (c->shared && missing)
        die ("cache directory %s is missing: in a cache others can write (%s), root creates "
             "it (install -d -m 1777 %s)", dirs[i], c->base, dirs[i]);
      if (mkdir (dirs[i], CACHE_DIR_MODE) < 0 && errno != EEXIST)
        die_with_error ("cannot create cache directory %s", dirs[i]);
      check_dir (dirs[i], false, &c->shared);
    }
}

void
cache_open (struct cache *c)
{
  open_dirs (c, true);
}

void
cache_open_existing (struct cache *c)
{
  open_dirs (c, false);
}

void
cache_clear (struct cache *c)
{
  char *owned[] = { c->base, c->sha256, c->origin, c->partial, c->locks };
  free_strings (owned, N_ELEMENTS (owned));
  *c = (struct cache) { 0 };
}

static int
open_lock (const struct cache *c, const char *key)
{
  cleanup_free char *path = xasprintf ("%s/%s.lock", c->locks, key);
  /* O_CREAT only for a file that is not there: on another user's, in a sticky directory,
   * fs.protected_regular would refuse it, where a plain open is allowed. */
  const int flags = O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK;
  int fd = open (path, flags);
  if (fd < 0 && errno == ENOENT)
    fd = open (path, flags | O_CREAT | O_EXCL, c->shared ? SHARED_LOCK_MODE : 0600);
  if (fd < 0 && errno == EEXIST)
    fd = open (path, flags);
  struct stat st;
  if (fd < 0 && errno == EACCES && lstat (path, &st) == 0)
    {
      cleanup_free char *owner = describe_uid (st.st_uid);
      die ("cannot open lock file %s (%s's, mode %04o): %s: use a cache of your own, or ask "
           "them to remove it", path, owner, (unsigned) (st.st_mode & 07777), strerror (EACCES));
    }
  if (fd < 0 || fstat (fd, &st) < 0)
    die_with_error ("cannot open lock file %s", path);
  if (!S_ISREG (st.st_mode))
    die ("lock file %s is not a regular file", path);
  /* Others must be able to open it for writing to lock it too (the umask removed that). */
  if (c->shared && st.st_uid == getuid () && (st.st_mode & 0777) != SHARED_LOCK_MODE
      && fchmod (fd, SHARED_LOCK_MODE) < 0)
    die_with_error ("cannot make lock file %s usable by others", path);
  return fd;
}

/* A write lock on all of FD, owned by the open file description (an OFD lock): an fcntl
 * lock, so NFS carries it to the server and every client sees it (flock may be local to one
 * client on cluster filesystems), yet not lost when another fd of this process on the same
 * file is closed, as a classic POSIX lock would be. The kernel (or, on NFS, the server when
 * the client's lease expires) drops it when its holder dies: a crashed fetch never leaves a
 * stale lock behind. -1 with errno EAGAIN when someone holds it. */
static int
try_lock (int fd)
{
  struct flock l = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0 };
  int r;
  while ((r = fcntl (fd, F_OFD_SETLK, &l)) < 0 && errno == EINTR)
    ;
  if (r < 0 && errno == EACCES)
    errno = EAGAIN; /* what some systems answer for a held lock */
  return r;
}

/* Who we are, in the lock file, for a waiter's message. An OFD lock has no owner pid
 * (F_OFD_GETLK and /proc/locks say -1), so this line is the only name it can give. Best
 * effort: a lock is a lock without it. */
static void
note_holder (int fd)
{
  char host[256] = "?";
  gethostname (host, sizeof host - 1);
  cleanup_free char *line = xasprintf ("pid %ld on %s, uid %u\n", (long) getpid (), host,
                                       (unsigned) getuid ());
  if (ftruncate (fd, 0) < 0 || pwrite (fd, line, strlen (line), 0) < 0)
    return;
}

/* The holder's line from the lock file (another user wrote it: printable, bounded), or
 * who created the file when it says nothing. */
static char *
describe_holder (int fd)
{
  char buf[HOLDER_MAX_BYTES + 1];
  ssize_t n = pread (fd, buf, HOLDER_MAX_BYTES, 0);
  buf[n > 0 ? n : 0] = '\0';
  buf[strcspn (buf, "\n")] = '\0';
  if (buf[0] != '\0')
    return printable_copy (buf);
  struct stat st;
  cleanup_free char *owner = fstat (fd, &st) == 0 ? describe_uid (st.st_uid) : xstrdup ("?");
  return xasprintf ("a process that did not say (the lock file is %s's)", owner);
}

/* What shows a lock holder at work: its partial file growing. */
static bool
partial_changed (const struct cache *c, const char *key, struct stat *last)
{
  cleanup_free char *path = xasprintf ("%s/%s", c->partial, key);
  struct stat st = { 0 };
  if (lstat (path, &st) < 0)
    st = (struct stat) { 0 };
  bool changed = st.st_size != last->st_size || st.st_ino != last->st_ino
                 || st.st_mtim.tv_sec != last->st_mtim.tv_sec
                 || st.st_mtim.tv_nsec != last->st_mtim.tv_nsec;
  *last = st;
  return changed;
}

static long
lock_timeout (void)
{
  return env_seconds ("ENTER_DEVROOT_LOCK_TIMEOUT", DEFAULT_LOCK_TIMEOUT_S);
}

static double
now_s (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The wait polls rather than blocking in F_OFD_SETLKW: it must look at the holder's
 * progress, and end on SIGINT, SIGTERM or SIGHUP (interrupt.h): a cancelled job waiting
 * for another node's download exits now, not when that download is done. */
int
cache_lock (const struct cache *c, const char *key, bool quiet)
{
  cleanup_fd int fd = open_lock (c, key);
  if (try_lock (fd) < 0)
    {
      cleanup_free char *path = xasprintf ("%s/%s.lock", c->locks, key);
      if (errno != EAGAIN)
        die_with_error ("cannot lock %s", path);
      long timeout = lock_timeout ();
      if (!quiet)
        {
          cleanup_free char *holder = describe_holder (fd);
          fprintf (stderr, "%s: waiting for another process fetching the same file (%s)\n",
                   PROGRAM_NAME, holder);
        }
      struct stat last = { 0 };
      partial_changed (c, key, &last);
      double progress = now_s ();
      for (;;)
        {
          interrupt_check ();
          nanosleep (&(struct timespec) { .tv_nsec = LOCK_POLL_MS * 1000000L }, NULL);
          interrupt_check ();
          if (try_lock (fd) == 0)
            break;
          if (errno != EAGAIN)
            die_with_error ("cannot lock %s", path);
          if (partial_changed (c, key, &last))
            progress = now_s ();
          else if (now_s () - progress >= (double) timeout)
            {
              cleanup_free char *holder = describe_holder (fd);
              die ("cannot lock %s: held by %s, with no download progress for %ld s "
                   "(ENTER_DEVROOT_LOCK_TIMEOUT)", path, holder, timeout);
            }
        }
    }
  note_holder (fd);
  return steal_fd (&fd);
}

/* The cached file at PATH (stat ST) is not what its name says (WHY): never used; deleted
 * only when it is ours (another user's is not ours to delete, and a sticky directory would
 * refuse anyway). */
static void
reject (const char *path, const struct stat *st, const char *why)
{
  if (st->st_uid == getuid ())
    {
      warn ("cached file %s is corrupt (%s): deleting it", path, why);
      if (unlink (path) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", path);
      return;
    }
  cleanup_free char *owner = describe_uid (st->st_uid);
  warn ("cached file %s does not match its name (%s): ignored, fetching it again (not "
        "deleted: it is %s's)", path, why, owner);
}

/* sha256/HEX opened for reading, or -1: absent (silently), or unusable (with a warning). */
static int
open_cached (const struct cache *c, const char *hex, struct stat *st, char **path)
{
  *path = xasprintf ("%s/%s", c->sha256, hex);
  int fd = open_regular_at (AT_FDCWD, *path, O_RDONLY, st);
  if (fd < 0 && errno == ENOENT)
    return -1;
  if (fd < 0 && errno == EINVAL)
    warn ("cached file %s is not a regular file: ignored, fetching it again", *path);
  else if (fd < 0)
    warn ("cannot open cached file %s (%s): ignored, fetching it again", *path,
          strerror (errno));
  return fd;
}

/* A file another user can rewrite at any moment is hashed while copied into a private
 * unnamed file, and the copy is what is used: hashing the file and then reading it again
 * would let its owner change it in between. */
static int
private_copy (const struct cache *c, int fd, const char *path, char got[SHA256_HEX_LEN + 1])
{
  cleanup_fd int copy = open (c->partial, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (copy < 0)
    {
      /* No O_TMPFILE (NFS): a named file of ours, unlinked at once. */
      cleanup_free char *tmp = xasprintf ("%s/.copy.XXXXXX", c->partial);
      copy = mkostemp (tmp, O_CLOEXEC);
      if (copy < 0)
        die_with_error ("cannot make a private copy of %s in %s", path, c->partial);
      unlink (tmp);
    }
  cleanup_free char *buf = xmalloc (COPY_BLOCK);
  struct sha256 h;
  sha256_init (&h);
  ssize_t n;
  while ((n = read (fd, buf, COPY_BLOCK)) != 0)
    {
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0 || write_all (copy, buf, (size_t) n) < 0)
        die_with_error ("cannot make a private copy of %s", path);
      sha256_update (&h, buf, (size_t) n);
    }
  sha256_final (&h, got);
  if (lseek (copy, 0, SEEK_SET) < 0)
    die_with_error ("cannot rewind the private copy of %s", path);
  return steal_fd (&copy);
}

int
cache_open_verified (const struct cache *c, const char *hex)
{
  struct stat st;
  cleanup_free char *path = NULL;
  cleanup_fd int fd = open_cached (c, hex, &st, &path);
  verbose ("cache %s: sha256:%s", fd >= 0 ? "hit" : "miss", hex);
  if (fd < 0)
    return -1;
  char got[SHA256_HEX_LEN + 1];
  cleanup_fd int use = -1;
  if (is_private (&st))
    {
      if (sha256_fd (fd, UINT64_MAX, got) < 0)
        die_with_error ("cannot read cached file %s", path);
      if (lseek (fd, 0, SEEK_SET) < 0)
        die_with_error ("cannot rewind %s", path);
      use = steal_fd (&fd);
    }
  else
    use = private_copy (c, fd, path, got);
  if (strcmp (got, hex) != 0)
    {
      cleanup_free char *why = xasprintf ("its SHA-256 is %s", got);
      reject (path, &st, why);
      return -1;
    }
  return steal_fd (&use);
}

char *
cache_read_verified (const struct cache *c, const char *hex, size_t max, size_t *len)
{
  struct stat st;
  cleanup_free char *path = NULL;
  cleanup_fd int fd = open_cached (c, hex, &st, &path);
  verbose ("cache %s: sha256:%s", fd >= 0 ? "hit" : "miss", hex);
  if (fd < 0)
    return NULL;
  cleanup_free char *text = read_fd_all (fd, max + 1, len);
  if (text == NULL && errno == EFBIG)
    {
      reject (path, &st, "larger than any document it could be");
      return NULL;
    }
  if (text == NULL)
    die_with_error ("cannot read cached file %s", path);
  /* The bytes hashed are the bytes returned: there is no second read to race. */
  char got[SHA256_HEX_LEN + 1];
  struct sha256 h;
  sha256_init (&h);
  sha256_update (&h, text, *len);
  sha256_final (&h, got);
  if (strcmp (got, hex) != 0)
    {
      cleanup_free char *why = xasprintf ("its SHA-256 is %s", got);
      reject (path, &st, why);
      return NULL;
    }
  return steal_pointer (&text);
}

char *
cache_partial_name (const struct cache *c, const char *key)
{
  cleanup_free char *path = xasprintf ("%s/%s", c->partial, key);
  struct stat st;
  int fd = open_regular_at (AT_FDCWD, path, O_RDWR, &st);
  if (fd < 0 && errno == ENOENT)
    return xstrdup (key); /* download_file creates it, and checks it is ours */
  if (fd >= 0)
    {
      close (fd);
      if (st.st_uid == getuid () && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
        return xstrdup (key);
    }
  /* Another user's (or not a file): its bytes are not trusted for a resume, and it is not
   * ours to delete. A fresh file of ours beside it, no resume. */
  cleanup_free char *tmp = xasprintf ("%s/.%s.XXXXXX", c->partial, key);
  fd = mkostemp (tmp, O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot create a partial download in %s", c->partial);
  close (fd);
  return xstrdup (strrchr (tmp, '/') + 1);
}

void
cache_commit (const struct cache *c, const char *name, int fd, const char *hex,
              const char *origin)
{
  cleanup_free char *from = xasprintf ("%s/%s", c->partial, name);
  cleanup_free char *to = xasprintf ("%s/%s", c->sha256, hex);
  cleanup_free char *validators = xasprintf ("%s/%s.validators", c->partial, name);
  cleanup_free char *origin_path = xasprintf ("%s/%s", c->origin, hex);

  /* Others read what a shared cache holds; they never can write it. */
  if (c->shared && fchmod (fd, SHARED_FILE_MODE) < 0)
    die_with_error ("cannot make %s readable by the cache's other users", from);
  /* The origin first: a cached file without one is listed as "unknown", never wrong. */
  cleanup_atomic_file struct atomic_file of;
  cleanup_free char *line = xasprintf ("%s\n", origin);
  if (atomic_file_open (&of, AT_FDCWD, origin_path, 0600) < 0
      || write_all (of.fd, line, strlen (line)) < 0
      || (c->shared && fchmod (of.fd, SHARED_FILE_MODE) < 0))
    die_with_error ("cannot write %s", origin_path);
  /* Another user's origin line, in a sticky directory: theirs stays. */
  if (atomic_file_commit (&of, 0) < 0 && errno != EPERM && errno != EACCES)
    die_with_error ("cannot write %s", origin_path);
  /* Not through atomic-file.h: the partial file is no temporary but a download kept
   * between runs for its resume (download-file.c), checked whole before it is moved. */
  if (rename (from, to) < 0)
    {
      /* Another user's file (ignored as not matching, or a FIFO) holds the name, in a
       * sticky directory: the download is used, not kept. */
      if (errno != EPERM && errno != EACCES)
        die_with_error ("cannot move %s to %s", from, to);
      if (unlink (from) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", from);
    }
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
  size_t n = 0;
  char **v = xcalloc (1, sizeof *v);
  DIR *d = opendir (dir);
  if (d == NULL && errno == ENOENT)
    return v; /* cache_open_existing: nothing there */
  if (d == NULL)
    die_with_error ("cannot read %s", dir);
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
  if (n > 0) /* qsort may not be handed a NULL array */
    qsort (v, n, sizeof *v, compare_strings);
  return v;
}

/* Where HEX came from, as printable text: another user of a shared cache may have written
 * it, and it goes to a terminal. */
static char *
read_origin (const struct cache *c, const char *hex)
{
  cleanup_free char *path = xasprintf ("%s/%s", c->origin, hex);
  cleanup_free char *s = load_regular_file_at (AT_FDCWD, path, ORIGIN_MAX_BYTES, NULL);
  if (s == NULL)
    return xstrdup ("unknown");
  s[strcspn (s, "\n")] = '\0';
  return printable_copy (s);
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
  layers_list (&sb, json, &first);
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
  if (try_lock (lockfd) < 0)
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
  unsigned long removed = 0, busy = 0, others = 0;
  uintmax_t bytes = 0;
  cleanup_strv char **digests = list_digests (c->sha256);
  for (size_t i = 0; digests[i] != NULL; i++)
    {
      /* A fetch holding this digest's lock may be about to hand the file to an unpack:
       * it keeps its open fd either way, so unlinking under it is safe. */
      cleanup_free char *path = xasprintf ("%s/%s", c->sha256, digests[i]);
      cleanup_free char *origin = xasprintf ("%s/%s", c->origin, digests[i]);
      struct stat st;
      if (lstat (path, &st) == 0 && st.st_uid != getuid ())
        {
          others++; /* another user's, in a shared cache: theirs to clean */
          continue;
        }
      if (lstat (path, &st) == 0)
        bytes += (uintmax_t) st.st_size;
      if (unlink (path) < 0 && errno != ENOENT)
        die_with_error ("cannot delete %s", path);
      if (unlink (origin) < 0 && errno != ENOENT && errno != EPERM && errno != EACCES)
        die_with_error ("cannot delete %s", origin);
      removed++;
    }
  DIR *d = opendir (c->partial);
  if (d == NULL && errno != ENOENT)
    die_with_error ("cannot read %s", c->partial);
  struct dirent *de;
  cleanup_strv char **keys = xcalloc (1, sizeof *keys);
  size_t n = 0;
  /* Every KEY with a partial file, or with validators whose partial file is gone; and the
   * caller's own .KEY.XXXXXX (debris of a download interrupted beside another user's). */
  while (d != NULL && (de = readdir (d)) != NULL)
    {
      struct stat st;
      if (fstatat (dirfd (d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        continue;
      if (st.st_uid != getuid ())
        {
          others++;
          continue;
        }
      if (de->d_name[0] == '.' && strcmp (de->d_name, ".") != 0 && strcmp (de->d_name, "..") != 0)
        {
          /* .KEY.XXXXXX, or .KEY.validators.tmp: under KEY's lock, as a partial file. */
          cleanup_free char *key = strndup (de->d_name + 1, strcspn (de->d_name + 1, "."));
          if (key == NULL)
            die ("out of memory");
          cleanup_fd int lockfd = is_hex_name (key) || str_has_prefix (key, "url-")
                                  ? open_lock (c, key) : -1;
          if (lockfd >= 0 && try_lock (lockfd) < 0)
            {
              busy++;
              continue;
            }
          if (unlinkat (dirfd (d), de->d_name, 0) < 0 && errno != ENOENT)
            die_with_error ("cannot delete %s/%s", c->partial, de->d_name);
          continue;
        }
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
  if (d != NULL)
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
  unsigned long layers = 0, layers_kept = 0;
  uint64_t layer_bytes = 0;
  layers_clean (&layers, &layer_bytes, &layers_kept);
  if (quiet)
    return;
  printf ("removed %lu file%s (%ju bytes)", removed, removed == 1 ? "" : "s", bytes);
  if (layers > 0)
    printf (" and %lu unused layer%s (%" PRIu64 " bytes)", layers, layers == 1 ? "" : "s",
            layer_bytes);
  if (layers_kept > 0)
    printf ("; %lu layer%s in use kept", layers_kept, layers_kept == 1 ? "" : "s");
  if (busy > 0)
    printf ("; %lu download%s in progress left alone", busy, busy == 1 ? "" : "s");
  if (others > 0)
    printf ("; %lu file%s of other users left alone", others, others == 1 ? "" : "s");
  printf ("\n");
}
