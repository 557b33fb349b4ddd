/* The download cache, content-addressed, under ${XDG_CACHE_HOME:-~/.cache}/enter-devroot or
 * the directory the user chose (userconfig.h), which may be shared by the nodes of a cluster
 * over NFS:
 *
 *   sha256/HEX        verified files, named by their SHA-256; renamed in atomically, never
 *                     written in place, so a name always matches its content
 *   origin/HEX        one line: where HEX came from (for `cache list`)
 *   partial/KEY       a download in progress or interrupted; KEY is the expected digest,
 *                     or "url-" + the SHA-256 of the URL when none is known (--no-verify)
 *   partial/KEY.validators  the URL, ETag and Last-Modified the partial bytes came with
 *   locks/KEY.lock    fcntl-locked (an OFD write lock, which NFS carries between clients)
 *                     while KEY is fetched: a concurrent fetch of the same file, on this
 *                     machine or another, waits and then finds it cached (never deleted,
 *                     like the store's locks); a dead holder's lock is dropped by the kernel
 *                     or the NFS server, so none goes stale
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "store/source.h"

struct cache
{
  char *base;
  char *sha256;
  char *origin;
  char *partial;
  char *locks;
};

/* The cache at BASE; pure, for the unit tests. */
void cache_init (struct cache *c, const char *base);
/* At config_cache_dir(), creating the directories (0700); die()s on failure. */
void cache_open (struct cache *c);
void cache_clear (struct cache *c);

/* Block until KEY's lock is ours (says so once on stderr unless QUIET when it has to wait).
 * Returns the lock's fd; closing it releases the lock. */
int cache_lock (const struct cache *c, const char *key, bool quiet);

/* The cached file HEX, opened read-only and checked against its name by hashing it from
 * that same fd; the fd is rewound. -1 when it is not cached. A file whose content does not
 * match its name (disk corruption, tampering) is deleted with a warning and -1 returned. */
int cache_open_verified (const struct cache *c, const char *hex);

/* Move the verified partial file KEY to sha256/HEX and record ORIGIN; die()s on failure. */
void cache_commit (const struct cache *c, const char *key, const char *hex, const char *origin);

/* `cache list`: digest, size, origin, one line each (or a JSON array). */
void cache_list (const struct cache *c, bool json);
/* `cache clean`: remove every cached and partial file nobody is fetching right now. */
void cache_clean (const struct cache *c, bool quiet);
