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
 * were; the package-manager settings --root wrote (common/rootemu-files.h, recognised by
 * their exact content) are left out. Hard links are kept (the first name in walk order holds the data). Device nodes
 * cannot exist in a devroot; FIFOs and sockets are left out (create skips them anyway).
 *
 * The root is untrusted and may be in use: it is read by walk.c, which reaches every entry
 * from its parent's fd without following a symlink, reads each file through the fd it
 * checked (so the substitutions above too), and stops the export with one line when
 * something inside swaps or replaces a name meanwhile. So nothing outside the root ever
 * lands in the archive. A tree deeper than WALK_MAX_DEPTH is refused the same way.
 *
 * Streaming with flat memory: one directory level of names at a time, file data in fixed
 * blocks, zstd through its streaming API. The archive is written to a temporary file in
 * FILE's directory and renamed over FILE once complete; a failure removes it. The root's
 * name lock is held throughout, so a create or remove cannot run under us. */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/atomic-file.h"
#include "common/account.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/rootemu-files.h"
#include "common/save-target.h"
#include "common/roots.h"
#include "common/util.h"
#include "store/ship/export.h"
#include "store/oci/image-config.h"
#include "store/ship/compress-out.h"
#include "store/interrupt.h"
#include "store/progress.h"
#include "common/walk.h"

#define ACCOUNT_FILE_MAX (16 * 1024 * 1024)
struct exporter
{
  const char *name;
  struct archive *a;
  struct archive_entry *entry;
  struct export_filter f;
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
  archive_entry_set_mtime (x->entry, export_mtime (&x->f, st), 0);
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

bool
export_filter_written_empty (const struct export_filter *x, const struct walk_entry *e)
{
  const char *rel = e->path;
  bool empty = strncmp (rel, "dev/", 4) == 0 && strchr (rel + 4, '/') == NULL;
  for (size_t i = 0; i < META_N_COPIES && !empty; i++)
    {
      static const char *const copies[META_N_COPIES] = {
        [META_COPY_RESOLV_CONF] = "etc/resolv.conf",
        [META_COPY_HOSTS] = "etc/hosts",
      };
      if (x->host_copies[i] != NULL && strcmp (rel, copies[i]) == 0)
        {
          cleanup_free char *stamp = meta_copy_stamp (&e->st);
          empty = strcmp (stamp, x->host_copies[i]) == 0;
        }
    }
  return empty;
}

bool
export_filter_substitute (const struct export_filter *x, const struct walk_entry *e,
                          char **content, size_t *len)
{
  const char *rel = e->path;
  const char *line = NULL;
  if (strcmp (rel, "etc/passwd") == 0)
    line = x->added.passwd_line;
  else if (strcmp (rel, "etc/group") == 0)
    line = x->added.group_line;
  if (line != NULL)
    {
      size_t n;
      cleanup_free char *text = read_fd_all (e->fd, ACCOUNT_FILE_MAX, &n);
      if (text == NULL)
        die_with_error ("%s: cannot read /%s", x->what, rel);
      if (lseek (e->fd, 0, SEEK_SET) < 0)
        die_with_error ("%s: cannot rewind /%s", x->what, rel);
      if (strlen (text) != n)
        return false; /* not a text file: export it as it is */
      *content = without_line (text, line);
      *len = strlen (*content);
      return true;
    }
  bool empty = export_filter_written_empty (x, e);
  if (!empty)
    return false;
  *content = xstrdup ("");
  *len = 0;
  return true;
}

static void exported_block (size_t n, void *data);

static void
export_file (struct exporter *x, const struct walk_entry *e)
{
  const char *rel = e->path;
  if (e->first_link != NULL)
    {
      cleanup_free char *target = entry_path (e->first_link);
      archive_entry_set_hardlink (x->entry, target);
      archive_entry_set_size (x->entry, 0);
      check (x, archive_write_header (x->a, x->entry), rel);
      return;
    }
  cleanup_free char *content = NULL;
  size_t len;
  if (export_filter_substitute (&x->f, e, &content, &len))
    {
      write_content (x, rel, content, len);
      return;
    }
  archive_entry_set_size (x->entry, e->st.st_size);
  check (x, archive_write_header (x->a, x->entry), rel);
  export_copy_data (x->a, e, x->buf, x->f.what, "exporting", exported_block, x);
}

static void
exported_block (size_t n, void *data)
{
  struct exporter *x = data;
  interrupt_check_note (x->interrupted_note);
  x->done += (uint64_t) n;
  progress_update (&x->bar, x->done, 0);
}

/* Whether E is a setting --root wrote, byte for byte (read with pread: E's offset stays 0
 * for export_file). A second name (hard link) makes it the root's own. */
static bool
is_rootemu_setting (const struct walk_entry *e)
{
  if (!S_ISREG (e->st.st_mode) || e->st.st_nlink != 1 || e->fd < 0)
    return false;
  for (size_t i = 0; i < ROOTEMU_N_FILES; i++)
    {
      const struct rootemu_file *f = &rootemu_files[i];
      size_t want = strlen (f->content);
      if (strcmp (e->path, f->path + 1) != 0 || (size_t) e->st.st_size != want)
        continue;
      char buf[512];
      if (want >= sizeof buf)
        return false;
      ssize_t n = pread (e->fd, buf, want + 1, 0);
      return n >= 0 && (size_t) n == want && memcmp (buf, f->content, want) == 0;
    }
  return false;
}

/* One entry of the walk (walk.h: the root first, each directory's names in byte order). */
static enum walk_step
export_entry (const struct walk_entry *e, void *data)
{
  struct exporter *x = data;
  interrupt_check_note (x->interrupted_note);
  if (export_filter_skip (&x->f, e))
    return WALK_SKIP;
  begin_entry (x, e->path, &e->st);
  const char *shown = e->path[0] != '\0' ? e->path : "/";
  if (S_ISDIR (e->st.st_mode))
    check (x, archive_write_header (x->a, x->entry), shown);
  else if (S_ISREG (e->st.st_mode))
    export_file (x, e);
  else if (S_ISLNK (e->st.st_mode))
    {
      archive_entry_set_symlink (x->entry, e->target);
      check (x, archive_write_header (x->a, x->entry), shown);
    }
  /* FIFOs, sockets (and devices, which a devroot cannot hold): not exported. */
  return WALK_DESCEND;
}

/* ---- what create and entering added, shared with push (push.c) */

void
export_filter_init (struct export_filter *f, struct meta *m, const char *what)
{
  *f = (struct export_filter) { .what = what };
  for (size_t i = 0; i < META_N_COPIES; i++)
    f->host_copies[i] = steal_pointer (&m->host_copies[i]);
  f->clamp = export_source_date_epoch (&f->epoch);
  account_additions (&f->added);
  f->added_home = f->added.home + 1; /* "home/NAME" */
}

void
export_filter_clear (struct export_filter *f)
{
  free_strings (f->host_copies, META_N_COPIES);
  account_additions_clear (&f->added);
}

bool
export_filter_skip (const struct export_filter *f, const struct walk_entry *e)
{
  return strcmp (e->path, f->added_home) == 0 || is_rootemu_setting (e);
}

time_t
export_mtime (const struct export_filter *f, const struct stat *st)
{
  time_t mtime = st->st_mtim.tv_sec;
  if (f->clamp && mtime > f->epoch)
    mtime = f->epoch;
  return mtime;
}

void
export_copy_data (struct archive *a, const struct walk_entry *e, char *buf, const char *what,
                  const char *doing, void (*block) (size_t n, void *data), void *data)
{
  /* Exactly the size announced: a file that changes under us must not corrupt the tar. */
  for (off_t left = e->st.st_size; left > 0;)
    {
      size_t want = left < EXPORT_COPY_BLOCK ? (size_t) left : EXPORT_COPY_BLOCK;
      ssize_t n = read (e->fd, buf, want);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        die_with_error ("%s: cannot read /%s", what, e->path);
      if (n == 0)
        die ("%s: /%s shrank while being read: enter nothing in the root while %s it", what,
             e->path, doing);
      if (archive_write_data (a, buf, (size_t) n) != n)
        die ("%s: %s: %s", what, e->path, archive_error_string (a));
      left -= n;
      block ((size_t) n, data);
    }
}

/* ---- the output file */

/* An OCI-made root's image config (image-config.h), after the tree: it wins over a file of
 * that name in the root when the archive is unpacked. */
static void
export_image_config (struct exporter *x, int rootfd, const char *config)
{
  struct stat st; /* the root's times, as the tree's entries have theirs */
  if (fstat (rootfd, &st) < 0)
    die_with_error ("cannot export '%s': cannot stat the root", x->name);
  st.st_mode = S_IFDIR | 0755;
  begin_entry (x, IMAGE_CONFIG_DIR, &st);
  check (x, archive_write_header (x->a, x->entry), IMAGE_CONFIG_DIR);
  st.st_mode = S_IFREG | 0644;
  begin_entry (x, IMAGE_CONFIG_PATH, &st);
  write_content (x, IMAGE_CONFIG_PATH, config, strlen (config));
}

bool
export_source_date_epoch (time_t *out)
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

int
export_lock_root (const char *name, const char *verb, char **root, struct meta *m, int *upperfd)
{
  struct store_paths p;
  store_paths_from_env (&p);
  /* A root that does not exist is said as such, before its lock (whose directory a store
   * that never had a root lacks); then again under the lock, which a remove may have
   * waited for. */
  free (roots_existing_path (name, verb));
  int lockfd = lock_name_or_die (&p, name, verb);
  *root = roots_existing_path (name, verb);
  cleanup_free char *meta_path = paths_meta (&p, name);
  *m = (struct meta) { 0 };
  meta_read (meta_path, m);
  if (upperfd != NULL)
    *upperfd = -1;
  /* Before any download (unshare needs this process single-threaded). */
  if (upperfd != NULL && overlay_is_root (m) && meta_base_image (m) != NULL)
    {
      /* Push's diff: the upper itself, read as the root's own root would (this process's
       * own user namespace: a directory of mode 000 in it stays readable). */
      overlay_store_namespaces (name);
      cleanup_fd int dirfd = open (p.overlays, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      cleanup_free char *upper = xasprintf ("%s/upper", name);
      *upperfd = dirfd < 0 ? -1 : open_beneath (dirfd, upper, O_RDONLY | O_DIRECTORY);
      if (*upperfd < 0)
        die_with_error ("cannot %s '%s': cannot open its upper directory %s/%s", verb, name,
                        p.overlays, upper);
    }
  else
    /* An overlay root: what is read is the merged tree, mounted in this process's own
     * namespaces. */
    overlay_store_mount (&p, name, m);
  store_paths_clear (&p);
  return lockfd;
}

void
export_root (const char *name, const char *file, const char *compress, bool quiet)
{
  struct exporter x = { .name = name };
  name_check (name);
  compress = compress != NULL ? compress : save_compression (file);
  /* Before the root is read: a directory or a file that is no archive is never written over,
   * and a directory that cannot take FILE fails now, not after the whole root. */
  const char *why = save_target_refusal (file);
  if (why != NULL)
    die ("cannot export '%s': %s: %s%s", name, file, why,
         strcmp (why, SAVE_TARGET_NO_DIR) == 0 ? "" : " (it is left as it is)");
  /* The output first, as the caller: an overlay root is read in a user namespace of ours
   * (overlay.h), whose capabilities must not write where the caller could not. */
  cleanup_atomic_file struct atomic_file out;
  if (atomic_file_open (&out, AT_FDCWD, file, 0666) < 0)
    die_with_error ("cannot export '%s': cannot create a temporary file beside %s", name, file);
  int fd = out.fd;
  cleanup_free char *root = NULL;
  struct meta m;
  cleanup_fd int lockfd __attribute__((unused)) = export_lock_root (name, "export", &root, &m,
                                                                    NULL);
  cleanup_free char *image_config = image_config_json (&m.image);
  cleanup_free char *fwhat = xasprintf ("cannot export '%s'", name);
  export_filter_init (&x.f, &m, fwhat);
  meta_clear (&m);
  x.interrupted_note = xasprintf (" (%s not written)", file);

  cleanup_fd int rootfd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot export '%s': cannot open %s", name, root);

  x.a = archive_write_new ();
  x.entry = archive_entry_new ();
  x.buf = xmalloc (EXPORT_COPY_BLOCK);
  if (x.a == NULL || x.entry == NULL)
    die ("cannot export '%s': out of memory", name);
  check (&x, archive_write_set_format_pax_restricted (x.a), "the output");
  /* Every block full-sized, as tar(1) writes: the size does not depend on the filter. */
  check (&x, archive_write_set_bytes_in_last_block (x.a, 1), "the output");
  struct compress_out *out_c = compress_out_open (x.a, compress, fd, fwhat, x.interrupted_note);

  bool show = !quiet && isatty (STDERR_FILENO);
  cleanup_free char *label = xasprintf ("exporting %s", name);
  progress_begin (&x.bar, show, label, 0, 0);
  cleanup_free char *what = xasprintf ("cannot export '%s'", name);
  walk_tree (rootfd, what, &(struct walk_ops) { .entry = export_entry }, &x);
  if (image_config != NULL)
    export_image_config (&x, rootfd, image_config);
  check (&x, archive_write_close (x.a), "the output");
  progress_end (&x.bar);
  if (fsync (fd) < 0)
    die_with_error ("cannot export '%s': cannot write %s", name, file);
  interrupt_check_note (x.interrupted_note);
  if (atomic_file_commit (&out, 0) < 0)
    die_with_error ("cannot export '%s': cannot rename its temporary file to %s", name, file);
  interrupt_commit ();

  archive_write_free (x.a);
  archive_entry_free (x.entry);
  compress_out_free (out_c);
  free (x.buf);
  export_filter_clear (&x.f);
  free (x.interrupted_note);
}
