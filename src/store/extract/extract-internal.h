/* What the files of the extractor share (extract.c and extract-*.c); extract.h is its
 * public interface. */
#pragma once

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "store/cache/digest.h"
#include "store/extract/extract.h"
#include "store/extract/decoder.h"


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
#define XATTR_TRUSTED_OVERLAY_PREFIX "trusted.overlay."
#define XATTR_CAPABILITY "security.capability"
#define XATTR_OPAQUE "user.overlay.opaque"

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
  char *error;             /* the first error's one-line message (extract_fail) */
  /* reading */
  int fd;
  uint64_t remaining;      /* bytes the source may still give */
  struct dir_cache cache;
  struct sha256 hash;
  struct decoder *dec;     /* gzip and lz4 are decoded here (decoder.h); NULL: libarchive's */
  bool started;
  /* overlay_form: the uncompressed tar stream's SHA-256 (a layer's diff_id), hashed as it
   * is handed to the tar reader; any other compression is undone before it by INNER, a
   * raw-format reader (its first block is the one read to recognise gzip and lz4). */
  struct sha256 tar_hash;
  struct archive *inner;
  ssize_t pending;
  unsigned char buf[READ_BLOCK_SIZE];
  unsigned char out[READ_BLOCK_SIZE];
};


/* The error-returning interface, for callers that must get control back after bad input
 * (the fuzzers): each function returns 0, or -1 with extractor_error's one-line message
 * (what extract.h's functions die() with). extractor_free releases everything, whatever
 * failed. extract_begin, extract_archive, extract_layer, extract_finish and
 * extract_finish_root are these plus the warnings and the die(). */
struct extractor *extractor_new (int rootfd, const struct extract_opts *opts,
                                 struct extract_result *result);
/* Unpack one archive SRC into the root (extract_archive); its digest goes to HEX. */
int extractor_unpack (struct extractor *x, struct source *src, char hex[SHA256_HEX_LEN + 1]);
int extractor_layer (struct extractor *x, struct source *src);
int extractor_fix_dirs (struct extractor *x);
int extractor_fix_root (struct extractor *x);
const char *extractor_error (const struct extractor *x);
void extractor_free (struct extractor *x);

/* Inside the extractor: every function that can fail returns -1 after one of these has
 * recorded the message (the first one is kept), and its callers return -1 in turn.
 * extract_fail_errno appends errno's text, as die_with_error does (so its arguments must
 * not change errno); refuse says "DESC: refusing entry 'ENTRY': WHY". */
__attribute__((format (printf, 3, 4))) int extract_fail_with (struct extractor *x,
                                                              const char *error,
                                                              const char *format, ...);
#define extract_fail(x, ...) extract_fail_with ((x), NULL, __VA_ARGS__)
#define extract_fail_errno(x, ...) extract_fail_with ((x), strerror (errno), __VA_ARGS__)
#define refuse(x, entry, format, ...) \
  extract_fail ((x), "%s: refusing entry '%s': " format, (x)->desc, (entry), ##__VA_ARGS__)

/* extract-read.c */
/* libarchive's read callback: the file as it is, or for gzip and lz4 the tar inside it. */
ssize_t read_and_hash (struct archive *a, void *data, const void **buffer);
/* Hash whatever follows the end of the archive too: the digest covers the whole file; and
 * decode the rest of a gzip member or lz4 frame libarchive did not need, so its checksum
 * is verified. */
int drain_and_hash (struct extractor *x);

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

/* extract-entry.c: create entry ENTRY (REL, called LEAF in the directory DFD). */
int extract_regular (struct extractor *x, struct archive *a, struct archive_entry *e,
                     const char *entry, const char *rel, int dfd, const char *leaf);
int extract_fifo (struct extractor *x, struct archive_entry *e, const char *entry,
                  const char *rel, int dfd, const char *leaf);
int extract_symlink (struct extractor *x, struct archive_entry *e, const char *entry,
                     const char *rel, int dfd, const char *leaf);
int extract_hardlink (struct extractor *x, const char *entry, const char *rel, int dfd,
                      const char *leaf, const char *raw_target);
int extract_directory (struct extractor *x, struct archive_entry *e, const char *entry,
                       const char *rel, int dfd, const char *leaf);

/* extract-meta.c */
void entry_times (struct archive_entry *e, struct timespec times[2]);
/* Set E's extended attributes on FD, the file or directory the entry was created or
 * reopened as (fsetxattr: never a path, so nothing is followed); FD -1 for an entry that
 * cannot carry them (a symlink: the kernel refuses user.* there). The rules are at the top
 * of extract.c. Call it after the data is written: a write clears security.capability.
 * -1 (refused) for an overlay xattr in overlay form. */
int restore_xattrs (struct extractor *x, struct archive_entry *e, const char *entry, int fd);
/* The one warning for every extended attribute a create dropped, by kind, each with its
 * first instance and reason. */
void warn_xattr_drops (struct extractor *x);
void xattr_drops_clear (struct xattr_drops *d);
/* Remember directory REL's mode and time (E's) for extractor_fix_dirs. */
void add_fixup (struct extractor *x, const char *rel, struct archive_entry *e);

/* extract-whiteout.c: OCI layers' whiteouts, the whole interface. */
/* 1 when REL's last component is a whiteout, else 0; -1 (refused) for one in the middle of
 * the path (a whiteout is a marker, never a directory holding entries). */
int is_whiteout (struct extractor *x, const char *entry, const char *rel);
/* A whiteout entry ENTRY (REL, whose last component starts with ".wh."): apply it to what
 * the lower layers left (see the top of extract.c for the rules). */
int apply_whiteout (struct extractor *x, const char *entry, const char *rel);
/* The same kept in overlay form (extract_opts.overlay_form), for an overlay or a
 * flattening to apply: ".wh..wh..opq" marks its directory opaque, ".wh.NAME" becomes the
 * 0/0 character device NAME (which mknod allows any user since Linux 5.8), unless this
 * layer has an entry NAME (a whiteout hides lower layers only). */
int keep_whiteout (struct extractor *x, const char *entry, const char *rel);
/* Remove REL (LEAF in DFD), a file or a whole tree a lower layer left: the walk cache may
 * hold a directory inside it, and the directory fixups under it no longer apply. */
int remove_lower (struct extractor *x, const char *entry, int dfd, const char *leaf,
                  const char *rel);
/* REL, just created by the current layer, and its parents are that layer's own: its
 * whiteouts never remove them (x->upper, cleared between layers). */
void mark_upper (struct extractor *x, char *rel);
