/* The download cache, content-addressed, under ${XDG_CACHE_HOME:-~/.cache}/enter-devroot or
 * the directory the user chose (userconfig.h), which may be shared by the nodes of a cluster
 * over NFS, and by several users:
 *
 *   sha256/HEX        verified files, named by their SHA-256; renamed in atomically, never
 *                     written in place, so a name always matches its content
 *   origin/HEX        one line: where HEX came from (for `cache list`)
 *   partial/KEY       a download in progress or interrupted; KEY is the expected digest,
 *                     or "url-" + the SHA-256 of the URL when none is known (--no-verify)
 *   partial/KEY.validators  the URL, ETag and Last-Modified the partial bytes came with
 *   partial/.KEY.XXXXXX     a download that could not use partial/KEY (another user's)
 *   locks/KEY.lock    fcntl-locked (an OFD write lock, which NFS carries between clients)
 *                     while KEY is fetched: a concurrent fetch of the same file, on this
 *                     machine or another, waits and then finds it cached (never deleted,
 *                     like the store's locks); a dead holder's lock is dropped by the kernel
 *                     or the NFS server, so none goes stale. The holder writes who it is
 *                     into it ("pid N on HOST, uid U"), for the message of a waiter that
 *                     gives up.
 *
 * Trust (SECURITY.md, "A shared download cache"): every directory of the cache is owned by
 * the caller or by root, and one that others can write has the sticky bit (/tmp's model:
 * nobody renames or deletes another's entries). Any file in it may have been planted by
 * another user: files are opened without following symlinks and without blocking (a FIFO
 * is refused, never waited on), and a cached file is used only through the descriptor its
 * digest was checked on, from a file nobody else can write (the caller's or root's), or
 * from a private copy made while hashing. A file that fails is ignored and fetched again;
 * it is deleted only when it is the caller's own. A lock is waited for only while its
 * holder's download makes progress. Another user can thus make a fetch slower or fail
 * (with a message naming them), never change what it yields.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "store/source.h"

struct cache
{
  bool shared;  /* some directory of it is writable by others (sticky) */
  char *base;
  char *sha256;
  char *origin;
  char *partial;
  char *locks;
};

/* The cache at BASE; pure, for the unit tests. */
void cache_init (struct cache *c, const char *base);
/* At config_cache_dir(), creating the directories (0700) in a cache of the caller's own;
 * die()s on failure, or when a directory fails the ownership and mode checks. */
void cache_open (struct cache *c);
/* The same for what only lists and deletes (cache list, cache clean): a directory that is
 * not there holds nothing, and is not made (a full disk has no block for one). */
void cache_open_existing (struct cache *c);
void cache_clear (struct cache *c);

/* Block until KEY's lock is ours (says so once on stderr unless QUIET when it has to wait),
 * die()ing when its holder's download made no progress for ENTER_DEVROOT_LOCK_TIMEOUT
 * seconds (one line naming the holder). Returns the lock's fd; closing it releases the
 * lock. */
int cache_lock (const struct cache *c, const char *key, bool quiet);

/* The cached file HEX, read-only, checked against its name by hashing it from the fd
 * returned (the file itself when nobody else can write it, else a private copy made while
 * hashing); the fd is rewound. -1 when it is not cached or not usable: a file whose content
 * does not match its name (disk corruption, tampering), or that is no regular file, is
 * ignored with a warning (and deleted when it is the caller's). */
int cache_open_verified (const struct cache *c, const char *hex);

/* The same into memory for a small document (a manifest): read once, at most MAX bytes,
 * and hashed from that buffer, which is what is returned (NULL as above). */
char *cache_read_verified (const struct cache *c, const char *hex, size_t max, size_t *len);

/* The name in partial/ to download KEY into: KEY when that is free or the caller's own (a
 * download to resume), else a new private file .KEY.XXXXXX (another user's partial/KEY is
 * neither trusted nor deleted). Call with KEY's lock held; die()s on failure. */
char *cache_partial_name (const struct cache *c, const char *key);

/* Move the verified partial file NAME (open as FD) to sha256/HEX and record ORIGIN; die()s
 * on failure. When another user's file holds sha256/HEX (a sticky directory: not ours to
 * replace), the download is used but not kept: NAME is deleted. */
void cache_commit (const struct cache *c, const char *name, int fd, const char *hex,
                   const char *origin);

/* `cache list`: digest, size, origin, one line each (or a JSON array); then each layer of
 * the layer store with its size and the roots using it (layers.h). */
void cache_list (const struct cache *c, bool json);
/* `cache clean`: remove every cached and partial file of the caller's nobody is fetching
 * right now (other users' are left alone), and the layers no root uses (layers.h). */
void cache_clean (const struct cache *c, bool quiet);
