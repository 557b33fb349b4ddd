/* What the files of the extractor share (extract.c and extract-*.c); extract.h is its
 * public interface. */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "store/digest.h"
#include "store/extract.h"
#include "store/gunzip.h"
#include "store/unlz4.h"


#define READ_BLOCK_SIZE (64 * 1024)
#define DIR_CREATE_MODE 0700       /* while unpacking; the archive's mode comes at the end */
#define IMPLICIT_DIR_MODE 0755     /* parents the archive does not list */
#define ROOT_DEFAULT_MODE 0755     /* when the archive has no "./" entry */
#define MODE_KEPT_BITS (07777 & ~(S_ISUID | S_ISGID))
#define WHITEOUT_PREFIX ".wh."
#define WHITEOUT_META_PREFIX ".wh..wh."
#define WHITEOUT_OPAQUE ".wh..wh..opq"
#define XATTR_USER_PREFIX "user."
/* overlayfs obeys these on a userxattr mount (redirects, opaque dirs): an image's own
 * would steer any unprivileged overlay stacked on the root. */
#define XATTR_OVERLAY_PREFIX "user.overlay."
#define XATTR_CAPABILITY "security.capability"

struct dir_fixup
{
  char *path;
  mode_t mode;
  struct timespec mtime;
  bool has_mtime;
  size_t depth;
  size_t seq;
  bool removed;  /* a later layer removed or replaced it */
};

/* The paths one layer has created so far: a whiteout hides only what lower layers left. An
 * open-addressing hash set of strings, cleared between layers. */
struct path_set
{
  char **slots;
  size_t n, cap;
};

/* The directory the last walk ended in: most entries share their parent (or a prefix of it)
 * with the entry before, so walks start there instead of at the root. Sound because a
 * directory, once reached without following symlinks, is never renamed or removed during
 * the extraction (a non-directory can never replace one), so its fd still names REL. */
struct dir_cache
{
  char *path; /* relative to the root; "" is the root */
  int fd;
};

/* The compressions decoded here rather than by libarchive, which does not verify their
 * checksums (gunzip.h, unlz4.h); libarchive then reads the plain tar. */
enum decoder_kind
{
  DECODER_NONE,
  DECODER_GZIP,
  DECODER_LZ4,
};

struct decoder
{
  enum decoder_kind kind;
  struct gunzip *gz;
  struct unlz4 *lz4;
};

/* Extended attributes not restored, for the one warning extract_finish gives. */
enum xattr_drop_kind
{
  DROP_NEVER,      /* not user.* or security.capability: never restored */
  DROP_CAPABILITY, /* security.capability the kernel refused (a plain user) */
  DROP_USER,       /* user.* the kernel or the filesystem refused */
  N_DROP_KINDS,
};

struct xattr_drops
{
  unsigned long count[N_DROP_KINDS];
  char *example[N_DROP_KINDS]; /* the first one: "NAME on 'ENTRY'" */
  int error[N_DROP_KINDS];     /* its errno (0 for DROP_NEVER) */
};

struct extractor
{
  int rootfd;
  const char *desc;        /* the source, for messages */
  const struct extract_opts *opts;
  struct extract_result *result;
  struct dir_fixup *fixups;
  size_t n_fixups, cap_fixups;
  bool warned_absolute;
  bool layer;              /* an OCI layer: whiteouts apply (extract_layer) */
  struct path_set upper;   /* what the current layer created */
  int entry_fd;            /* extract_entry_fd: the current entry's data; else -1 */
  struct path_set skipped; /* device nodes and sockets not created: their hard links follow */
  struct xattr_drops drops;
  /* reading */
  int fd;
  uint64_t remaining;      /* bytes the source may still give */
  struct dir_cache cache;
  struct sha256 hash;
  struct decoder dec;      /* gzip and lz4 are decoded here (they verify what libarchive does not) */
  bool started;
  unsigned char buf[READ_BLOCK_SIZE];
};


/* extract.c */
__attribute__((noreturn, format (printf, 3, 4))) void refuse (struct extractor *x, const char *entry, const char *format, ...);

/* extract-read.c */
/* libarchive's read callback: the file as it is, or for gzip and lz4 the tar inside it. */
ssize_t read_and_hash (struct archive *a, void *data, const void **buffer);
/* Hash whatever follows the end of the archive too: the digest covers the whole file; and
 * decode the rest of a gzip member or lz4 frame libarchive did not need, so its checksum
 * is verified. */
void drain_and_hash (struct extractor *x);

/* extract-walk.c */
bool path_set_has (const struct path_set *set, const char *path);
void path_set_add (struct path_set *set, const char *path);
void path_set_clear (struct path_set *set);
/* Open the directory holding REL's last component, walking from the root (or from CACHE
 * when it holds a prefix) one component at a time without following symlinks, creating
 * missing directories when CREATE. Returns the fd and points *leaf at the last component
 * inside *copy (caller frees *copy), or -1 with errno and *bad naming the component that
 * failed. */
int open_parent (int rootfd, struct dir_cache *cache, const char *rel, bool create, char **copy,
             const char **leaf, const char **bad);
int open_parent_or_refuse (struct extractor *x, const char *entry, const char *rel, bool create,
                       char **copy, const char **leaf);

/* extract-entry.c */
void extract_regular (struct extractor *x, struct archive *a, struct archive_entry *e,
                 const char *entry, const char *rel, int dfd, const char *leaf);
/* A FIFO: mkfifoat needs no privilege. Its mode, attributes and times go through an fd
 * (opening a FIFO for reading with O_NONBLOCK never waits for a writer), checked to be
 * the FIFO just made. */
void extract_fifo (struct extractor *x, struct archive_entry *e, const char *entry,
              const char *rel, int dfd, const char *leaf);
void extract_symlink (struct extractor *x, struct archive_entry *e, const char *entry,
                 const char *rel, int dfd, const char *leaf);
void extract_hardlink (struct extractor *x, const char *entry, const char *rel, int dfd,
                  const char *leaf, const char *raw_target);
void extract_directory (struct extractor *x, struct archive_entry *e, const char *entry,
                   const char *rel, int dfd, const char *leaf);

/* extract-meta.c */
void entry_times (struct archive_entry *e, struct timespec times[2]);
/* Set E's extended attributes on FD, the file or directory the entry was created or
 * reopened as (fsetxattr: never a path, so nothing is followed); FD -1 for an entry that
 * cannot carry them (a symlink: the kernel refuses user.* there). The rules are at the top
 * of extract.c. Call it after the data is written: a write clears security.capability. */
void restore_xattrs (struct extractor *x, struct archive_entry *e, const char *entry, int fd);
/* The one warning for every extended attribute a create dropped, by kind, each with its
 * first instance and reason. */
void warn_xattr_drops (struct extractor *x);
void xattr_drops_clear (struct xattr_drops *d);
void add_fixup (struct extractor *x, const char *rel, struct archive_entry *e);
/* Deepest first; a path's fixups together, in the order of their entries. */
int compare_fixups (const void *pa, const void *pb);
void apply_fixup (struct extractor *x, const struct dir_fixup *f);

/* extract-whiteout.c */
/* Remove REL (LEAF in DFD), a file or a whole tree a lower layer left: the walk cache may
 * hold a directory inside it, and the directory fixups under it no longer apply. */
void remove_lower (struct extractor *x, const char *entry, int dfd, const char *leaf, const char *rel);
/* A whiteout entry ENTRY (REL, whose last component starts with ".wh."): apply it to what
 * the lower layers left (see the top of extract.c for the rules). */
void apply_whiteout (struct extractor *x, const char *entry, const char *rel);
/* Whether REL's last component is a whiteout; refuses one in the middle of the path (a
 * whiteout is a marker, never a directory holding entries). */
bool is_whiteout (struct extractor *x, const char *entry, const char *rel);
