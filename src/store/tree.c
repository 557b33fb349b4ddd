/* create --from DIR: copying a directory tree as if it were an archive of it.
 *
 * libarchive's disk reader walks DIR without following symlinks (as bsdtar -c does) and
 * hands each entry, renamed relative to DIR, to the extractor: the tree gets exactly the
 * rules an untrusted archive gets (device nodes, FIFOs and sockets skipped, set-id bits
 * dropped, ownership not kept, the size limit), because it goes through the same code.
 * Files linked more than once become hard link entries (linkify, as bsdtar does), so they
 * stay linked in the copy. File data is cloned by reference where the filesystem can
 * (extract.c, extract_regular), else copied. */
#include <archive.h>
#include <archive_entry.h>
#include <string.h>

#include "common/util.h"
#include "store/extract.h"
#include "store/interrupt.h"
#include "store/tree.h"

/* The entry's path relative to DIR ("" for DIR itself), or NULL when it is not beneath. */
static const char *
relative_to (const char *path, const char *dir, size_t dir_len)
{
  if (strncmp (path, dir, dir_len) != 0)
    return NULL;
  path += dir_len;
  if (*path == '\0')
    return path;
  return *path == '/' ? path + 1 : NULL;
}

void
tree_copy (struct extractor *x, const char *dir)
{
  struct archive *a = archive_read_disk_new ();
  struct archive_entry_linkresolver *links = archive_entry_linkresolver_new ();
  if (a == NULL || links == NULL)
    die ("out of memory");
  archive_entry_linkresolver_set_strategy (links, ARCHIVE_FORMAT_TAR_USTAR);
  if (archive_read_disk_set_symlink_physical (a) != ARCHIVE_OK
      || archive_read_disk_set_behavior (a, ARCHIVE_READDISK_NO_XATTR | ARCHIVE_READDISK_NO_ACL
                                              | ARCHIVE_READDISK_NO_FFLAGS) != ARCHIVE_OK
      || archive_read_disk_open (a, dir) != ARCHIVE_OK)
    die ("%s: cannot read the directory: %s", dir, archive_why (a));
  unsigned long entries = 0;
  size_t dir_len = strlen (dir);
  while (dir_len > 1 && dir[dir_len - 1] == '/')
    dir_len--;

  for (;;)
    {
      interrupt_check ();
      struct archive_entry *e = archive_entry_new ();
      if (e == NULL)
        die ("out of memory");
      int r = archive_read_next_header2 (a, e);
      if (r == ARCHIVE_EOF)
        {
          archive_entry_free (e);
          break;
        }
      if (r < ARCHIVE_WARN)
        die ("%s: %s", dir, archive_why (a));
      if (archive_read_disk_descend (a) < ARCHIVE_WARN)
        die ("%s: %s", dir, archive_why (a));
      const char *rel = relative_to (archive_entry_pathname (e), dir, dir_len);
      if (rel == NULL)
        die ("%s: the walk left the directory at '%s'", dir, archive_entry_pathname (e));
      entries += rel[0] != '\0';
      cleanup_free char *name = rel[0] == '\0' ? xstrdup (".") : xstrdup (rel);
      archive_entry_copy_pathname (e, name);
      struct archive_entry *spare = NULL;
      archive_entry_linkify (links, &e, &spare);
      if (e != NULL)
        extract_entry_from (x, dir, a, e);
      archive_entry_free (e);
      archive_entry_free (spare);
    }
  archive_entry_linkresolver_free (links);
  extract_warn_skipped (x);
  if (archive_read_close (a) != ARCHIVE_OK)
    die ("%s: %s", dir, archive_why (a));
  archive_read_free (a);
  /* As an empty archive is: nothing to enter. */
  if (entries == 0)
    die ("%s: the directory is empty", dir);
}
