/* The fallback for kernels that refuse unprivileged chroot: an unprivileged user namespace
 * in which the caller's uid and gid map to themselves, so files keep their owners and `id`
 * inside shows the caller. chroot then works because the caller holds CAP_SYS_CHROOT in
 * the new namespace; no_new_privs is already set, and exec of a non-root uid clears the
 * namespace capabilities again. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "common/userns.h"

static int
write_proc_file (const char *path, const char *text)
{
  cleanup_fd int fd = open (path, O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  return write_all (fd, text, strlen (text));
}

int
userns_enter_identity (void)
{
  uid_t uid = getuid ();
  gid_t gid = getgid ();
  if (unshare (CLONE_NEWUSER) < 0)
    return -1;
  return userns_write_identity_maps (uid, gid);
}

int
userns_write_identity_maps (uid_t uid, gid_t gid)
{
  /* An unprivileged process may write gid_map only after giving up setgroups(2) (so it
   * cannot drop a group that denies it access). */
  cleanup_free char *uid_map = xasprintf ("%lu %lu 1\n", (unsigned long) uid, (unsigned long) uid);
  cleanup_free char *gid_map = xasprintf ("%lu %lu 1\n", (unsigned long) gid, (unsigned long) gid);
  if (write_proc_file ("/proc/self/setgroups", "deny") < 0 && errno != ENOENT)
    return -1;
  if (write_proc_file ("/proc/self/uid_map", uid_map) < 0)
    return -1;
  if (write_proc_file ("/proc/self/gid_map", gid_map) < 0)
    return -1;
  return 0;
}

static bool
sysctl_is (const char *path, const char *value)
{
  cleanup_free char *v = read_first_line (path);
  return v != NULL && strcmp (v, value) == 0;
}

char *
userns_unavailable_reason (int err)
{
  if (sysctl_is (SYSCTL_MAX_USER_NAMESPACES, "0"))
    return xstrdup ("user.max_user_namespaces=0");
  if (sysctl_is (SYSCTL_UNPRIVILEGED_USERNS_CLONE, "0"))
    return xstrdup ("kernel.unprivileged_userns_clone=0");
  if (sysctl_is (SYSCTL_APPARMOR_RESTRICT_USERNS, "1"))
    return xasprintf ("kernel.apparmor_restrict_unprivileged_userns=1: %s", strerror (err));
  if (err == EINVAL)
    return xstrdup ("the process is threaded or already chrooted");
  return xasprintf ("unshare(CLONE_NEWUSER): %s", strerror (err));
}

/* fchroot(2), Linux 7.3: the same number on every architecture (scripts/syscall.tbl,
 * asm-generic/unistd.h); the build host's headers may predate it. */
#ifndef __NR_fchroot
#define __NR_fchroot 472
#endif

bool
fchroot_available (void)
{
  /* A kernel that has it looks at the descriptor first: EBADF; one without, ENOSYS. */
  return syscall (__NR_fchroot, -1, 0) < 0 && errno != ENOSYS;
}

int
chroot_to_fd (int rootfd, const char **how)
{
  *how = "fchroot(2)";
  if (syscall (__NR_fchroot, rootfd, 0) == 0)
    return 0;
  if (errno != ENOSYS)
    return -1;
  *how = "chroot(\".\")";
  return chroot (".");
}

char *
chroot_refused_reason (int err)
{
  /* The unprivileged path's errno for a shared fs_struct (as fchroot(FD_FAILFS_ROOT) and
   * setns(2)); the tool unshares it (enter.c step 4), so this is a thread of a library. */
  if (err == EINVAL)
    return xstrdup ("the process shares its root and working directory with another "
                    "thread (CLONE_FS)");
  if (err != EPERM)
    return xasprintf ("chroot: %s", strerror (err));
  cleanup_free char *v = read_first_line (SYSCTL_UNPRIVILEGED_CHROOT);
  if (v == NULL)
    return xstrdup ("kernel lacks unprivileged chroot");
  if (strcmp (v, "0") == 0)
    return xstrdup ("fs.unprivileged_chroot=0");
  return xstrdup ("refused by the kernel although fs.unprivileged_chroot=1");
}

bool
userns_chroot_allowed (void)
{
  cleanup_free char *v = read_first_line (SYSCTL_UNPRIVILEGED_CHROOT);
  return geteuid () == 0 || (v != NULL && strcmp (v, "1") == 0);
}
