/* What an entry carries besides its data: times, extended attributes (the rules are at the
 * top of extract.c) and the directory modes and times applied at the end, deepest first. */
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "common/util.h"
#include "store/extract/extract-internal.h"

void
entry_times (struct archive_entry *e, struct timespec times[2])
{
  times[0].tv_sec = 0;
  times[0].tv_nsec = UTIME_OMIT;
  times[1] = times[0];
  if (archive_entry_atime_is_set (e))
    {
      times[0].tv_sec = archive_entry_atime (e);
      times[0].tv_nsec = archive_entry_atime_nsec (e);
    }
  if (archive_entry_mtime_is_set (e))
    {
      times[1].tv_sec = archive_entry_mtime (e);
      times[1].tv_nsec = archive_entry_mtime_nsec (e);
    }
}

static void
drop_xattr (struct extractor *x, enum xattr_drop_kind kind, const char *name, const char *entry,
            int error)
{
  struct xattr_drops *d = &x->drops;
  if (d->count[kind]++ == 0)
    {
      d->example[kind] = xasprintf ("%s on '%s'", name, entry);
      d->error[kind] = error;
    }
}

/* Set E's extended attributes on FD, the file or directory the entry was created or
 * reopened as (fsetxattr: never a path, so nothing is followed); FD -1 for an entry that
 * cannot carry them (a symlink: the kernel refuses user.* there). The rules are at the top
 * of extract.c. Call it after the data is written: a write clears security.capability. */
int
restore_xattrs (struct extractor *x, struct archive_entry *e, const char *entry, int fd)
{
  const char *name;
  const void *value;
  size_t size;
  archive_entry_xattr_reset (e);
  while (archive_entry_xattr_next (e, &name, &value, &size) == ARCHIVE_OK)
    {
      /* Never user.overlay.* (nor trusted.*): a layer is an overlay's lowerdir (layers.h),
       * where they would steer the overlay. Dropped, not refused: rootless podman's own
       * exports carry user.overlay.origin and the like. */
      bool capability = strcmp (name, XATTR_CAPABILITY) == 0;
      if (!capability && (!str_has_prefix (name, XATTR_USER_PREFIX)
                          || str_has_prefix (name, XATTR_OVERLAY_PREFIX)))
        {
          drop_xattr (x, DROP_NEVER, name, entry, 0);
          continue;
        }
      enum xattr_drop_kind kind = capability ? DROP_CAPABILITY : DROP_USER;
      if (fd < 0)
        drop_xattr (x, kind, name, entry, EPERM);
      else if (fsetxattr (fd, name, value, size, 0) < 0)
        drop_xattr (x, kind, name, entry, errno);
    }
  return 0;
}

/* The one warning for every extended attribute a create dropped, by kind, each with its
 * first instance and reason. */
void
warn_xattr_drops (struct extractor *x)
{
  static const char *const why[N_DROP_KINDS] = {
    [DROP_NEVER] = "only user.* (not user.overlay.*) and security.capability are restored",
    [DROP_CAPABILITY] = "a file capability is set only by root in a user namespace, where "
                        "the kernel confines it to that namespace",
    [DROP_USER] = "user.* attributes go on regular files and directories only, on a "
                  "filesystem that supports them",
  };
  struct xattr_drops *d = &x->drops;
  struct strbuf sb = { 0 };
  for (int k = 0; k < N_DROP_KINDS; k++)
    {
      if (d->count[k] == 0)
        continue;
      cleanup_free char *part = d->error[k] != 0
        ? xasprintf ("%s%lu (first %s: %s; %s)", sb.len > 0 ? "; " : "", d->count[k],
                     d->example[k], strerror (d->error[k]), why[k])
        : xasprintf ("%s%lu (first %s; %s)", sb.len > 0 ? "; " : "", d->count[k],
                     d->example[k], why[k]);
      strbuf_append (&sb, part);
    }
  if (sb.len > 0)
    warn ("%s: dropped extended attribute(s): %s", x->desc, sb.str);
  free (sb.str);
}

void
xattr_drops_clear (struct xattr_drops *d)
{
  for (int k = 0; k < N_DROP_KINDS; k++)
    free (d->example[k]);
  *d = (struct xattr_drops) { 0 };
}

void
add_fixup (struct extractor *x, const char *rel, struct archive_entry *e)
{
  if (x->n_fixups == x->cap_fixups)
    {
      x->cap_fixups = x->cap_fixups ? 2 * x->cap_fixups : 64;
      x->fixups = xrealloc (x->fixups, x->cap_fixups * sizeof *x->fixups);
    }
  struct dir_fixup *f = &x->fixups[x->n_fixups];
  *f = (struct dir_fixup) {
    .path = xstrdup (rel),
    .mode = archive_entry_perm (e) & MODE_KEPT_BITS,
    .has_mtime = archive_entry_mtime_is_set (e),
    .seq = x->n_fixups,
  };
  f->mtime.tv_sec = archive_entry_mtime (e);
  f->mtime.tv_nsec = archive_entry_mtime_nsec (e);
  if (rel[0] != '\0')
    {
      f->depth = 1;
      for (const char *p = rel; *p != '\0'; p++)
        f->depth += (*p == '/');
    }
  x->n_fixups++;
}

/* Deepest first; a path's fixups together, in the order of their entries. */
static int
compare_fixups (const void *pa, const void *pb)
{
  const struct dir_fixup *a = pa, *b = pb;
  if (a->depth != b->depth)
    return a->depth > b->depth ? -1 : 1;
  int c = strcmp (a->path, b->path);
  if (c != 0)
    return c;
  return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int
apply_fixup (struct extractor *x, const struct dir_fixup *f)
{
  cleanup_fd int fd = -1;
  if (f->path[0] == '\0')
    fd = openat (x->rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  else
    {
      cleanup_free char *copy = NULL;
      const char *leaf, *bad;
      cleanup_fd int dfd = open_parent (x->rootfd, &x->cache, f->path, false, &copy, &leaf, &bad);
      if (dfd >= 0)
        fd = openat (dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
  if (fd < 0)
    return extract_fail_errno (x, "%s: cannot reopen directory '%s' to set its mode", x->desc,
                               f->path);
  if (fchmod (fd, f->mode) < 0)
    return extract_fail_errno (x, "%s: cannot set the mode of directory '%s'", x->desc, f->path);
  if (f->has_mtime)
    {
      struct timespec times[2] = { { .tv_nsec = UTIME_OMIT }, f->mtime };
      if (futimens (fd, times) < 0)
        return extract_fail_errno (x, "%s: cannot set the times of directory '%s'", x->desc,
                                   f->path);
    }
  return 0;
}

int
extractor_fix_dirs (struct extractor *x)
{
  /* qsort's array must not be NULL, even when empty (an archive without directories). */
  if (x->n_fixups > 0)
    qsort (x->fixups, x->n_fixups, sizeof *x->fixups, compare_fixups);
  for (size_t i = 0; i < x->n_fixups; i++)
    {
      const struct dir_fixup *f = &x->fixups[i];
      /* Only the last entry of a path: the directory as the tar (or the top layer) left
       * it. Applied twice, the first could make it unreadable to the second's reopen. */
      bool superseded = i + 1 < x->n_fixups && strcmp (x->fixups[i + 1].path, f->path) == 0;
      if (f->path[0] != '\0' && !f->removed && !superseded && apply_fixup (x, f) < 0)
        return -1;
    }
  return 0;
}

int
extractor_fix_root (struct extractor *x)
{
  /* Sorted deepest first, so the root's entries come last; the last one wins. */
  const struct dir_fixup *root = NULL;
  for (size_t i = 0; i < x->n_fixups; i++)
    if (x->fixups[i].path[0] == '\0')
      root = &x->fixups[i];
  if (root != NULL)
    return apply_fixup (x, root);
  if (fchmod (x->rootfd, ROOT_DEFAULT_MODE) < 0)
    return extract_fail_errno (x, "cannot set the mode of the new root");
  return 0;
}
