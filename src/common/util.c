/* Small helpers every other file uses: fatal errors, allocation, scoped cleanup, fd I/O. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/openat2.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"

static void (*die_cleanup) (void), (*die_temp_cleanup) (void);
static bool die_at_once;
bool stderr_mid_line;

void
set_die_at_once (void)
{
  die_at_once = true;
}

void
set_die_cleanup (void (*fn) (void))
{
  die_cleanup = fn;
}

void
set_die_temp_cleanup (void (*fn) (void))
{
  die_temp_cleanup = fn;
}

static void
run_die_cleanup (void)
{
  void (*fn) (void) = die_cleanup, (*temps) (void) = die_temp_cleanup;
  die_cleanup = die_temp_cleanup = NULL; /* a failure inside the cleanup must not recurse */
  if (temps != NULL)
    temps ();
  if (fn != NULL)
    fn ();
}

char *
str_one_line (char *s)
{
  for (unsigned char *p = (unsigned char *) s; *p != '\0'; p++)
    if (*p < 0x20 || *p == 0x7f)
      *p = '?';
  return s;
}

/* FORMAT on stderr as one line: what it quotes (a tar entry's name, a JSON parser's
 * excerpt of a registry's document) may hold a newline or a terminal escape. */
__attribute__((format (printf, 2, 0))) static void
print_one_line (const char *prefix, const char *format, va_list args)
{
  char *s;
  if (stderr_mid_line)
    fputc ('\n', stderr); /* a progress bar's line: ours starts a line of its own */
  stderr_mid_line = false;
  fprintf (stderr, "%s: %s", PROGRAM_NAME, prefix);
  if (vasprintf (&s, format, args) < 0)
    {
      fputs ("out of memory", stderr); /* not die(): we are in it */
      return;
    }
  fputs (str_one_line (s), stderr);
  free (s);
}

/* Every fatal error ends here: one line on stderr, then the registered cleanups, then
 * STATUS. ERRSV >= 0 appends strerror (ERRSV). */
__attribute__((noreturn, format (printf, 3, 0))) static void
vdie (int status, int errsv, const char *format, va_list args)
{
  fflush (stdout);
  print_one_line ("", format, args);
  if (errsv >= 0)
    fprintf (stderr, ": %s", strerror (errsv));
  fputc ('\n', stderr);
  if (die_at_once)
    _exit (status);
  run_die_cleanup ();
  exit (status);
}

void
die (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  vdie (EXIT_TOOL_FAILURE, -1, format, args);
}

void
die_with_error (const char *format, ...)
{
  int errsv = errno;
  va_list args;
  va_start (args, format);
  vdie (EXIT_TOOL_FAILURE, errsv, format, args);
}

void
die_status (int status, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  vdie (status, -1, format, args);
}

void
warn (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  print_one_line ("warning: ", format, args);
  va_end (args);
  fputc ('\n', stderr);
}

static void *
check_alloc (void *p)
{
  if (p == NULL)
    die ("out of memory");
  return p;
}

void *
xmalloc (size_t size)
{
  return check_alloc (malloc (size ? size : 1));
}

void *
xcalloc (size_t nmemb, size_t size)
{
  return check_alloc (calloc (nmemb ? nmemb : 1, size ? size : 1));
}

void *
xrealloc (void *ptr, size_t size)
{
  return check_alloc (realloc (ptr, size ? size : 1));
}

char *
xstrdup (const char *s)
{
  return check_alloc (strdup (s));
}

char *
xvasprintf (const char *format, va_list args)
{
  char *s = NULL;
  if (vasprintf (&s, format, args) < 0)
    die ("out of memory");
  return s;
}

char *
xasprintf (const char *format, ...)
{
  va_list args;
  va_start (args, format);
  char *s = xvasprintf (format, args);
  va_end (args);
  return s;
}

void
cleanup_fdp (int *fdp)
{
  int errsv = errno;
  if (*fdp >= 0)
    close (*fdp);
  errno = errsv;
}

size_t
strv_length (char *const *strv)
{
  size_t n = 0;
  while (strv != NULL && strv[n] != NULL)
    n++;
  return n;
}

void
strv_free (char **strv)
{
  for (size_t i = 0; strv != NULL && strv[i] != NULL; i++)
    free (strv[i]);
  free (strv);
}

void
free_strings (char *const strs[], size_t n)
{
  for (size_t i = 0; i < n; i++)
    free (strs[i]);
}

void
free_string_array (char **strs, size_t n)
{
  free_strings (strs, n);
  free (strs);
}

void
cleanup_strvp (char ***strvp)
{
  strv_free (*strvp);
}

int
write_all (int fd, const void *buf, size_t len)
{
  const char *p = buf;
  while (len > 0)
    {
      ssize_t n = write (fd, p, len);
      if (n < 0)
        {
          if (errno == EINTR)
            continue;
          return -1;
        }
      p += n;
      len -= (size_t) n;
    }
  return 0;
}

char *
read_fd_all (int fd, size_t max_size, size_t *len_out)
{
  size_t cap = 4096, len = 0;
  cleanup_free char *buf = xmalloc (cap);
  for (;;)
    {
      if (len + 1 >= cap)
        {
          if (cap >= max_size)
            {
              errno = EFBIG;
              return NULL;
            }
          cap *= 2;
          buf = xrealloc (buf, cap);
        }
      ssize_t n = read (fd, buf + len, cap - len - 1);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return NULL;
      if (n == 0)
        break;
      len += (size_t) n;
    }
  buf[len] = '\0';
  if (len_out != NULL)
    *len_out = len;
  return steal_pointer (&buf);
}

char *
load_file_at (int dirfd, const char *path, size_t max_size, size_t *len_out)
{
  cleanup_fd int fd = openat (dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return NULL;
  return read_fd_all (fd, max_size, len_out);
}

/* open_regular_at with FLAGS as given: O_NOFOLLOW or not. */
static int
open_checked_regular (int dirfd, const char *path, int flags, struct stat *st)
{
  int fd = openat (dirfd, path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  int errsv = fstat (fd, st) < 0 ? errno : !S_ISREG (st->st_mode) ? EINVAL : 0;
  if (errsv != 0)
    {
      close (fd);
      errno = errsv;
      return -1;
    }
  return fd;
}

int
open_regular_at (int dirfd, const char *path, int flags, struct stat *st)
{
  return open_checked_regular (dirfd, path, flags | O_NOFOLLOW, st);
}

/* The two load_regular_file*, FLAGS saying whether the last component may be a symlink. */
static char *
load_checked_regular (int dirfd, const char *path, int flags, size_t max_size,
                      size_t *len_out)
{
  struct stat st;
  cleanup_fd int fd = open_checked_regular (dirfd, path, O_RDONLY | flags, &st);
  if (fd < 0)
    return NULL;
  return read_fd_all (fd, max_size, len_out);
}

char *
load_regular_file_at (int dirfd, const char *path, size_t max_size, size_t *len_out)
{
  return load_checked_regular (dirfd, path, O_NOFOLLOW, max_size, len_out);
}

char *
load_regular_file (const char *path, size_t max_size, size_t *len_out)
{
  return load_checked_regular (AT_FDCWD, path, 0, max_size, len_out);
}

char *
read_first_line (const char *path)
{
  char *s = load_file_at (AT_FDCWD, path, 65536, NULL);
  if (s != NULL)
    s[strcspn (s, "\n")] = '\0';
  return s;
}

DIR *
opendir_dup (int dirfd)
{
  int fd = dup (dirfd);
  if (fd < 0)
    return NULL;
  DIR *d = fdopendir (fd);
  if (d == NULL)
    {
      int errsv = errno;
      close (fd);
      errno = errsv;
      return NULL;
    }
  rewinddir (d); /* the duplicate shares DIRFD's offset */
  return d;
}

static bool
no_reflink_errno (int e)
{
  return e == EOPNOTSUPP || e == ENOTTY || e == EXDEV || e == EINVAL || e == ENOSYS;
}

/* A chunk of copy_file_range: any size will do, it stops at the end of the file. */
#define COPY_RANGE_CHUNK (1 << 30)

int
copy_fd_data (int in, int out, bool *no_reflink)
{
  if (no_reflink == NULL || !*no_reflink)
    {
      if (ioctl (out, FICLONE, in) == 0)
        return 0;
      if (no_reflink != NULL && no_reflink_errno (errno))
        *no_reflink = true;
    }
  for (;;)
    {
      ssize_t n = copy_file_range (in, NULL, out, NULL, COPY_RANGE_CHUNK, 0);
      if (n == 0)
        return 0;
      if (n < 0 && no_reflink_errno (errno))
        break;
      if (n < 0)
        return -1;
    }
  static char buf[128 * 1024];
  for (;;)
    {
      ssize_t n = read (in, buf, sizeof buf);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return (int) n;
      if (write_all (out, buf, (size_t) n) < 0)
        return -1;
    }
}

int
tree_place (const char *from, const char *to)
{
#ifdef HAVE_RENAMEAT2
  if (renameat2 (AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
    return 0;
  if (errno != EINVAL && errno != ENOSYS)
    return -1;
#endif
  /* Filesystems without RENAME_NOREPLACE: the callers hold TO's name lock, which excludes
   * other enter-devroot processes, so check-then-rename is only racy against hand edits. */
  struct stat st;
  if (lstat (to, &st) == 0)
    {
      errno = EEXIST;
      return -1;
    }
  return rename (from, to);
}

int
mkdir_p (const char *path, mode_t mode)
{
  cleanup_free char *copy = xstrdup (path);
  for (char *p = copy + 1; ; p++)
    {
      if (*p != '/' && *p != '\0')
        continue;
      char saved = *p;
      *p = '\0';
      if (mkdir (copy, mode) < 0 && errno != EEXIST)
        return -1;
      *p = saved;
      if (saved == '\0')
        break;
    }
  struct stat st;
  if (stat (path, &st) < 0)
    return -1;
  if (!S_ISDIR (st.st_mode))
    {
      errno = ENOTDIR;
      return -1;
    }
  return 0;
}

int
mkdir_p_beneath (int rootfd, const char *path)
{
  cleanup_free char *copy = xstrdup (path);
  for (char *p = copy; *p != '\0';)
    {
      p += strspn (p, "/");
      if (*p == '\0')
        break;
      p += strcspn (p, "/");
      char saved = *p;
      *p = '\0';
      struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
                              .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
      int fd = (int) syscall (SYS_openat2, rootfd, copy, &how, sizeof how);
      if (fd < 0 && errno == ENOENT)
        {
          char *slash = strrchr (copy, '/');
          cleanup_free char *parent = slash != NULL && slash != copy
                                        ? xasprintf ("%.*s", (int) (slash - copy), copy)
                                        : xstrdup ("/");
          cleanup_fd int pfd = (int) syscall (SYS_openat2, rootfd, parent, &how, sizeof how);
          if (pfd < 0 || mkdirat (pfd, slash != NULL ? slash + 1 : copy, 0755) < 0)
            return -1;
        }
      else if (fd < 0)
        return -1;
      else
        close (fd);
      *p = saved;
    }
  return 0;
}

int
open_dir_in_root (int rootfd, const char *path)
{
  if (mkdir_p_beneath (rootfd, path) < 0)
    return -1;
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
  return (int) syscall (SYS_openat2, rootfd, path, &how, sizeof how);
}

/* The fallback walks /proc/self/fd; without /proc (or with an old kernel and no /proc)
 * it closes a bounded range, which is all that can be done. */
void
close_fds_from (int lowfd)
{
#ifdef HAVE_CLOSE_RANGE
  if (close_range ((unsigned) lowfd, ~0U, 0) == 0)
    return;
#elif defined(SYS_close_range)
  if (syscall (SYS_close_range, (unsigned) lowfd, ~0U, 0) == 0)
    return;
#endif
  DIR *d = opendir ("/proc/self/fd");
  if (d == NULL)
    {
      long max = sysconf (_SC_OPEN_MAX);
      for (long fd = lowfd; fd < (max > 0 ? max : 65536); fd++)
        close ((int) fd);
      return;
    }
  int dfd = dirfd (d);
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      char *end;
      long fd = strtol (de->d_name, &end, 10);
      if (*end != '\0' || end == de->d_name || fd < lowfd || fd == dfd)
        continue;
      close ((int) fd);
    }
  closedir (d);
}

void
close_fds_except (int lowfd, int keep)
{
  if (keep < lowfd)
    {
      close_fds_from (lowfd);
      return;
    }
  int below = keep;
#ifdef HAVE_CLOSE_RANGE
  if (keep > lowfd && close_range ((unsigned) lowfd, (unsigned) keep - 1, 0) == 0)
    below = lowfd;
#elif defined(SYS_close_range)
  if (keep > lowfd && syscall (SYS_close_range, (unsigned) lowfd, (unsigned) keep - 1, 0) == 0)
    below = lowfd;
#endif
  for (int fd = lowfd; fd < below; fd++)
    close (fd);
  close_fds_from (keep + 1);
}

bool
str_has_prefix (const char *s, const char *prefix)
{
  return strncmp (s, prefix, strlen (prefix)) == 0;
}

bool
str_has_suffix (const char *s, const char *suffix)
{
  size_t n = strlen (s), m = strlen (suffix);
  return n >= m && strcmp (s + n - m, suffix) == 0;
}

int
parse_byte_size (const char *s, uint64_t *out)
{
  static const char units[] = "KMGT";
  if (s == NULL || s[0] < '0' || s[0] > '9')
    return errno = EINVAL, -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull (s, &end, 10);
  if (errno != 0)
    return -1;
  if (*end != '\0')
    {
      const char *u = strchr (units, *end);
      if (u == NULL)
        return errno = EINVAL, -1;
      end++;
      if (strcmp (end, "iB") != 0 && strcmp (end, "B") != 0 && *end != '\0')
        return errno = EINVAL, -1;
      for (const char *k = units; k <= u; k++)
        {
          if (v > UINT64_MAX / 1024)
            return errno = ERANGE, -1;
          v *= 1024;
        }
    }
  *out = v;
  return 0;
}

void
strbuf_append_len (struct strbuf *sb, const char *s, size_t len)
{
  if (sb->len + len + 1 > sb->cap)
    {
      size_t cap = sb->cap ? sb->cap : 64;
      while (sb->len + len + 1 > cap)
        cap *= 2;
      sb->str = xrealloc (sb->str, cap);
      sb->cap = cap;
    }
  memcpy (sb->str + sb->len, s, len);
  sb->len += len;
  sb->str[sb->len] = '\0';
}

void
strbuf_append (struct strbuf *sb, const char *s)
{
  strbuf_append_len (sb, s, strlen (s));
}

void
strbuf_append_c (struct strbuf *sb, char c)
{
  strbuf_append_len (sb, &c, 1);
}

void
strbuf_appendf (struct strbuf *sb, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *s = xvasprintf (format, args);
  va_end (args);
  strbuf_append (sb, s);
}

char *
strbuf_steal (struct strbuf *sb)
{
  char *s = sb->str != NULL ? sb->str : xstrdup ("");
  sb->str = NULL;
  sb->len = sb->cap = 0;
  return s;
}

int
env_number (const char *var, long *out)
{
  const char *s = getenv (var);
  if (s == NULL || s[0] == '\0')
    return 0;
  char *end;
  errno = 0;
  *out = strtol (s, &end, 10);
  return errno != 0 || *end != '\0' ? -1 : 1;
}

long
env_seconds (const char *var, long fallback)
{
  long v;
  int r = env_number (var, &v);
  if (r < 0 || (r > 0 && v <= 0))
    die ("invalid %s '%s': expected a positive number of seconds", var, getenv (var));
  return r > 0 ? v : fallback;
}
