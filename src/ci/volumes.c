/* Copying the Actions runner's volumes into and out of a chroot-mode devroot (volumes.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ci/volumes.h"
#include "common/atomic-file.h"
#include "common/roots.h"
#include "common/util.h"
#include "common/walk.h"

bool
ci_volume_target_valid (const char *target, char **normal)
{
  if (target[0] != '/')
    return false;
  struct strbuf sb = { 0 };
  const char *p = target;
  while (*p != '\0')
    {
      while (*p == '/')
        p++;
      size_t len = strcspn (p, "/");
      if (len == 0)
        break;
      if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
        {
          free (strbuf_steal (&sb));
          return false;
        }
      strbuf_append_c (&sb, '/');
      strbuf_append_len (&sb, p, len);
      p += len;
    }
  *normal = strbuf_steal (&sb);
  if ((*normal)[0] == '\0')
    {
      free (*normal);
      *normal = NULL;
      return false;
    }
  return true;
}

/* ---- writing the destination: one component at a time, never through a symlink */

static int
open_dir_beneath (int dirfd, const char *name)
{
  return open_beneath (dirfd, name, O_RDONLY | O_DIRECTORY);
}

/* The directory NAME in DIRFD, made when missing; anything else there (a symlink, a file)
 * is removed first, as a mount there would have hidden it. Made writable for us: the
 * caller gives it its own mode afterwards. */
static int
ensure_dir (int dirfd, const char *name, const char *shown)
{
  for (int attempt = 0; attempt < 3; attempt++)
    {
      int fd = open_dir_beneath (dirfd, name);
      if (fd >= 0)
        {
          struct stat st;
          if (fstat (fd, &st) == 0 && (st.st_mode & S_IRWXU) != S_IRWXU)
            fchmod (fd, (st.st_mode & 07777) | S_IRWXU);
          return fd;
        }
      if (errno == ELOOP || errno == ENOTDIR || errno == EXDEV)
        {
          if (rm_rf_at (dirfd, name) < 0)
            die_with_error ("cannot remove %s to make a directory there", shown);
        }
      else if (errno != ENOENT)
        die_with_error ("cannot open the directory %s", shown);
      if (mkdirat (dirfd, name, 0700) < 0 && errno != EEXIST)
        die_with_error ("cannot create the directory %s", shown);
    }
  die ("cannot create the directory %s: it keeps changing", shown);
}

/* The directory at REL (no leading '/') beneath ROOTFD: made (CREATE) or only opened. */
static int
open_path_beneath (int rootfd, const char *rel, bool create, const char *shown)
{
  int cur = dup (rootfd);
  if (cur < 0)
    die_with_error ("cannot open %s", shown);
  cleanup_free char *copy = xstrdup (rel);
  char *save = NULL;
  for (char *c = strtok_r (copy, "/", &save); c != NULL; c = strtok_r (NULL, "/", &save))
    {
      int next = create ? ensure_dir (cur, c, shown) : open_dir_beneath (cur, c);
      close (cur);
      if (next < 0)
        return -1;
      cur = next;
    }
  return cur;
}

/* ---- the mirror: a walk of the source, each entry made the same in the destination */

struct level
{
  int fd;        /* the destination directory (the volume's own at depth 0: not ours) */
  mode_t mode;   /* the source directory's, given once it is filled */
  char **seen;   /* the source's names in it, in walk (byte) order */
  size_t n, cap;
};

struct mirror
{
  const char *src_shown, *dst_shown; /* for messages: "/__w", "/home/r/_work" */
  char **skip;                       /* paths in the volume left to nested volumes */
  struct level *levels;
  size_t cap;
  unsigned long specials;
  char *first_special;
};

static bool
skipped (const struct mirror *m, const char *path)
{
  for (size_t i = 0; m->skip != NULL && m->skip[i] != NULL; i++)
    if (strcmp (m->skip[i], path) == 0)
      return true;
  return false;
}

static int
compare_names (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
level_seen (struct level *l, const char *name)
{
  if (l->n + 1 >= l->cap)
    {
      l->cap = l->cap ? 2 * l->cap : 32;
      l->seen = xrealloc (l->seen, l->cap * sizeof *l->seen);
    }
  l->seen[l->n++] = xstrdup (name);
  l->seen[l->n] = NULL;
}

/* A directory at NAME goes before a file or symlink takes its place. */
static void
clear_directory (int dirfd, const char *name, const char *shown)
{
  struct stat st;
  if (fstatat (dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR (st.st_mode)
      && rm_rf_at (dirfd, name) < 0)
    die_with_error ("cannot replace the directory %s", shown);
}

static void
copy_file (const struct walk_entry *e, int dirfd, const char *shown)
{
  struct stat st;
  if (fstatat (dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG (st.st_mode)
      && st.st_size == e->st.st_size && st.st_mtim.tv_sec == e->st.st_mtim.tv_sec
      && st.st_mtim.tv_nsec == e->st.st_mtim.tv_nsec
      && (st.st_mode & 0777) == (e->st.st_mode & 0777))
    return;
  cleanup_atomic_file struct atomic_file f;
  if (atomic_file_open (&f, dirfd, e->name, 0600) < 0)
    die_with_error ("cannot write %s", shown);
  /* No set-id bits: a file the step made is not to become set-id on the host. */
  struct timespec times[2] = { e->st.st_atim, e->st.st_mtim };
  if (copy_fd_data (e->fd, f.fd, NULL) < 0 || fchmod (f.fd, e->st.st_mode & 0777) < 0
      || futimens (f.fd, times) < 0)
    die_with_error ("cannot write %s", shown);
  clear_directory (dirfd, e->name, shown);
  if (atomic_file_commit (&f, 0) < 0)
    die_with_error ("cannot write %s", shown);
}

static void
copy_symlink (const struct walk_entry *e, int dirfd, const char *shown)
{
  char target[4096];
  ssize_t n = readlinkat (dirfd, e->name, target, sizeof target - 1);
  if (n >= 0)
    {
      target[n] = '\0';
      if (strcmp (target, e->target) == 0)
        return;
    }
  clear_directory (dirfd, e->name, shown);
  if (atomic_symlink (dirfd, e->name, e->target) < 0)
    die_with_error ("cannot write the symlink %s", shown);
}

static enum walk_step
mirror_entry (const struct walk_entry *e, void *data)
{
  struct mirror *m = data;
  if (e->depth >= m->cap)
    {
      size_t cap = m->cap ? 2 * m->cap : 16;
      m->levels = xrealloc (m->levels, cap * sizeof *m->levels);
      memset (m->levels + m->cap, 0, (cap - m->cap) * sizeof *m->levels);
      m->cap = cap;
    }
  if (e->depth == 0)
    return WALK_DESCEND; /* levels[0] is the caller's */
  struct level *parent = &m->levels[e->depth - 1];
  level_seen (parent, e->name);
  if (skipped (m, e->path))
    return WALK_SKIP;
  cleanup_free char *shown = xasprintf ("%s/%s", m->dst_shown, e->path);
  if (S_ISDIR (e->st.st_mode))
    {
      m->levels[e->depth] = (struct level) {
        .fd = ensure_dir (parent->fd, e->name, shown), .mode = e->st.st_mode & 07777,
      };
      return WALK_DESCEND;
    }
  if (S_ISREG (e->st.st_mode))
    copy_file (e, parent->fd, shown);
  else if (S_ISLNK (e->st.st_mode))
    copy_symlink (e, parent->fd, shown);
  else if (m->specials++ == 0)
    m->first_special = xasprintf ("%s/%s", m->src_shown, e->path);
  return WALK_SKIP;
}

/* After a directory's entries: remove what the source no longer has, give it its mode. */
static void
mirror_leave (const struct walk_entry *e, void *data)
{
  struct mirror *m = data;
  struct level *l = &m->levels[e->depth];
  int fd = openat (l->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir (fd) : NULL;
  if (d == NULL)
    die_with_error ("cannot read the directory %s/%s", m->dst_shown, e->path);
  char **extra = NULL;
  size_t n_extra = 0;
  struct dirent *de;
  while ((de = readdir (d)) != NULL)
    {
      if (strcmp (de->d_name, ".") == 0 || strcmp (de->d_name, "..") == 0)
        continue;
      const char *name = de->d_name;
      if (l->n > 0 && bsearch (&name, l->seen, l->n, sizeof *l->seen, compare_names) != NULL)
        continue;
      cleanup_free char *path = e->path[0] != '\0' ? xasprintf ("%s/%s", e->path, name)
                                                   : xstrdup (name);
      if (skipped (m, path))
        continue;
      extra = xrealloc (extra, (n_extra + 2) * sizeof *extra);
      extra[n_extra++] = xstrdup (name);
      extra[n_extra] = NULL;
    }
  closedir (d);
  for (size_t i = 0; i < n_extra; i++)
    if (rm_rf_at (l->fd, extra[i]) < 0)
      die_with_error ("cannot remove %s/%s%s%s", m->dst_shown, e->path,
                      e->path[0] != '\0' ? "/" : "", extra[i]);
  strv_free (extra);
  strv_free (l->seen);
  if (e->depth > 0)
    {
      fchmod (l->fd, l->mode);
      close (l->fd);
    }
  *l = (struct level) { .fd = -1 };
}

/* Mirror the directory SRCFD onto DSTFD, leaving SKIP alone. */
static void
mirror (int srcfd, int dstfd, const char *src_shown, const char *dst_shown, char **skip,
        const char *warn_what)
{
  struct mirror m = { .src_shown = src_shown, .dst_shown = dst_shown, .skip = skip };
  m.cap = 16;
  m.levels = xcalloc (m.cap, sizeof *m.levels);
  m.levels[0].fd = dstfd;
  static const struct walk_ops ops = { .entry = mirror_entry, .leave = mirror_leave };
  cleanup_free char *what = xasprintf ("cannot copy %s to %s", src_shown, dst_shown);
  walk_tree (srcfd, what, &ops, &m);
  free (m.levels);
  if (m.specials > 0)
    {
      if (m.specials == 1)
        fprintf (stderr, "%s: github-hook: %s: not copied %s (a device, FIFO or socket)\n",
                 PROGRAM_NAME, m.first_special, warn_what);
      else
        fprintf (stderr,
                 "%s: github-hook: %s and %lu more: not copied %s (devices, FIFOs or "
                 "sockets)\n", PROGRAM_NAME, m.first_special, m.specials - 1, warn_what);
    }
  free (m.first_special);
}

/* What V's copy leaves alone, relative to V's directories: the targets of other volumes
 * strictly inside V's ("_temp" for /__w/_temp in /__w), which their mounts would shadow,
 * and the sources strictly inside V's source ("_github_home" for _temp/_github_home in
 * _temp), which are another volume's: mounted, both names would be one directory, and two
 * copies of it would undo each other's removals. */
static char **
nested (const struct ci_volume *all, size_t n, const struct ci_volume *v)
{
  char **skip = xcalloc (2 * n + 1, sizeof *skip);
  size_t k = 0, len = strlen (v->target), slen = strlen (v->source);
  while (slen > 1 && v->source[slen - 1] == '/')
    slen--;
  for (size_t i = 0; i < n; i++)
    {
      if (strncmp (all[i].target, v->target, len) == 0 && all[i].target[len] == '/')
        skip[k++] = xstrdup (all[i].target + len + 1);
      if (&all[i] != v && strncmp (all[i].source, v->source, slen) == 0
          && all[i].source[slen] == '/')
        {
          char *normal;
          /* The same normalisation as a target's: "a//b/" is "a/b". */
          if (ci_volume_target_valid (all[i].source + slen, &normal))
            skip[k++] = xstrdup (normal + 1), free (normal);
        }
    }
  return skip;
}

static int
open_root (const char *root)
{
  int fd = open (root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    die_with_error ("cannot open the devroot %s", root);
  return fd;
}

void
ci_volumes_copy_in (const char *root, const struct ci_volume *v, size_t n)
{
  cleanup_fd int rootfd = open_root (root);
  for (size_t i = 0; i < n; i++)
    {
      cleanup_fd int src = open (v[i].source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (src < 0)
        die_with_error ("cannot open the runner's directory %s", v[i].source);
      cleanup_fd int dst = open_path_beneath (rootfd, v[i].target + 1, true, v[i].target);
      cleanup_strv char **skip = nested (v, n, &v[i]);
      mirror (src, dst, v[i].source, v[i].target, skip, "into the devroot");
    }
}

bool
ci_volumes_copy_back (const char *root, const struct ci_volume *v, size_t n)
{
  cleanup_fd int rootfd = open_root (root);
  bool ok = true;
  for (size_t i = 0; i < n; i++)
    {
      if (v[i].read_only)
        continue;
      cleanup_fd int src = open_path_beneath (rootfd, v[i].target + 1, false, v[i].target);
      if (src < 0)
        {
          fprintf (stderr, "%s: github-hook: %s: not copied back to %s: %s inside the "
                           "devroot\n", PROGRAM_NAME, v[i].target, v[i].source,
                   errno == ENOENT ? "removed" : "no longer a directory");
          ok = false;
          continue;
        }
      cleanup_fd int dst = open (v[i].source, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dst < 0)
        die_with_error ("cannot open the runner's directory %s", v[i].source);
      cleanup_strv char **skip = nested (v, n, &v[i]);
      mirror (src, dst, v[i].target, v[i].source, skip, "back from the devroot");
    }
  return ok;
}
