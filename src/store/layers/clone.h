/* Copying the files of a layer of the layer store into a root (layers.c's flattening, for
 * chroot mode and every root that is not an overlay): by reference where the filesystem
 * can (FICLONE: btrfs, XFS with reflink, bcachefs, ...: no data blocks written), else in
 * the kernel (copy_file_range), else by read and write. Never a second decompression. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

struct hardlink;

struct cloner
{
  int dst_root;        /* the root being made: hard links are made relative to it */
  bool reflink_failed; /* FICLONE refused once: not tried again */
  uint64_t bytes;      /* regular-file bytes copied */
  struct hardlink *links;
  size_t n_links, cap_links;
};

/* Forget the files linked more than once seen so far (between layers: the next one's
 * inodes are others). */
void cloner_forget_links (struct cloner *c);

/* Copy the non-directory NAME (ST, from fstatat) of the directory SRC into the directory
 * DST, where nothing has that name: a regular file (data, mode, times, extended
 * attributes), a symlink or a FIFO; a second path of an inode already copied becomes a
 * hard link to the first copy. REL: NAME's path from the root. 0, or -1 with errno
 * (EINVAL: a file type no layer holds). */
int clone_entry (struct cloner *c, int src, int dst, const char *name, const struct stat *st,
                 const char *rel);

/* Copy the extended attributes the extractor restores (user.* and security.capability)
 * from IN to OUT, fd to fd, never user.overlay.* (a layer's whiteout markers mean nothing
 * in a flat root). After the data: a write clears a capability. 0, or -1 with errno. */
int clone_xattrs (int in, int out);

/* ST's access and modification times on NAME under DIRFD, not following a symlink. */
int clone_set_times (int dirfd, const char *name, const struct stat *st);
