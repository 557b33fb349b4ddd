/* The store of devroots: list (roots-list.c), remove, path; locking and staging. Creating
 * is in store-create.h. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/meta.h"
#include "common/paths.h"

/* Staging directories are NAME followed by this mkdtemp() suffix. */
#define STAGING_SUFFIX ".XXXXXX"

/* Remove every devroot in NAMES (NULL-terminated): all of them, or (die()) none when one
 * does not exist or, without FORCE, has a process of the caller inside. With FORCE the
 * processes inside are stopped first (inuse.h). */
void roots_remove (char *const *names, bool force);
void roots_list (bool json);
/* "512B", "1.9M", "3.2G": BYTES for a person to read. */
char *human_size (uint64_t bytes);
/* `images`: the devroots made from OCI images, with their references and manifest digests
 * (a table, or a JSON array of objects with name, image and digest). */
void roots_list_images (bool json);
/* The names of the roots in place, sorted (NULL-terminated, caller frees). */
char **roots_names (void);
/* NAME's metadata into M; false when it cannot be read (M is then empty). */
bool roots_read_meta (const char *name, struct meta *m);
/* The path of an existing devroot; die()s "cannot WHAT 'NAME': no such devroot" otherwise. */
char *roots_existing_path (const char *name, const char *what);
/* `path NAME`: die() in one line when NAME is an overlay root, whose directory is an empty
 * mount point on the host, saying how to reach its files instead. */
void roots_refuse_overlay_path (const char *name);

/* Delete NAME under DIRFD recursively without following symlinks, making directories
 * writable as it goes (a root may contain read-only directories). -1 with errno. */
int rm_rf_at (int dirfd, const char *name);

/* Shared with store-create.c. */
/* Create the store's directories (0700); die()s on failure. */
void roots_prepare (const struct store_paths *p);
/* NAME's lock without waiting: its fd, or -1 with errno (EWOULDBLOCK: another process
 * holds it). */
int lock_name_try (const struct store_paths *p, const char *name);
/* The fd holding NAME's lock; die()s "cannot WHAT 'NAME': another enter-devroot is ..." when
 * another process holds it. */
int lock_name_or_die (const struct store_paths *p, const char *name, const char *what);
/* Remove staging debris whose name's lock is free; OURS is the name this process holds. */
void clean_stale_staging (const struct store_paths *p, const char *ours);

/* Throwaway roots (run --ephemeral) are named EPHEMERAL_PREFIX and random hex digits. The
 * run that owns one holds its run lock (paths_run_lock) from before the root exists until
 * after it is gone; a root with this prefix whose run lock is free was left by a run that
 * crashed (SIGKILL, power loss). */
#define EPHEMERAL_PREFIX "ephemeral-"
/* The roots of Slurm jobs, run --ephemeral's and the plugin's, are named by slurm-job.h:
 * a job's named root of run --ephemeral outlives its steps, so it is abandoned once its
 * run lock is free and Slurm no longer knows the job; a root of the plugin's, which the
 * plugin removes, once nothing runs in it and Slurm no longer knows the job (what the
 * plugin could not remove: its child killed at the timeout, a crashed epilog). */
/* True when NAME is a throwaway root whose run is gone. */
bool ephemeral_abandoned (const struct store_paths *p, const char *name);
/* Remove every abandoned throwaway root, and every abandoned root of the Slurm plugin, and
 * their locks; how many were removed. create and doctor call it; list never shows an
 * abandoned throwaway root. */
int reap_abandoned_ephemeral (const struct store_paths *p);
/* Remove throwaway root NAME, its metadata and lock files; the caller holds its run lock.
 * 1 when removed, 0 when there was no such root, -1 after a warning line naming what
 * failed. */
int roots_remove_ephemeral (const struct store_paths *p, const char *name);
/* Remove root NAME and its metadata only, its lock files kept (the caller holds its run
 * lock and its step's state: slurmstep.h): what an earlier run of a Slurm step left under
 * the name the step's run now makes. Returns as roots_remove_ephemeral. */
int roots_remove_leftover (const struct store_paths *p, const char *name);
