/* The mounts a userns-mode job makes in its own mount namespace (mounts.c). */
#pragma once

#include "enter/terminal.h"

/* MS_* FLAGS as words ("bind,ro"), for -v: newly allocated. */
char *mount_flags_text (unsigned long flags);

/* mount(2) onto what FD (an O_PATH fd) names, through /proc/self/fd: the target is the
 * file that was opened, never a path looked up again. */
int mount_on_fd (const char *source, int fd, const char *type, unsigned long flags,
                 const char *data);

/* userns mode, before chroot, the working directory the new root: a fresh tmpfs on its
 * dev/ holding the host's null, zero, full, random, urandom and tty, the fd and std*
 * links, a tmpfs on shm/ as large as the host's /dev/shm, a devpts of its own and TERM's
 * terminal as console. Failures are one
 * warning line each (NAME names the root): the root is usable without. */
void mount_dev (const char *name, const struct terminal *term);
