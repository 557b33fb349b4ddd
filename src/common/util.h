/* Small helpers every other file uses: fatal errors, allocation, scoped cleanup, fd I/O. */
#pragma once

#include <dirent.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Exit statuses (see the man page, EXIT STATUS). */
#define EXIT_TOOL_FAILURE 125 /* enter-devroot itself failed, usage errors included */
#define EXIT_CANNOT_EXEC  126 /* command found but could not be executed */
#define EXIT_NOT_FOUND    127 /* command not found */

#define PROGRAM_NAME "enter-devroot"

#define N_ELEMENTS(a) (sizeof (a) / sizeof ((a)[0]))

/* One line on stderr, "enter-devroot: <message>", then exit 125. */
__attribute__((noreturn, format (printf, 1, 2))) void die (const char *format, ...);
/* Same, with ": strerror(errno)" appended. */
__attribute__((noreturn, format (printf, 1, 2))) void die_with_error (const char *format, ...);
/* Same as die() but with an explicit exit status. */
__attribute__((noreturn, format (printf, 2, 3))) void die_status (int status, const char *format, ...);
__attribute__((format (printf, 1, 2))) void warn (const char *format, ...);

void *xmalloc (size_t size);
void *xcalloc (size_t nmemb, size_t size);
void *xrealloc (void *ptr, size_t size);
char *xstrdup (const char *s);
__attribute__((format (printf, 1, 2))) char *xasprintf (const char *format, ...);
__attribute__((format (printf, 1, 0))) char *xvasprintf (const char *format, va_list args);

/* Scoped ownership, bubblewrap style: the variable is released when it leaves scope
 * unless steal_pointer()/steal_fd() took it. */
static inline void
cleanup_freep (void *p)
{
  free (*(void **) p);
}
void cleanup_fdp (int *fdp);
void cleanup_strvp (char ***strvp);
#define cleanup_free __attribute__((cleanup (cleanup_freep)))
#define cleanup_fd __attribute__((cleanup (cleanup_fdp)))
#define cleanup_strv __attribute__((cleanup (cleanup_strvp)))

static inline void *
steal_pointer (void *pp)
{
  void **ptr = (void **) pp;
  void *ret = *ptr;
  *ptr = NULL;
  return ret;
}
static inline int
steal_fd (int *fdp)
{
  int fd = *fdp;
  *fdp = -1;
  return fd;
}

/* NULL-terminated string vectors. */
size_t strv_length (char *const *strv);
void strv_free (char **strv);
/* Free each of the N strings of STRS (any may be NULL), not STRS: a struct's clear function
 * names the strings the struct owns in one array, frees them here, then zeroes the struct. */
void free_strings (char *const strs[], size_t n);
/* free_strings, then the array STRS itself (malloc'd, N long: not NULL-terminated). */
void free_string_array (char **strs, size_t n);

/* Full write / read, retrying on EINTR and short counts; -1 with errno on failure. */
int write_all (int fd, const void *buf, size_t len);
/* Read FD to its end (at most MAX_SIZE bytes); NULL with errno on failure. */
char *read_fd_all (int fd, size_t max_size, size_t *len_out);
/* Read a whole (small) file relative to dirfd; NULL with errno on failure. */
char *load_file_at (int dirfd, const char *path, size_t max_size, size_t *len_out);
/* PATH (relative to DIRFD) opened with FLAGS (O_RDONLY or O_RDWR) only if it is a regular
 * file, its stat in *ST: never through a symlink (ELOOP), never blocking on a FIFO another
 * user planted (O_NONBLOCK, then refused), no device opened for good. -1 with errno on
 * failure; EINVAL when it is not a regular file. */
int open_regular_at (int dirfd, const char *path, int flags, struct stat *st);
/* load_file_at for a file of a directory others can write: through open_regular_at. */
char *load_regular_file_at (int dirfd, const char *path, size_t max_size, size_t *len_out);
/* The same, symlinks followed: for a PATH whose symlinks lead nowhere the caller must not
 * read (the host's own /etc files; a root's, once chrooted into it), but which may still be
 * a FIFO or a device, never waited on nor read (EINVAL). */
char *load_regular_file (const char *path, size_t max_size, size_t *len_out);
/* Read a small sysctl-like file: the first line, or NULL when absent. */
char *read_first_line (const char *path);

/* A directory stream on a duplicate of DIRFD, which stays open and the caller's, from the
 * first entry whatever was read through DIRFD before; NULL with errno. */
DIR *opendir_dup (int dirfd);

/* Copy IN's data, from its offset to its end, into OUT: by reference where the filesystem
 * can (FICLONE), else in the kernel (copy_file_range), else by read and write. The one
 * copier of file data: the layer store's (clone.c) and the CI drivers' volumes. *NO_REFLINK (NULL:
 * always try) says FICLONE was refused already, and is set when it is refused for want of
 * support. 0, or -1 with errno. */
int copy_fd_data (int in, int out, bool *no_reflink);

/* The one way a finished tree goes into place (a root, an overlay root's upper, a layer of
 * the layer store, a root moved to the trash): FROM, made whole beside TO on its filesystem,
 * renamed to TO unless TO exists, even as an empty directory (EEXIST: another's is there):
 * renameat2's RENAME_NOREPLACE, or where the filesystem has none, a check before a plain
 * rename (racy: for names the caller has locked). Files go through atomic-file.h. */
int tree_place (const char *from, const char *to);
/* mkdir -p with MODE for the directories it creates; -1 with errno on failure. */
int mkdir_p (const char *path, mode_t mode);
/* Every missing directory of PATH beneath ROOTFD (mode 0755), each component resolved with
 * RESOLVE_IN_ROOT, so that a symlink on the way (an image's /usr/src -> ../src, or an
 * absolute one) resolves inside the root, as it will in the chroot: an image's WorkingDir,
 * as docker and podman make it. 0, or -1 with errno. */
int mkdir_p_beneath (int rootfd, const char *path);
/* mkdir_p_beneath, then the directory PATH opened (O_PATH | O_DIRECTORY), resolved the same
 * way: where a file goes into a root from outside it. -1 with errno. */
int open_dir_in_root (int rootfd, const char *path);

/* Close every fd >= lowfd (close_range with a /proc/self/fd fallback). */
void close_fds_from (int lowfd);
/* The same, but for KEEP (none when KEEP < LOWFD). */
void close_fds_except (int lowfd, int keep);

bool str_has_prefix (const char *s, const char *prefix);
bool str_has_suffix (const char *s, const char *suffix);
/* S with every control character (a newline, an escape) replaced by '?', for a message that
 * quotes untrusted text and must stay one line; returns S. */
char *str_one_line (char *s);

/* Parse a byte count: digits, optionally followed by K, M, G or T (powers of 1024, an
 * optional "iB" or "B" after the letter). 0 on success, -1 (errno EINVAL or ERANGE) for
 * anything else: empty, signs, spaces, unknown suffixes, overflow. */
int parse_byte_size (const char *s, uint64_t *out);

/* A growable string. */
struct strbuf
{
  char *str;
  size_t len, cap;
};
void strbuf_append_len (struct strbuf *sb, const char *s, size_t len);
void strbuf_append (struct strbuf *sb, const char *s);
void strbuf_append_c (struct strbuf *sb, char c);
__attribute__((format (printf, 2, 3))) void strbuf_appendf (struct strbuf *sb, const char *format, ...);
/* The string (never NULL); the caller owns it and the strbuf is empty afterwards. */
char *strbuf_steal (struct strbuf *sb);

/* One function die() calls before exiting, so a failed create removes its staging
 * directory whatever failed. NULL unregisters. */
void set_die_cleanup (void (*fn) (void));
/* From now on a fatal error only prints its line and _exit()s: no cleanup, no atexit
 * handler, no stdio flush. For a vfork() child, which shares its parent's memory. */
void set_die_at_once (void);
/* Set while stderr's last line is not ended (a progress bar, store/progress.h): die() and
 * warn() end it first, so that their line is a line of its own. */
extern bool stderr_mid_line;
/* The positive number of seconds in environment variable VAR, FALLBACK when it is unset
 * or empty; die()s "invalid VAR '...': expected a positive number of seconds" otherwise. */
long env_seconds (const char *var, long fallback);
/* Environment variable VAR as a decimal number: 1 with it in *OUT, 0 when VAR is unset or
 * empty, -1 when it holds anything else. */
int env_number (const char *var, long *out);
/* A second slot, apart from the command's own: atomic-file.c's, which removes the
 * temporaries being written. */
void set_die_temp_cleanup (void (*fn) (void));
