/* Creating one entry of each type the extractor makes (regular file, FIFO, symlink, hard
 * link, directory), relative to the directory fd open_parent gave, never following a
 * symlink (the rules are at the top of extract.c). */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract/extract-internal.h"
#include "common/walk.h"

/* Make room for a non-directory REL called LEAF: remove an earlier non-directory of that
 * name (never following it); refuse to replace a directory, unless a lower layer left it. */
static int
clear_for_non_directory (struct extractor *x, const char *entry, const char *rel, int dfd,
                         const char *leaf)
{
  struct stat st;
  if (fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (errno == ENOENT)
        return 0;
      return refuse (x, entry, "cannot stat it: %s", strerror (errno));
    }
  if (S_ISDIR (st.st_mode) && x->layer && !path_set_has (&x->upper, rel))
    return remove_lower (x, entry, dfd, leaf, rel);
  if (S_ISDIR (st.st_mode))
    return refuse (x, entry, "it would replace a directory");
  if (unlinkat (dfd, leaf, 0) < 0)
    return refuse (x, entry, "cannot replace the earlier entry: %s", strerror (errno));
  return 0;
}

static int
account_bytes (struct extractor *x, const char *entry, uint64_t n)
{
  x->result->size_bytes += n;
  if (x->opts->max_bytes != 0 && x->result->size_bytes > x->opts->max_bytes)
    return extract_fail (x, "%s: entry '%s': unpacked size exceeds the limit of %llu bytes "
                         "(raise it with --max-size or ENTER_DEVROOT_MAX_ROOT_SIZE)", x->desc,
                         entry, (unsigned long long) x->opts->max_bytes);
  return 0;
}

/* Write the entry's data blocks into FD at their offsets; the file's size so far, or -1. */
static la_int64_t
write_entry_data (struct extractor *x, struct archive *a, const char *entry, int fd)
{
  la_int64_t end = 0; /* the file was created empty */
  for (;;)
    {
      const void *buf;
      size_t size;
      la_int64_t offset;
      int r = archive_read_data_block (a, &buf, &size, &offset);
      if (r == ARCHIVE_EOF)
        break;
      if (r < ARCHIVE_WARN)
        return extract_fail (x, "%s: entry '%s': %s", x->desc, entry, archive_why (a));
      const char *p = buf;
      while (size > 0)
        {
          ssize_t n = pwrite (fd, p, size, (off_t) offset);
          if (n < 0 && errno == EINTR)
            continue;
          if (n < 0)
            return extract_fail_errno (x, "%s: cannot write entry '%s'", x->desc, entry);
          p += n;
          size -= (size_t) n;
          offset += n;
        }
      if (offset > end)
        end = offset;
    }
  return end;
}

/* Copy bytes [FROM, TO) of x->entry_fd into OUT at the same offsets. */
static int
copy_entry_range (struct extractor *x, const char *entry, int out, off_t from, off_t to)
{
  for (off_t done = from; done < to;)
    {
      size_t want = to - done < READ_BLOCK_SIZE ? (size_t) (to - done) : READ_BLOCK_SIZE;
      ssize_t n = pread (x->entry_fd, x->buf, want, done);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return extract_fail_errno (x, "%s: cannot read entry '%s'", x->desc, entry);
      if (n == 0)
        return extract_fail (x, "%s: entry '%s' shrank while being read: stop what runs in the "
                             "tree, then retry", x->desc, entry);
      for (ssize_t w = 0; w < n;)
        {
          ssize_t m = pwrite (out, x->buf + w, (size_t) (n - w), done + w);
          if (m < 0 && errno == EINTR)
            continue;
          if (m < 0)
            return extract_fail_errno (x, "%s: cannot write entry '%s'", x->desc, entry);
          w += m;
        }
      done += n;
    }
  return 0;
}

/* create --from DIR (tree.c): the entry's data from the file the walk opened and checked
 * (x->entry_fd, at its start), never from a path: cloned by reference where the
 * filesystem can (a reflink costs no data), else its data ranges copied (holes stay
 * holes, SEEK_DATA/SEEK_HOLE); never more than the size the walk saw, which the size
 * limit counted. The end of what was written, or -1. */
static la_int64_t
copy_entry_fd (struct extractor *x, struct archive_entry *e, const char *entry, int out)
{
  off_t size = archive_entry_size (e);
  struct stat st;
  if (size == 0
      || (ioctl (out, FICLONE, x->entry_fd) == 0 && fstat (out, &st) == 0 && st.st_size == size))
    return size;
  if (ftruncate (out, 0) < 0) /* a clone of a file that grew since: copy SIZE bytes */
    return extract_fail_errno (x, "%s: cannot write entry '%s'", x->desc, entry);
  off_t end = 0;
  while (end < size)
    {
      off_t data = lseek (x->entry_fd, end, SEEK_DATA);
      if ((data < 0 && errno == ENXIO) || data >= size)
        break; /* a hole to the end: extract_regular sizes the file */
      if (data < 0)
        data = end; /* no SEEK_DATA here: copy it all */
      off_t hole = lseek (x->entry_fd, data, SEEK_HOLE);
      if (hole <= data || hole > size)
        hole = size;
      if (copy_entry_range (x, entry, out, data, hole) < 0)
        return -1;
      end = hole;
    }
  return end;
}

/* The entry's mode (set-id bits dropped), extended attributes and times, on FD, the file
 * or FIFO just made; after its data (a write clears a capability). */
static int
set_metadata (struct extractor *x, struct archive_entry *e, const char *entry, int fd)
{
  if (fchmod (fd, archive_entry_perm (e) & MODE_KEPT_BITS) < 0)
    return extract_fail_errno (x, "%s: cannot set the mode of entry '%s'", x->desc, entry);
  if (restore_xattrs (x, e, entry, fd) < 0)
    return -1;
  struct timespec times[2];
  entry_times (e, times);
  if (futimens (fd, times) < 0)
    return extract_fail_errno (x, "%s: cannot set the times of entry '%s'", x->desc, entry);
  return 0;
}

int
extract_regular (struct extractor *x, struct archive *a, struct archive_entry *e,
                 const char *entry, const char *rel, int dfd, const char *leaf)
{
  if (clear_for_non_directory (x, entry, rel, dfd, leaf) < 0)
    return -1;
  cleanup_fd int fd = openat (dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                              0600);
  if (fd < 0)
    return refuse (x, entry, "cannot create it: %s", strerror (errno));

  if (archive_entry_size_is_set (e) && archive_entry_size (e) > 0
      && account_bytes (x, entry, (uint64_t) archive_entry_size (e)) < 0)
    return -1;

  la_int64_t end = x->entry_fd >= 0 ? copy_entry_fd (x, e, entry, fd)
                                    : write_entry_data (x, a, entry, fd);
  if (end < 0)
    return -1;
  /* A sparse file may end in a hole that no data block covers. Only then: on XFS a
   * truncate costs a transaction, and makes close() flush the file's data. */
  if (archive_entry_size_is_set (e) && archive_entry_size (e) != end
      && ftruncate (fd, (off_t) archive_entry_size (e)) < 0)
    return extract_fail_errno (x, "%s: cannot size entry '%s'", x->desc, entry);
  /* Best effort: it only moves work earlier (see extract_opts). */
  if (x->opts->start_writeback && end > 0)
    (void) sync_file_range (fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  return set_metadata (x, e, entry, fd);
}

/* A FIFO: mkfifoat needs no privilege. Its mode, attributes and times go through an fd
 * (opening a FIFO for reading with O_NONBLOCK never waits for a writer), checked to be
 * the FIFO just made. */
int
extract_fifo (struct extractor *x, struct archive_entry *e, const char *entry,
              const char *rel, int dfd, const char *leaf)
{
  if (clear_for_non_directory (x, entry, rel, dfd, leaf) < 0)
    return -1;
  if (mkfifoat (dfd, leaf, 0600) < 0)
    return refuse (x, entry, "cannot create FIFO: %s", strerror (errno));
  cleanup_fd int fd = openat (dfd, leaf, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat (fd, &st) < 0 || !S_ISFIFO (st.st_mode))
    return refuse (x, entry, "cannot reopen the FIFO just created: %s",
                   fd < 0 ? strerror (errno) : "it is not one");
  return set_metadata (x, e, entry, fd);
}

int
extract_symlink (struct extractor *x, struct archive_entry *e, const char *entry,
                 const char *rel, int dfd, const char *leaf)
{
  const char *target = archive_entry_symlink (e);
  if (target == NULL || target[0] == '\0')
    return refuse (x, entry, "symlink with an empty target");
  if (clear_for_non_directory (x, entry, rel, dfd, leaf) < 0)
    return -1;
  if (symlinkat (target, dfd, leaf) < 0)
    return refuse (x, entry, "cannot create symlink: %s", strerror (errno));
  if (restore_xattrs (x, e, entry, -1) < 0)
    return -1;
  struct timespec times[2];
  entry_times (e, times);
  /* Best effort: some filesystems cannot time a symlink. */
  (void) utimensat (dfd, leaf, times, AT_SYMLINK_NOFOLLOW);
  return 0;
}

/* A hard link (REL, LEAF in DFD) to TARGET, a file of a lower layer (extract_opts.lowers):
 * a copy of the topmost one (data, mode, times), unless a whiteout hides it. Those trees
 * are the store's own, made by this extractor: a walk refusing symlinks is enough. 1 when
 * copied, 0 when no lower layer has it, -1 on error. */
static int
copy_from_lower (struct extractor *x, const char *entry, const char *rel, int dfd,
                 const char *leaf, const char *target)
{
  for (char *const *l = x->opts->lowers; *l != NULL; l++)
    {
      cleanup_fd int tree = open (*l, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      cleanup_fd int fd = tree < 0 ? -1 : open_beneath (tree, target, O_PATH);
      struct stat st;
      if (fd < 0 || fstat (fd, &st) < 0)
        continue; /* not in this layer (or a symlink on the way: not that file) */
      if (S_ISCHR (st.st_mode) && st.st_rdev == makedev (0, 0))
        return 0; /* whited out */
      if (clear_for_non_directory (x, entry, rel, dfd, leaf) < 0)
        return -1;
      struct timespec t[2] = { st.st_atim, st.st_mtim };
      if (S_ISLNK (st.st_mode))
        {
          char buf[PATH_MAX];
          ssize_t n = readlinkat (fd, "", buf, sizeof buf - 1);
          if (n < 0)
            return refuse (x, entry, "cannot read the lower layer's '%s': %s", target,
                           strerror (errno));
          buf[n] = '\0';
          if (symlinkat (buf, dfd, leaf) < 0)
            return refuse (x, entry, "cannot create symlink: %s", strerror (errno));
          (void) utimensat (dfd, leaf, t, AT_SYMLINK_NOFOLLOW);
          return 1;
        }
      if (S_ISFIFO (st.st_mode))
        {
          if (mkfifoat (dfd, leaf, st.st_mode & MODE_KEPT_BITS) < 0)
            return refuse (x, entry, "cannot create FIFO: %s", strerror (errno));
          (void) utimensat (dfd, leaf, t, AT_SYMLINK_NOFOLLOW);
          return 1;
        }
      if (!S_ISREG (st.st_mode))
        return 0;
      cleanup_free char *self = xasprintf ("/proc/self/fd/%d", fd);
      cleanup_fd int in = open (self, O_RDONLY | O_CLOEXEC);
      cleanup_fd int out = openat (dfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW
                                              | O_CLOEXEC, 0600);
      if (in < 0 || out < 0)
        return refuse (x, entry, "cannot copy the lower layer's '%s': %s", target,
                       strerror (errno));
      if (account_bytes (x, entry, (uint64_t) st.st_size) < 0)
        return -1;
      for (off_t left = st.st_size; left > 0;)
        {
          ssize_t n = copy_file_range (in, NULL, out, NULL, (size_t) left, 0);
          if (n <= 0)
            return refuse (x, entry, "cannot copy the lower layer's '%s': %s", target,
                           n < 0 ? strerror (errno) : "it shrank");
          left -= n;
        }
      if (fchmod (out, st.st_mode & MODE_KEPT_BITS) < 0 || futimens (out, t) < 0)
        return refuse (x, entry, "cannot set the mode and times: %s", strerror (errno));
      return 1;
    }
  return 0;
}

int
extract_hardlink (struct extractor *x, const char *entry, const char *rel, int dfd,
                  const char *leaf, const char *raw_target)
{
  cleanup_free char *target = NULL;
  const char *why;
  bool absolute;
  if (archive_path_normalize (raw_target, &target, &absolute, &why) < 0)
    return refuse (x, entry, "hardlink target '%s': %s", raw_target, why);
  if (target[0] == '\0')
    return refuse (x, entry, "hardlink to the root directory");
  if (strcmp (target, rel) == 0)
    {
      /* GNU tar stores the second copy of a path listed twice (tar -T) as a hard link to
       * itself: the file is already here, as bsdtar concludes too. */
      struct stat st;
      if (fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG (st.st_mode))
        return refuse (x, entry, "hardlink to itself, and no earlier regular file of that name");
      x->result->skipped_self_links++;
      return 0;
    }

  cleanup_free char *tcopy = NULL;
  const char *tleaf, *bad;
  cleanup_fd int tdfd = open_parent (x->rootfd, &x->cache, target, false, &tcopy, &tleaf, &bad);
  struct stat st;
  if (tdfd < 0 || fstatat (tdfd, tleaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
    {
      if (path_set_has (&x->skipped, target))
        {
          /* A link to a device node or socket that was skipped: skipped with it. */
          x->result->skipped_special++;
          return 0;
        }
      if (x->opts->lowers != NULL)
        {
          int c = copy_from_lower (x, entry, rel, dfd, leaf, target);
          if (c != 0)
            return c < 0 ? -1 : 0;
          /* In no layer below either: a device node or socket a lower layer skipped (its
           * extractor is gone, and so is its list), or nothing: skipped as such. */
          x->result->skipped_special++;
          return 0;
        }
      return refuse (x, entry, "hardlink target '%s' is not an earlier entry of the archive",
                     raw_target);
    }
  if (!S_ISREG (st.st_mode) && !S_ISLNK (st.st_mode) && !S_ISFIFO (st.st_mode))
    return refuse (x, entry, "hardlink target '%s' is not a regular file, symlink or FIFO",
                   raw_target);

  if (clear_for_non_directory (x, entry, rel, dfd, leaf) < 0)
    return -1;
  /* No AT_SYMLINK_FOLLOW: a link to a symlink is to the symlink itself. */
  if (linkat (tdfd, tleaf, dfd, leaf, 0) < 0)
    return refuse (x, entry, "cannot create hardlink: %s", strerror (errno));
  return 0;
}

int
extract_directory (struct extractor *x, struct archive_entry *e, const char *entry,
                   const char *rel, int dfd, const char *leaf)
{
  struct stat st;
  if (fstatat (dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0)
    {
      if (!S_ISDIR (st.st_mode) && unlinkat (dfd, leaf, 0) < 0)
        return refuse (x, entry, "cannot replace the earlier entry: %s", strerror (errno));
    }
  else if (errno != ENOENT)
    return refuse (x, entry, "cannot stat it: %s", strerror (errno));
  if (mkdirat (dfd, leaf, DIR_CREATE_MODE) < 0 && errno != EEXIST)
    return refuse (x, entry, "cannot create directory: %s", strerror (errno));
  add_fixup (x, rel, e);
  if (archive_entry_xattr_count (e) > 0)
    {
      /* Still 0700 and ours until the fixups; O_NOFOLLOW: the directory just made or kept. */
      cleanup_fd int fd = openat (dfd, leaf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (fd < 0)
        return refuse (x, entry, "cannot reopen directory: %s", strerror (errno));
      if (restore_xattrs (x, e, entry, fd) < 0)
        return -1;
    }
  return 0;
}
