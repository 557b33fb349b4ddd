/* Opening a path beneath a directory through no symlink: what an untrusted tree (a root, a
 * layer, an overlay's upper) is read with, by the store and by enter-devroot itself. */
#pragma once

/* PATH (relative: one component or more) beneath DIRFD, opened with FLAGS | O_NOFOLLOW |
 * O_CLOEXEC through no symlink and no "..": openat2 with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS where the kernel (or valgrind) has it, else
 * one component at a time with O_NOFOLLOW (so a caller of one that cannot tell what it got
 * checks it with fstat). -1 with errno (ELOOP or ENOTDIR for a
 * symlink, EXDEV for an escape). */
int open_beneath (int dirfd, const char *path, int flags);
