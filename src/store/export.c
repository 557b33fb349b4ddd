/* export: a devroot written back as a tarball that `create --from` (and any tar) reads,
 * so a root tailored with --root becomes a template (publish.c puts it in a catalogue).
 *
 * Reproducible: the tree is walked in byte order of names, every entry gets owner 0:0
 * (numeric, no names), no atime or ctime, a whole-second mtime clamped to
 * $SOURCE_DATE_EPOCH when set; gzip without its timestamp; zstd always in its
 * multi-threaded mode, whose output does not depend on the number of workers. So two
 * exports of an unchanged root are byte-identical.
 *
 * What create and entering added to the root is not the root's: the calling user's
 * /etc/passwd and /etc/group lines (exactly as account.c writes them) and their home are
 * left out; regular files directly in /dev (the templates' stand-in /dev/null, which a
 * chroot-mode `cmd >/dev/null` fills) and the host's resolv.conf and hosts that entering
 * copied in (recognised by the stamp in the root's metadata) are written empty, as they
 * were. Hard links are kept (the first name in walk order holds the data). Device nodes
 * cannot exist in a devroot; FIFOs and sockets are left out (create skips them anyway).
 *
 * Streaming with flat memory: one directory level of names at a time, file data in fixed
 * blocks, zstd through its streaming API. The archive is written to a temporary file in
 * FILE's directory and renamed over FILE once complete; a failure removes it. The root's
 * name lock is held throughout, so a create or remove cannot run under us. */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "common/account.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "store/export.h"
#include "store/interrupt.h"
#include "store/progress.h"

#define COPY_BLOCK (256 * 1024)
#define ACCOUNT_FILE_MAX (16 * 1024 * 1024)
#define ZSTD_EXPORT_LEVEL 3 /* zstd's default: fast; `zstd -19` the result for a smaller file */

/* Hard links: the first path seen for each (dev, inode) of a file with st_nlink > 1. An
 * open-addressing table, grown at half full. */
struct link_slot
{
  dev_t dev;
  ino_t ino;
  char *path; /* NULL: free */
};

struct links
{
  struct link_slot *slots;
  size_t cap, used;
};

static size_t
link_hash (dev_t dev, ino_t ino, size_t cap)
{
  uint64_t h = (uint64_t) ino * 0x9E3779B97F4A7C15ULL ^ (uint64_t) dev;
  return (size_t) (h ^ (h >> 29)) & (cap - 1);
}

static struct link_slot *
link_find (struct links *l, dev_t dev, ino_t ino)
{
  size_t i = link_hash (dev, ino, l->cap);
  while (l->slots[i].path != NULL && (l->slots[i].dev != dev || l->slots[i].ino != ino))
    i = (i + 1) & (l->cap - 1);
  return &l->slots[i];
}

/* The first path of (DEV, INO), or NULL after recording PATH as its first. */
static const char *
link_first (struct links *l, dev_t dev, ino_t ino, const char *path)
{
  if (2 * (l->used + 1) > l->cap)
    {
      struct links bigger = { .cap = l->cap ? 2 * l->cap : 1024 };
      bigger.slots = xcalloc (bigger.cap, sizeof *bigger.slots);
      for (size_t i = 0; i < l->cap; i++)
        if (l->slots[i].path != NULL)
          *link_find (&bigger, l->slots[i].dev, l->slots[i].ino) = l->slots[i];
      free (l->slots);
      bigger.used = l->used;
      *l = bigger;
    }
  struct link_slot *s = link_find (l, dev, ino);
  if (s->path != NULL)
    return s->path;
  *s = (struct link_slot) { .dev = dev, .ino = ino, .path = xstrdup (path) };
  l->used++;
  return NULL;
}

static void
links_clear (struct links *l)
{
  for (size_t i = 0; i < l->cap; i++)
    free (l->slots[i].path);
  free (l->slots);
  *l = (struct links) { 0 };
}

/* zstd as libarchive's output: the tar stream is compressed here with every core. */
struct zstd_out
{
  int fd;
  ZSTD_CCtx *cctx;
  void *buf;
  size_t cap;
};

static int
zstd_flush (struct zstd_out *z, ZSTD_inBuffer *in, ZSTD_EndDirective mode)
{
  for (;;)
    {
      ZSTD_outBuffer out = { z->buf, z->cap, 0 };
      size_t left = ZSTD_compressStream2 (z->cctx, &out, in, mode);
      if (ZSTD_isError (left))
        {
          errno = EIO;
          return -1;
        }
      if (write_all (z->fd, z->buf, out.pos) < 0)
        return -1;
      if (mode == ZSTD_e_end ? left == 0 : in->pos == in->size)
        return 0;
    }
}

static la_ssize_t
zstd_write_cb (struct archive *a, void *data, const void *buf, size_t len)
{
  ZSTD_inBuffer in = { buf, len, 0 };
  if (zstd_flush (data, &in, ZSTD_e_continue) < 0)
    {
      archive_set_error (a, errno, "zstd: %s", strerror (errno));
      return -1;
    }
  return (la_ssize_t) len;
}

static int
zstd_close_cb (struct archive *a, void *data)
{
  ZSTD_inBuffer in = { NULL, 0, 0 };
  if (zstd_flush (data, &in, ZSTD_e_end) < 0)
    {
      archive_set_error (a, errno, "zstd: %s", strerror (errno));
      return ARCHIVE_FATAL;
    }
  return ARCHIVE_OK;
}

struct exporter
{
  const char *name;
  struct archive *a;
  struct archive_entry *entry;
  bool clamp;
  time_t epoch;
  struct account_additions added;
  const char *added_home; /* "home/NAME": not exported */
  char *host_copies[META_N_COPIES]; /* the stamps of the copies entering made */
  struct links links;
  char *buf;
  struct progress bar;
  uint64_t done;
  char *interrupted_note; /* for interrupt_check_note: FILE was not written */
};

static void
check (struct exporter *x, int r, const char *path)
{
  if (r < ARCHIVE_WARN)
    die ("cannot export '%s': %s: %s", x->name, path, archive_error_string (x->a));
}

/* "./etc/passwd" for REL "etc/passwd"; "./" for the root itself (REL ""). */
static char *
entry_path (const char *rel)
{
  return xasprintf ("./%s", rel);
}

static void
begin_entry (struct exporter *x, const char *rel, const struct stat *st)
{
  archive_entry_clear (x->entry);
  cleanup_free char *path = entry_path (rel);
  archive_entry_set_pathname (x->entry, path);
  archive_entry_set_mode (x->entry, st->st_mode);
  archive_entry_set_uid (x->entry, 0);
  archive_entry_set_gid (x->entry, 0);
  time_t mtime = st->st_mtim.tv_sec;
  if (x->clamp && mtime > x->epoch)
    mtime = x->epoch;
  archive_entry_set_mtime (x->entry, mtime, 0);
}

/* CONTENT of LEN bytes as the data of the entry begun for REL. */
static void
write_content (struct exporter *x, const char *rel, const char *content, size_t len)
{
  archive_entry_set_size (x->entry, (la_int64_t) len);
  check (x, archive_write_header (x->a, x->entry), rel);
  if (len > 0 && archive_write_data (x->a, content, len) != (la_ssize_t) len)
    die ("cannot export '%s': %s: %s", x->name, rel, archive_error_string (x->a));
}

/* TEXT without the line LINE (whole lines only); a new string. */
static char *
without_line (const char *text, const char *line)
{
  size_t n = strlen (line);
  struct strbuf sb = { 0 };
  for (const char *p = text; *p != '\0';)
    {
      const char *nl = strchr (p, '\n');
      size_t len = nl != NULL ? (size_t) (nl - p) + 1 : strlen (p);
      bool ours = (len == n || (len == n + 1 && p[n] == '\n')) && strncmp (p, line, n) == 0;
      if (!ours)
        strbuf_append_len (&sb, p, len);
      p += len;
    }
  return strbuf_steal (&sb);
}

/* What this regular file is exported as, when not as it is: set *content (and *len). */
static bool
substitute (struct exporter *x, int dirfd, const char *rel, const char *leaf,
            const struct stat *st, char **content, size_t *len)
{
  const char *line = NULL;
  if (strcmp (rel, "etc/passwd") == 0)
    line = x->added.passwd_line;
  else if (strcmp (rel, "etc/group") == 0)
    line = x->added.group_line;
  if (line != NULL)
    {
      size_t n;
      cleanup_free char *text = load_file_at (dirfd, leaf, ACCOUNT_FILE_MAX, &n);
      if (text == NULL)
        die_with_error ("cannot export '%s': cannot read %s", x->name, rel);
      if (strlen (text) != n)
        return false; /* not a text file: export it as it is */
      *content = without_line (text, line);
      *len = strlen (*content);
      return true;
    }
  bool empty = strncmp (rel, "dev/", 4) == 0 && strchr (rel + 4, '/') == NULL;
  for (size_t i = 0; i < META_N_COPIES && !empty; i++)
    {
      static const char *const copies[META_N_COPIES] = {
        [META_COPY_RESOLV_CONF] = "etc/resolv.conf",
        [META_COPY_HOSTS] = "etc/hosts",
      };
      if (x->host_copies[i] != NULL && strcmp (rel, copies[i]) == 0)
        {
          cleanup_free char *stamp = meta_copy_stamp (st);
          empty = strcmp (stamp, x->host_copies[i]) == 0;
        }
    }
  if (!empty)
    return false;
  *content = xstrdup ("");
  *len = 0;
  return true;
}

static void
export_file (struct exporter *x, int dirfd, const char *rel, const char *leaf,
             const struct stat *st)
{
  if (st->st_nlink > 1)
    {
      const char *first = link_first (&x->links, st->st_dev, st->st_ino, rel);
      if (first != NULL)
        {
          cleanup_free char *target = entry_path (first);
          archive_entry_set_hardlink (x->entry, target);
          archive_entry_set_size (x->entry, 0);
          check (x, archive_write_header (x->a, x->entry), rel);
          return;
        }
    }
  cleanup_free char *content = NULL;
  size_t len;
  if (substitute (x, dirfd, rel, leaf, st, &content, &len))
    {
      write_content (x, rel, content, len);
      return;
    }
  cleanup_fd int fd = openat (dirfd, leaf, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot export '%s': cannot open %s", x->name, rel);
  archive_entry_set_size (x->entry, st->st_size);
  check (x, archive_write_header (x->a, x->entry), rel);
  /* Exactly the size announced: a file that changes under us must not corrupt the tar. */
  for (off_t left = st->st_size; left > 0;)
    {
      size_t want = left < COPY_BLOCK ? (size_t) left : COPY_BLOCK;
      ssize_t n = read (fd, x->buf, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die_with_error ("cannot export '%s': cannot read %s", x->name, rel);
      if (n == 0)
        die ("cannot export '%s': %s shrank while being read: enter nothing in the root "
             "while exporting it", x->name, rel);
      if (archive_write_data (x->a, x->buf, (size_t) n) != n)
        die ("cannot export '%s': %s: %s", x->name, rel, archive_error_string (x->a));
      left -= n;
      interrupt_check_note (x->interrupted_note);
      x->done += (uint64_t) n;
      progress_update (&x->bar, x->done, 0);
    }
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

/* The names in DIRFD except . and .., sorted bytewise. */
static char **
sorted_names (struct exporter *x, int dirfd, const char *rel)
{
  int fd = openat (dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    die_with_error ("cannot export '%s': cannot read directory /%s", x->name, rel);
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *de;
  errno = 0;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      if (n + 1 >= cap)
        {
          cap = cap ? 2 * cap : 32;
          names = xrealloc (names, cap * sizeof *names);
        }
      names[n++] = xstrdup (de->d_name);
      errno = 0;
    }
  if (errno != 0)
    die_with_error ("cannot export '%s': cannot read directory /%s", x->name, rel);
  closedir (d);
  if (names == NULL)
    names = xcalloc (1, sizeof *names);
  names[n] = NULL;
  qsort (names, n, sizeof *names, compare_names);
  return names;
}

/* Export the entries inside directory DIRFD, whose path is REL ("" for the root). */
static void
export_dir (struct exporter *x, int dirfd, const char *rel)
{
  cleanup_strv char **names = sorted_names (x, dirfd, rel);
  for (char **n = names; *n != NULL; n++)
    {
      interrupt_check_note (x->interrupted_note);
      cleanup_free char *child = rel[0] != '\0' ? xasprintf ("%s/%s", rel, *n) : xstrdup (*n);
      if (strcmp (child, x->added_home) == 0)
        continue;
      struct stat st;
      if (fstatat (dirfd, *n, &st, AT_SYMLINK_NOFOLLOW) < 0)
        die_with_error ("cannot export '%s': cannot stat /%s", x->name, child);
      begin_entry (x, child, &st);
      if (S_ISDIR (st.st_mode))
        {
          check (x, archive_write_header (x->a, x->entry), child);
          cleanup_fd int sub = openat (dirfd, *n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
          if (sub < 0)
            die_with_error ("cannot export '%s': cannot open directory /%s", x->name, child);
          export_dir (x, sub, child);
        }
      else if (S_ISREG (st.st_mode))
        export_file (x, dirfd, child, *n, &st);
      else if (S_ISLNK (st.st_mode))
        {
          char target[PATH_MAX];
          ssize_t len = readlinkat (dirfd, *n, target, sizeof target - 1);
          if (len < 0)
            die_with_error ("cannot export '%s': cannot read the symlink /%s", x->name, child);
          target[len] = '\0';
          archive_entry_set_symlink (x->entry, target);
          check (x, archive_write_header (x->a, x->entry), child);
        }
      /* FIFOs, sockets (and devices, which a devroot cannot hold): not exported. */
    }
}

/* ---- the output file */

static char *cleanup_tmp;

static void
export_cleanup (void)
{
  if (cleanup_tmp != NULL)
    unlink (cleanup_tmp);
}

static bool
source_date_epoch (time_t *out)
{
  const char *s = getenv ("SOURCE_DATE_EPOCH");
  if (s == NULL || s[0] == '\0')
    return false;
  char *end;
  errno = 0;
  long long v = strtoll (s, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0)
    die ("invalid SOURCE_DATE_EPOCH '%s': expected a number of seconds since 1970", s);
  *out = (time_t) v;
  return true;
}

static void
set_filter (struct exporter *x, const char *compress, int fd, struct zstd_out *z)
{
  long cores = sysconf (_SC_NPROCESSORS_ONLN);
  if (cores < 1)
    cores = 1;
  int r = ARCHIVE_OK;
  if (strcmp (compress, "gzip") == 0)
    {
      r = archive_write_add_filter_gzip (x->a);
      if (r == ARCHIVE_OK)
        r = archive_write_set_filter_option (x->a, "gzip", "timestamp", NULL);
    }
  else if (strcmp (compress, "xz") == 0)
    {
      cleanup_free char *threads = xasprintf ("%ld", cores);
      r = archive_write_add_filter_xz (x->a);
      if (r == ARCHIVE_OK)
        r = archive_write_set_filter_option (x->a, "xz", "threads", threads);
    }
  if (r != ARCHIVE_OK)
    die ("cannot export '%s': %s compression: %s", x->name, compress,
         archive_error_string (x->a));
  if (strcmp (compress, "zstd") != 0)
    {
      check (x, archive_write_open_fd (x->a, fd), "the output");
      return;
    }
  /* At least one worker: zstd's output then does not depend on how many. */
  z->fd = fd;
  z->cctx = ZSTD_createCCtx ();
  z->cap = ZSTD_CStreamOutSize ();
  z->buf = xmalloc (z->cap);
  if (z->cctx == NULL
      || ZSTD_isError (ZSTD_CCtx_setParameter (z->cctx, ZSTD_c_compressionLevel,
                                               ZSTD_EXPORT_LEVEL))
      || ZSTD_isError (ZSTD_CCtx_setParameter (z->cctx, ZSTD_c_checksumFlag, 1)))
    die ("cannot export '%s': cannot set up zstd", x->name);
  /* A libzstd built without threads refuses workers: single-threaded output then. */
  ZSTD_CCtx_setParameter (z->cctx, ZSTD_c_nbWorkers, (int) cores);
  check (x, archive_write_open (x->a, z, NULL, zstd_write_cb, zstd_close_cb), "the output");
}

void
export_root (const char *name, const char *file, const char *compress, bool quiet)
{
  struct exporter x = { .name = name };
  name_check (name);
  compress = compress != NULL ? compress : "zstd";
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_fd int lockfd __attribute__((unused)) = lock_name_or_die (&p, name, "export");
  cleanup_free char *root = store_existing_root (name, "export");
  cleanup_free char *meta_path = paths_meta (&p, name);
  store_paths_clear (&p);
  struct meta m = { 0 };
  if (meta_read (meta_path, &m) == 0)
    for (size_t i = 0; i < META_N_COPIES; i++)
      x.host_copies[i] = steal_pointer (&m.host_copies[i]);
  meta_clear (&m);
  x.clamp = source_date_epoch (&x.epoch);
  x.interrupted_note = xasprintf (" (%s not written)", file);
  account_additions (&x.added);
  x.added_home = x.added.home + 1; /* "home/NAME" */

  cleanup_fd int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot export '%s': cannot open %s", name, root);
  struct stat rst;
  if (fstat (rootfd, &rst) < 0)
    die_with_error ("cannot export '%s': cannot stat %s", name, root);

  cleanup_free char *tmp = xasprintf ("%s.XXXXXX", file);
  cleanup_fd int fd = mkstemp (tmp);
  if (fd < 0)
    die_with_error ("cannot export '%s': cannot create a temporary file beside %s", name, file);
  cleanup_tmp = tmp;
  set_die_cleanup (export_cleanup);
  mode_t mask = umask (0);
  umask (mask);
  if (fchmod (fd, 0666 & ~mask) < 0)
    die_with_error ("cannot export '%s': cannot set the mode of %s", name, tmp);

  x.a = archive_write_new ();
  x.entry = archive_entry_new ();
  x.buf = xmalloc (COPY_BLOCK);
  if (x.a == NULL || x.entry == NULL)
    die ("cannot export '%s': out of memory", name);
  check (&x, archive_write_set_format_pax_restricted (x.a), "the output");
  /* Every block full-sized, as tar(1) writes: the size does not depend on the filter. */
  check (&x, archive_write_set_bytes_in_last_block (x.a, 1), "the output");
  struct zstd_out z = { 0 };
  set_filter (&x, compress, fd, &z);

  bool show = !quiet && isatty (STDERR_FILENO);
  cleanup_free char *label = xasprintf ("exporting %s", name);
  progress_begin (&x.bar, show, label, 0, 0);
  begin_entry (&x, "", &rst);
  check (&x, archive_write_header (x.a, x.entry), "/");
  export_dir (&x, rootfd, "");
  check (&x, archive_write_close (x.a), "the output");
  progress_end (&x.bar);
  if (fsync (fd) < 0)
    die_with_error ("cannot export '%s': cannot write %s", name, tmp);
  interrupt_check_note (x.interrupted_note);
  if (rename (tmp, file) < 0)
    die_with_error ("cannot export '%s': cannot rename %s to %s", name, tmp, file);
  interrupt_commit ();
  set_die_cleanup (NULL);
  cleanup_tmp = NULL;

  archive_write_free (x.a);
  archive_entry_free (x.entry);
  ZSTD_freeCCtx (z.cctx);
  free (z.buf);
  free (x.buf);
  links_clear (&x.links);
  for (size_t i = 0; i < META_N_COPIES; i++)
    free (x.host_copies[i]);
  account_additions_clear (&x.added);
  free (x.interrupted_note);
}
