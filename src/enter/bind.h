/* --bind SRC:DST[:ro]: host directories, files and sockets mounted into a userns-mode
 * devroot; the same walk and mount for a CDI device's nodes and mounts (cdi.h). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct bind
{
  char *src; /* absolute host path of a directory, a file or a socket */
  char *dst; /* absolute path inside the root, without "." or ".." components */
  bool ro;
  bool dir;  /* SRC is a directory (DST is made one), else DST is made an empty file */
  unsigned long attrs; /* MOUNT_ATTR_NOSUID, _NODEV, _NOEXEC it gets too (--bind: none) */
  bool shallow;        /* SRC's mount alone, not the mounts beneath it (--bind: false) */
  bool optional; /* not a --bind but one the job's launcher needs (mpi.h): where its DST
                  * cannot be made in the root, one warning line and no mount, never the
                  * run's end */
};

/* Parse and check every SPECS entry (--bind values) against the host, before anything is
 * created: SRC absolute, existing, not a device; DST absolute, not "/", no "..". die()s
 * with one line naming the --bind at fault. *N_OUT entries; caller frees with bind_free. */
struct bind *bind_parse_all (char **specs, size_t *n_out);
void bind_free (struct bind *binds, size_t n);

/* Working directory the root, before anything is mounted or created there: check that no
 * existing component of any DST (an optional bind's aside) is a symlink or not a
 * directory. Every path inside the root is walked one component at a time with O_NOFOLLOW
 * from the root's fd: never through a symlink, never outside. die()s naming the --bind at
 * fault. */
void bind_check_all (const char *name, const struct bind *binds, size_t n);

/* In the job's mount namespace, working directory the root, before chroot: create the
 * missing components of each DST (directories 0755; the last an empty file 0644 when SRC
 * is not a directory), walked as above, and mount SRC there
 * (recursively unless shallow; read-only with :ro and ATTRS, submounts included). die()s
 * naming the --bind; an optional bind that cannot be made is one warning line and left
 * out. */
void bind_mount_all (const char *name, const struct bind *binds, size_t n);
