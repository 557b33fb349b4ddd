/* The fallback for kernels that refuse unprivileged chroot: an unprivileged user namespace
 * in which the caller's uid and gid map to themselves. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/* unshare(CLONE_NEWUSER) and write the identity maps. The process must be single-threaded
 * with an unshared fs_struct. 0, or -1 with errno. */
int userns_enter_identity (void);

/* In a process just cloned into a new user namespace: map UID and GID (the caller's, read
 * before the clone: inside, unmapped, they read as the overflow ids) to themselves. 0, or
 * -1 with errno. */
int userns_write_identity_maps (uid_t uid, gid_t gid);

/* Why user namespaces are unavailable here, from the sysctls that usually explain it and
 * ERR: "user.max_user_namespaces=0", "kernel.apparmor_restrict_unprivileged_userns=1", ...
 * Caller frees. */
char *userns_unavailable_reason (int err);

/* Why the kernel refused chroot: "kernel lacks unprivileged chroot" or
 * "fs.unprivileged_chroot=0", from /proc/sys/fs/unprivileged_chroot. Caller frees. */
char *chroot_refused_reason (int err);

/* Make ROOTFD, a directory descriptor that is also the working directory, the root:
 * fchroot(2) on the descriptor where the kernel has it (Linux 7.3), so that the path is not
 * walked again, else chroot("."). *HOW says which was used ("fchroot(2)" or "chroot(\".\")").
 * 0, or -1 with errno (the kernel's refusal, never ENOSYS). */
int chroot_to_fd (int rootfd, const char **how);

/* Whether this kernel has fchroot(2) (Linux 7.3 and later). */
bool fchroot_available (void);

/* Whether this kernel lets us chroot without a user namespace: as root, or with the
 * patched kernel's fs.unprivileged_chroot=1 (what auto mode enters by, and create's choice
 * of a flat root over an overlay one). */
bool userns_chroot_allowed (void);

#define SYSCTL_UNPRIVILEGED_CHROOT "/proc/sys/fs/unprivileged_chroot"
#define SYSCTL_MAX_USER_NAMESPACES "/proc/sys/user/max_user_namespaces"
#define SYSCTL_UNPRIVILEGED_USERNS_CLONE "/proc/sys/kernel/unprivileged_userns_clone"
#define SYSCTL_APPARMOR_RESTRICT_USERNS "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"
