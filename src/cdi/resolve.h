/* `enter-devroot-cdi resolve DEVICE...`: the container edits of the devices asked for, as
 * the CDI's Go library makes them (pkg/cdi/cache.go's InjectDevices, container-edits.go's
 * Apply), checked against this host and written to standard output in the format
 * enter-devroot reads (common/cdi-edits.h). */
#pragma once

#include "common/cdi-edits.h"

/* DEVICES (NULL-terminated, each VENDOR/CLASS=NAME) into *OUT: for each in order, its spec's
 * own edits the first time one of the spec's devices comes, then the device's. KIND=all is
 * the spec's device named "all", or where no spec defines one, every device of KIND.
 * Device nodes and mounts to the same path: the later replaces the earlier; mounts then in
 * order of depth (a mount inside another comes after it). die()s with one line naming the
 * spec file and the field for what cannot be given here: a device no spec defines or two
 * specs of one directory do, a host node or mount source that is missing or not what the
 * spec says, a mount that is not a bind or has an option not applied, a poststart or
 * poststop hook, additionalGids, intelRdt, netDevices. */
void resolve_devices (char *const *devices, struct cdi_edits *out);
