/* Step 5 of entering (enter.c): the mode, chroot or a user namespace (mode.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "common/options.h"
#include "enter/bind.h"

/* Before anything is made: the mode OPTS->mode asks for (auto: chroot where this kernel
 * lets us chroot, else a user namespace), a user namespace where --device needs a mount
 * namespace and --mode did not say chroot. Parses and checks every --bind against the host
 * into *BINDS, *N_BINDS (bind_parse_all), and refuses them in chroot mode, which makes no
 * mounts, as --device with --mode chroot: one line, exit 125. *USERNS_OFF: the kernel
 * makes no user namespaces (user.max_user_namespaces is 0), so none can be shared or kept. */
enum enter_mode mode_choose (const struct enter_opts *opts, bool *userns_off,
                             struct bind **binds, size_t *n_binds);

/* Once the root NAME is known: MODE, or userns mode for an OVERLAY root (overlay.h), which
 * exists only as a mount in the job's namespaces; refused with --mode chroot. */
enum enter_mode mode_for_root (enum enter_mode mode, const struct enter_opts *opts,
                               const char *name, bool overlay);
