/* Overlay roots (LAYERS-CONTRACT, issue 28): a root whose metadata says "layout":"overlay"
 * is an overlayfs of its image's layers from the layer store (read-only, shared by every
 * root of the image) and an upper directory of its own, mounted on roots/NAME only inside
 * a private mount namespace of a user namespace, never on the host:
 *
 *   roots/NAME/            the mount point: an empty directory on the host
 *   overlays/NAME/upper/   the root's own changes (its diff)
 *   overlays/NAME/work/    overlayfs's work directory
 *
 * Linked into both programs: enter-devroot mounts it in the job's namespaces, before /dev,
 * /proc and the binds; enter-devroot-store mounts it in namespaces of its own
 * (overlay_store_mount) before an operation opens the root. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "common/meta.h"
#include "common/options.h"
#include "common/paths.h"

/* overlayfs stacks at most this many lower layers (OVL_MAX_STACK). */
#define OVERLAY_MAX_LAYERS 500

/* Whether create makes root NAME an overlay root rather than a flat directory: ASKED
 * (create --overlay or --flat), else ENTER_DEVROOT_LAYOUT, else "layout = " in the config
 * file, else flat. Flat is the default in every mode: a devroot is a directory the user can
 * see, and that chroot mode enters. An overlay asked for where an unprivileged overlay does
 * not mount (overlay_probe_cached) is refused in one line; so is a bad value. */
bool overlay_layout_wanted (const struct store_paths *p, enum root_layout asked,
                            const char *name);

/* Whether M describes an overlay root. */
bool overlay_is_root (const struct meta *m);

/* $XDG_CACHE_HOME/enter-devroot/layers/sha256/HEX/tree for DIFF_ID "sha256:HEX" (the
 * caller's own cache, never a shared `cache = DIR`); NULL when DIFF_ID is not of that form. */
char *overlay_layer_tree (const char *diff_id);

/* The layer DIFF_ID's size in bytes of regular files (its meta.json), 0 when unknown. */
uint64_t overlay_layer_size (const char *diff_id);

/* Hold the layer DIFF_ID against `cache clean`: its directory open with a shared lock,
 * checked to be in place and whole. The fd (the hold lasts until it is closed), or -1 when
 * the layer is not in the store (or a clean removed it meanwhile). */
int overlay_layer_hold (const char *diff_id);

/* Mount the overlay of LAYERS (diff_ids, bottom first) with DIR/upper and DIR/work on
 * TARGET, in the current mount namespace, which must be a private one of a user namespace
 * the caller holds CAP_SYS_ADMIN in. THROWAWAY: `volatile` (no sync of the upper's
 * filesystem at unmount; see overlay.c). die()s with one line naming root NAME on failure
 * (too many layers for this kernel included). */
void overlay_mount (const char *name, const char *target, char *const *layers, const char *dir,
                    bool throwaway);

/* overlay_mount for root NAME of the store P, on its roots/NAME with overlays/NAME. */
void overlay_mount_root (const struct store_paths *p, const char *name, const struct meta *m,
                         bool throwaway);

/* This process's own user namespace (the caller's ids mapped to themselves) and private
 * mount namespace, made once; die()s naming root NAME when user namespaces are unavailable.
 * The process must be single-threaded. */
void overlay_store_namespaces (const char *name);

/* enter-devroot-store: when NAME (whose metadata is M) is an overlay root, make this
 * process's own user namespace (identity maps) and private mount namespace, once, and
 * mount the root there, so that what opens roots/NAME afterwards sees the merged tree.
 * The process must be single-threaded (unshare(CLONE_NEWUSER)); nothing is mounted on the
 * host. No-op for a plain root. */
void overlay_store_mount (const struct store_paths *p, const char *name, const struct meta *m);

/* Remove NAME's overlays/NAME (upper and work, whose work/work overlayfs leaves mode 000).
 * 0, or -1 with errno. */
int overlay_remove_dirs (const struct store_paths *p, const char *name);

/* Whether an unprivileged overlay mount with userxattr works here: tried in a child in
 * namespaces of its own, on directories made (and removed) under P's overlays/. The answer
 * is kept in overlays/OVERLAY_PROBE_FILE for overlay_probe_cached. */
bool overlay_probe (const struct store_paths *p);

/* overlay_probe's answer as kept for this kernel (release and version) and its user
 * namespace sysctls, else a new probe: what create asks, so that a create does not mount a
 * test overlay each time. */
bool overlay_probe_cached (const struct store_paths *p);
#define OVERLAY_PROBE_FILE ".probe"
