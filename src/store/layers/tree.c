/* create --from DIR: copying a directory tree as if it were an archive of it.
 *
 * DIR may be a root in use, or any tree something else is changing: it is read by walk.c,
 * which reaches every entry from its parent's fd without following a symlink and opens
 * each regular file once, checked to be what it listed; the data is read through that fd
 * only. A name swapped for a symlink (to a file DIR's owner cannot otherwise reach) while
 * we copy stops the create with one line; nothing outside DIR is ever read.
 *
 * Each entry becomes an archive entry, relative to DIR, handed to the extractor: the tree
 * gets exactly the rules an untrusted archive gets (FIFOs made, device nodes and sockets
 * skipped, set-id bits dropped, ownership not kept, the size limit), because it goes
 * through the same code. Files linked more than once become hard link entries to their
 * first name (as bsdtar does), so they stay linked in the copy. File data is cloned by
 * reference where the filesystem can (extract-entry.c, copy_entry_fd), else copied. */
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "common/util.h"
#include "store/extract/extract.h"
#include "store/interrupt.h"
#include "store/layers/tree.h"
#include "common/walk.h"

struct tree_copier
{
  struct extractor *x;
  const char *dir;
  struct archive_entry *e;
  unsigned long entries;
};

static enum walk_step
copy_entry (const struct walk_entry *w, void *data)
{
  struct tree_copier *t = data;
  interrupt_check ();
  struct archive_entry *e = archive_entry_clear (t->e);
  archive_entry_copy_pathname (e, w->path[0] != '\0' ? w->path : ".");
  archive_entry_set_mode (e, w->st.st_mode);
  archive_entry_set_atime (e, w->st.st_atim.tv_sec, w->st.st_atim.tv_nsec);
  archive_entry_set_mtime (e, w->st.st_mtim.tv_sec, w->st.st_mtim.tv_nsec);
  if (w->first_link != NULL)
    archive_entry_copy_hardlink (e, w->first_link);
  else if (S_ISREG (w->st.st_mode))
    archive_entry_set_size (e, w->st.st_size);
  else if (S_ISLNK (w->st.st_mode))
    archive_entry_copy_symlink (e, w->target);
  t->entries += w->path[0] != '\0';
  extract_entry_fd (t->x, t->dir, e, S_ISREG (w->st.st_mode) ? w->fd : -1);
  return WALK_DESCEND;
}

void
tree_copy (struct extractor *x, const char *dir)
{
  cleanup_fd int rootfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("%s: cannot read the directory", dir);
  struct tree_copier t = { .x = x, .dir = dir, .e = archive_entry_new () };
  if (t.e == NULL)
    die ("out of memory");
  walk_tree (rootfd, dir, &(struct walk_ops) { .entry = copy_entry }, &t);
  archive_entry_free (t.e);
  extract_warn_skipped (x);
  /* As an empty archive is: nothing to enter. */
  if (t.entries == 0)
    die ("%s: the directory is empty", dir);
}
