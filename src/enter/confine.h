/* Confinement beyond chroot: a Landlock domain around the devroot and a seccomp filter
 * against terminal injection, applied after chroot, just before exec. */
#pragma once

#include <stdbool.h>

/* The Landlock ABI this kernel offers: >= 1, or -errno (ENOSYS: built without Landlock,
 * EOPNOTSUPP: disabled at boot). */
int confine_landlock_abi (void);

/* What entering applies on a kernel with Landlock ABI ABI (as from confine_landlock_abi):
 * a static one-line description for doctor. */
const char *confine_landlock_summary (int abi);

/* Apply, in the already chrooted process, the Landlock domain on "/" (unless NO_LANDLOCK;
 * one warning line where the kernel cannot) and then the seccomp filter. Dies (exit 125)
 * when a domain or filter the kernel supports cannot be applied. */
void confine_root (const char *name, bool no_landlock);
