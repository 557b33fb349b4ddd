/* publish DIR ARCHIVE...: put exported roots where a static web server can serve them as
 * templates. Each ARCHIVE (NAME.tar.zst, .tar.gz, .tar.xz or .tar) is hard-linked into DIR,
 * or copied where it cannot be (another filesystem), under its own file name, and DIR's
 * catalogue, DIR/index, gets an entry NAME with the file's SHA-256 and size, in the INI
 * format catalog.c reads and rootfs-templates/build-catalog writes. Entries of other names
 * are kept; one of the same name is replaced.
 *
 * Nothing is ever half-written where a client could read it: each file and the catalogue
 * are written to a temporary name in DIR and renamed into place, the catalogue last, so a
 * client reading it finds every file it lists. Publishers of the same DIR take turns on a
 * lock file, DIR/.index.lock, which the holder removes before it lets go, so the served
 * directory keeps nothing of ours; a publisher that was waiting on the removed file finds
 * it is no longer DIR's and takes the lock again on a new one. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/util.h"
#include "store/cache/catalog.h"
#include "store/cache/digest.h"
#include "store/interrupt.h"
#include "store/ship/publish.h"

#define CATALOG_FILE "index"
#define COPY_BLOCK (256 * 1024)
/* An interrupted publish leaves the catalogue as it was (archives already placed stay,
 * unlisted). */
#define INTERRUPTED_NOTE " (the catalogue is unchanged)"

static const char *const archive_suffixes[] = { ".tar.zst", ".tar.gz", ".tar.xz", ".tar" };

/* The template name of ARCHIVE's file name BASE: BASE without its suffix; dies when BASE
 * has none of ours or what is left is not a valid name. */
static char *
template_name (const char *archive, const char *base)
{
  for (size_t i = 0; i < N_ELEMENTS (archive_suffixes); i++)
    {
      size_t n = strlen (base), k = strlen (archive_suffixes[i]);
      if (n > k && strcmp (base + n - k, archive_suffixes[i]) == 0)
        {
          char *name = xasprintf ("%.*s", (int) (n - k), base);
          if (!name_is_valid (name))
            die ("publish: %s: '%s' is not a valid template name ([A-Za-z0-9][A-Za-z0-9._-]"
                 "{0,63})", archive, name);
          return name;
        }
    }
  die ("publish: %s: not an exported archive (expected NAME.tar.zst, .tar.gz, .tar.xz or "
       ".tar)", archive);
}

#define LOCK_FILE "." CATALOG_FILE ".lock"

static int cleanup_dirfd = -1;

/* On die(), once the lock is held: the lock file (atomic-file.c removes the temporary). */
static void
publish_cleanup (void)
{
  unlinkat (cleanup_dirfd, LOCK_FILE, 0);
}

/* DIR's lock (LOCK_FILE), held: the fd of the file that is DIR's lock file now. */
static int
lock_dir (int dirfd, const char *dir)
{
  for (;;)
    {
      int fd = openat (dirfd, LOCK_FILE, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd < 0 || flock (fd, LOCK_EX) < 0)
        die_with_error ("publish: cannot lock %s/" LOCK_FILE, dir);
      struct stat held, now;
      if (fstat (fd, &held) == 0 && fstatat (dirfd, LOCK_FILE, &now, AT_SYMLINK_NOFOLLOW) == 0
          && held.st_dev == now.st_dev && held.st_ino == now.st_ino)
        {
          cleanup_dirfd = dirfd;
          set_die_cleanup (publish_cleanup);
          return fd;
        }
      close (fd); /* its holder removed it meanwhile: try the new one */
    }
}

/* Copy SRC (an open regular file, at its start) into F's temporary, for BASE in DIR. */
static void
copy_file (int src, const char *archive, struct atomic_file *f, const char *dir,
           const char *base)
{
  cleanup_free char *buf = xmalloc (COPY_BLOCK);
  for (;;)
    {
      ssize_t n = read (src, buf, COPY_BLOCK);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die_with_error ("publish: cannot read %s", archive);
      if (n == 0)
        break;
      if (write_all (f->fd, buf, (size_t) n) < 0)
        die_with_error ("publish: cannot write %s/%s", dir, base);
      interrupt_check_note (INTERRUPTED_NOTE);
    }
}

/* Put ARCHIVE into DIR as BASE; fill E's sha256 and size. */
static void
place_archive (const char *archive, const char *base, int dirfd, const char *dir,
               struct catalog_entry *e)
{
  /* ARCHIVE may sit in a root something runs in (exported there): never through a
   * symlink (which could name a file of yours the web server should not serve), never
   * blocking on a FIFO. */
  cleanup_fd int src = open (archive, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st;
  if (src < 0 && errno == ELOOP)
    die ("publish: %s: a symlink: name the archive itself", archive);
  if (src < 0 || fstat (src, &st) < 0)
    die_with_error ("publish: cannot open %s", archive);
  if (!S_ISREG (st.st_mode))
    die ("publish: %s: not a regular file", archive);
  if (sha256_fd (src, UINT64_MAX, e->sha256) < 0)
    die_with_error ("publish: cannot read %s", archive);
  e->size = (uint64_t) st.st_size;
  e->has_size = true;

  struct stat there;
  if (fstatat (dirfd, base, &there, AT_SYMLINK_NOFOLLOW) == 0 && there.st_dev == st.st_dev
      && there.st_ino == st.st_ino)
    return; /* already published: ARCHIVE is DIR's file */
  /* Linked where it can be (atomic-file.h: what was hashed, or nothing), else copied from
   * the fd that was hashed; either way renamed into place, or nothing left. */
  cleanup_atomic_file struct atomic_file f;
  bool linked = atomic_file_link (&f, dirfd, base, src, archive) == 0;
  if (!linked)
    {
      atomic_file_discard (&f);
      if (lseek (src, 0, SEEK_SET) < 0)
        die_with_error ("publish: cannot rewind %s", archive);
      if (atomic_file_open (&f, dirfd, base, 0666) < 0)
        die_with_error ("publish: cannot create a file in %s", dir);
      copy_file (src, archive, &f, dir, base);
    }
  if (atomic_file_commit (&f, ATOMIC_FSYNC) < 0)
    die_with_error ("publish: cannot write %s/%s", dir, base);
}

static struct catalog_entry *
find_or_add (struct catalog *cat, const char *name)
{
  for (size_t i = 0; i < cat->n_entries; i++)
    if (strcmp (cat->entries[i].name, name) == 0)
      return &cat->entries[i];
  cat->entries = xrealloc (cat->entries, (cat->n_entries + 1) * sizeof *cat->entries);
  struct catalog_entry *e = &cat->entries[cat->n_entries++];
  *e = (struct catalog_entry) { .name = xstrdup (name), .description = xstrdup ("") };
  return e;
}

static void
write_catalog (int dirfd, const char *dir, const struct catalog *cat)
{
  struct strbuf sb = { 0 };
  cleanup_free char *now = format_rfc3339_utc (time (NULL));
  strbuf_appendf (&sb, "# enter-devroot template catalogue, written by enter-devroot publish "
                       "on %s\n# url is relative to this file; sha256 and size are of the "
                       "file at url.\n", now);
  for (size_t i = 0; i < cat->n_entries; i++)
    {
      const struct catalog_entry *e = &cat->entries[i];
      strbuf_appendf (&sb, "\n[%s]\nurl = %s\nsha256 = %s\n", e->name, e->url, e->sha256);
      if (e->has_size)
        strbuf_appendf (&sb, "size = %ju\n", (uintmax_t) e->size);
      if (e->description[0] != '\0')
        strbuf_appendf (&sb, "description = %s\n", e->description);
    }
  cleanup_free char *text = strbuf_steal (&sb);
  if (atomic_file_write (dirfd, CATALOG_FILE, text, strlen (text), 0666, ATOMIC_FSYNC) < 0)
    die_with_error ("publish: cannot write %s/" CATALOG_FILE, dir);
}

void
publish (const char *dir, char *const *archives, const char *description, bool quiet)
{
  if (mkdir (dir, 0777) < 0 && errno != EEXIST)
    die_with_error ("publish: cannot create %s", dir);
  cleanup_fd int dirfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0)
    die_with_error ("publish: cannot open %s", dir);
  cleanup_fd int lockfd = lock_dir (dirfd, dir);

  struct catalog cat = { 0 };
  size_t len;
  cleanup_free char *text = load_file_at (dirfd, CATALOG_FILE, CATALOG_MAX_BYTES, &len);
  if (text == NULL && errno != ENOENT)
    die_with_error ("publish: cannot read %s/" CATALOG_FILE, dir);
  cleanup_free char *error = NULL;
  if (text != NULL && catalog_parse (text, len, &cat, &error) < 0)
    die ("publish: %s/" CATALOG_FILE ": %s (fix or remove it)", dir, error);

  /* Every name first: a bad one stops the command before anything is written. */
  size_t n = strv_length (archives);
  cleanup_strv char **names = xcalloc (n + 1, sizeof *names);
  cleanup_strv char **bases = xcalloc (n + 1, sizeof *bases);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *copy = xstrdup (archives[i]);
      bases[i] = xstrdup (basename (copy));
      names[i] = template_name (archives[i], bases[i]);
    }
  for (size_t i = 0; i < n; i++)
    {
      struct catalog_entry *e = find_or_add (&cat, names[i]);
      free (e->url);
      e->url = xstrdup (bases[i]);
      if (description != NULL)
        {
          free (e->description);
          e->description = xstrdup (description);
        }
      place_archive (archives[i], bases[i], dirfd, dir, e);
      if (!quiet)
        printf ("%s: %s (%ju bytes, sha256 %s)\n", e->name, e->url, (uintmax_t) e->size,
                e->sha256);
    }
  interrupt_check_note (INTERRUPTED_NOTE);
  write_catalog (dirfd, dir, &cat);
  interrupt_commit ();
  if (unlinkat (dirfd, LOCK_FILE, 0) < 0)
    die_with_error ("publish: cannot remove %s/" LOCK_FILE, dir);
  set_die_cleanup (NULL);
  catalog_clear (&cat);
}
