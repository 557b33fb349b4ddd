/* export NAME FILE: a devroot as a reproducible tarball (see export.c). */
#pragma once

#include <stdbool.h>
#include <sys/stat.h>
#include <time.h>

#include "common/account.h"
#include "common/meta.h"
#include "common/walk.h"

/* Write devroot NAME to FILE (through a temporary file and a rename), compressed with
 * COMPRESS: "zstd" (NULL), "gzip", "xz" or "none". A progress line on a terminal unless
 * QUIET. Dies (exit 125) naming what failed, leaving no partial FILE. */
void export_root (const char *name, const char *file, const char *compress, bool quiet);

/* What create and entering added to a root, which is not the root's (export.c's comment):
 * shared by export and push so both leave out exactly the same. */
struct export_filter
{
  const char *what; /* begins error lines: "cannot export 'r'" */
  bool clamp;       /* $SOURCE_DATE_EPOCH is set: mtimes clamped to EPOCH */
  time_t epoch;
  struct account_additions added;
  const char *added_home;            /* "home/NAME": left out */
  char *host_copies[META_N_COPIES];  /* the stamps of the copies entering made */
};

/* NAME's root, locked against create and remove for VERB ("export", "push"): the lock's
 * fd; the root's path in *ROOT, its metadata in *M (empty when unreadable). die()s
 * "cannot VERB 'NAME': ..." when it does not exist or another process holds it. An
 * overlay root is mounted first (overlay.h), so the root path shows the merged tree;
 * except with UPPERFD (push) for one made from an image, whose diff is its upper: nothing
 * is mounted, *UPPERFD is the upper directory (opened beneath the store's overlays/ through
 * no symlink, in this process's own user namespace); -1 for any other root. */
int export_lock_root (const char *name, const char *verb, char **root, struct meta *m,
                      int *upperfd);
/* From the root's metadata M (its host_copies are taken) and $SOURCE_DATE_EPOCH (dies on a
 * malformed one). */
void export_filter_init (struct export_filter *f, struct meta *m, const char *what);
void export_filter_clear (struct export_filter *f);
/* E is create's addition (home/USER), left out with what it holds. Every name export and
 * push leave out is decided here, so both leave out the same. */
bool export_filter_skip (const struct export_filter *f, const struct walk_entry *e);
/* What the regular file E is written as when not as it is (the user's passwd and group
 * lines removed, /dev stand-ins and entering's DNS copies empty): true and a new *CONTENT
 * of *LEN bytes. Reads E's fd, never the name, and rewinds it. */
bool export_filter_substitute (const struct export_filter *f, const struct walk_entry *e,
                               char **content, size_t *len);
/* The regular file E is one of create's or entering's that are written empty (a /dev
 * stand-in, entering's copy of the host's resolv.conf or hosts, by its stamp): its content
 * is not the root's at all. */
bool export_filter_written_empty (const struct export_filter *f, const struct walk_entry *e);
/* The buffer export_copy_data() needs. */
#define EXPORT_COPY_BLOCK (256 * 1024)
struct archive;
/* Write the regular file E's data to A through E's fd (the walk's, never the name): exactly
 * the size walked, so a file changing meanwhile never corrupts the tar; one that shrank is
 * refused ("enter nothing in the root while DOING it"). WHAT begins every error line;
 * BLOCK(n, DATA) follows each block written (progress, interrupt checks). BUF holds
 * EXPORT_COPY_BLOCK bytes. */
void export_copy_data (struct archive *a, const struct walk_entry *e, char *buf,
                       const char *what, const char *doing,
                       void (*block) (size_t n, void *data), void *data);
/* ST's whole-second mtime, clamped to $SOURCE_DATE_EPOCH when set. */
time_t export_mtime (const struct export_filter *f, const struct stat *st);
/* $SOURCE_DATE_EPOCH: true and *OUT when set; dies on a malformed value. */
bool export_source_date_epoch (time_t *out);
