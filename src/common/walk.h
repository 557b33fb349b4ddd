/* Walking a tree that something else may be changing meanwhile: a devroot's root, which
 * code running inside it can rename, swap and replace while we read it (export, create
 * --from DIR, publish of a root's archive).
 *
 * Every entry is reached from its parent's directory fd by one component, never by a
 * path: openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), or
 * openat(O_NOFOLLOW) where the kernel has no openat2; a regular file is opened
 * O_NONBLOCK (a FIFO swapped in never blocks) and is handed to the callback as that fd,
 * checked with fstat to be the very inode the walk listed (same type, device and inode).
 * So nothing the walk hands out is ever outside the tree, whatever is swapped in: a name
 * that changed type or inode between being listed and being opened is bad input, and the
 * walk dies with one line naming it (exit 125; the caller's die cleanup removes what it
 * half-wrote).
 *
 * Order: the root first, then each directory's entries in byte order of their names,
 * depth first (a directory before what it holds). An explicit stack, not recursion, holds
 * one open directory and its sorted names per level; a directory deeper than
 * WALK_MAX_DEPTH is refused (one line) before any callback sees it, so callers may keep
 * WALK_MAX_DEPTH + 1 slots of their own per level. */
#pragma once

#include "common/beneath.h"

#include <stdbool.h>
#include <sys/stat.h>

/* Directories below the root that the walk enters at most, and the most components a
 * member of an archive may have (archive_path_normalize): one limit for every tree the
 * tool makes or reads. Walkers hold file descriptors per level (this walk one, the flat
 * copy of layers three: flatten.c), and 256 levels of the deepest stay clear of the usual
 * soft limit of 1024 open files, with room for the rest. No real image comes near it;
 * PATH_MAX alone would allow 2047 levels. */
#define WALK_MAX_DEPTH 256

struct walk_entry
{
  const char *path;   /* from the root, no leading '/': "etc/passwd"; "" for the root */
  int dirfd;          /* the directory holding it (the root's own fd for the root) */
  const char *name;   /* its name in dirfd ("." for the root) */
  struct stat st;     /* what was listed, and for fd, what fd is */
  int fd;             /* regular files and directories: opened as described above, at
                         offset 0; the walk closes it. -1 for anything else */
  const char *target; /* symlinks: the target (readlinkat); NULL for anything else */
  /* A regular file linked more than once, already handed out under this earlier path;
   * NULL when this is its first name. */
  const char *first_link;
  unsigned depth;     /* 0 for the root */
};

enum walk_step
{
  WALK_DESCEND, /* directories: walk what it holds (ignored for anything else) */
  WALK_SKIP,    /* directories: do not */
};

struct walk_ops
{
  /* Each entry, the root first. */
  enum walk_step (*entry) (const struct walk_entry *e, void *data);
  /* Optional: after everything a directory holds (the root last); E is as entry() had it. */
  void (*leave) (const struct walk_entry *e, void *data);
};

/* Walk the tree at ROOTFD (an open directory). WHAT begins every error line ("cannot
 * export 'r'", a directory's path). */
void walk_tree (int rootfd, const char *what, const struct walk_ops *ops, void *data);

