/* Confinement beyond chroot, applied after chroot and just before exec (enter.c step 9).
 *
 * chroot changes what "/" means; it does not confine. A process inside could still use a
 * directory fd received from outside, signal or ptrace the user's other processes (same
 * uid), reach an abstract unix socket, or push keystrokes into the user's terminal.
 *
 *   1. Landlock: one domain handling every filesystem access right the ABI knows, with a
 *      single rule granting all of them beneath the new root. An fd or a working directory
 *      outside the root then opens nothing. A Landlock domain also cannot ptrace (nor
 *      process_vm_writev, pidfd_getfd: both need ptrace access) a process outside itself,
 *      whatever the ABI; ABI 6 adds scoping of signals and abstract unix sockets.
 *      No network rights are handled: a devroot is for development, and has the network.
 *      Where the kernel has no Landlock: one warning line, and chroot alone.
 *      Where it has Landlock but applying the domain fails: exit 125, never a silent
 *      unconfined devroot (a partial failure means something is wrong, not absent).
 *   2. seccomp: ioctl TIOCSTI (bubblewrap CVE-2017-5226) and TIOCLINUX (paste selection
 *      on a virtual console injects too: flatpak CVE-2023-28100) fail with EPERM. The
 *      request is compared on its low 32 bits only, as the kernel's ioctl does: flatpak
 *      compared 64 bits and was bypassed by setting high bits (CVE-2019-10063); its fix,
 *      SCMP_A1 (SCMP_CMP_MASKED_EQ, 0xFFFFFFFFu, TIOCSTI) in setup_seccomp() of
 *      flatpak common/flatpak-run.c, is what the filter below does without libseccomp.
 *      Like libseccomp's default (flatpak), a foreign architecture is killed and x32
 *      syscall numbers are refused; i386 (int $0x80 from a 64-bit process) gets the same
 *      rule as native, as flatpak adds that arch for multiarch apps.
 *      Installed last, after Landlock, so the filter does not have to allow the Landlock
 *      syscalls.
 *
 * Why not setsid(), bubblewrap's --new-session answer to TIOCSTI (flatpak's filter
 * comment: blocking the ioctls "avoids needing --new-session"): TIOCSTI needs the
 * terminal to be the caller's controlling terminal, so a new session (no controlling
 * terminal) stops it, but it also takes the terminal away from `enter`'s interactive
 * shell: no job control, and ^C/^Z no longer reach the devroot's foreground job. The
 * filter stops injection and leaves the session alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/util.h"
#include "common/verbose.h"
#include "enter/bpf.h"
#include "enter/confine.h"
#include "enter/syscall-table.h"

/* The uapi of Landlock ABI 6 (Linux 6.12), spelled out here: the build host's
 * <linux/landlock.h> may predate it. The kernel accepts a larger struct than it knows
 * as long as the fields it does not know are zero. */
struct edr_ruleset_attr
{
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

#define EDR_ACCESS_FS_ABI1   ((1ULL << 13) - 1) /* EXECUTE .. MAKE_SYM */
#define EDR_ACCESS_FS_REFER     (1ULL << 13)    /* ABI 2 */
#define EDR_ACCESS_FS_TRUNCATE  (1ULL << 14)    /* ABI 3 */
#define EDR_ACCESS_FS_IOCTL_DEV (1ULL << 15)    /* ABI 5 */
#define EDR_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define EDR_SCOPE_SIGNAL               (1ULL << 1) /* ABI 6 */
#define EDR_LANDLOCK_ABI_SCOPES 6

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif
#ifndef LANDLOCK_RULE_PATH_BENEATH
#define LANDLOCK_RULE_PATH_BENEATH 1
#endif

struct edr_path_beneath_attr
{
  uint64_t allowed_access;
  int32_t parent_fd;
} __attribute__((packed));

int
confine_landlock_abi (void)
{
  long abi = syscall (SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
  return abi >= 1 ? (int) abi : -errno;
}

static uint64_t
fs_rights (int abi)
{
  uint64_t rights = EDR_ACCESS_FS_ABI1;
  if (abi >= 2)
    rights |= EDR_ACCESS_FS_REFER;
  if (abi >= 3)
    rights |= EDR_ACCESS_FS_TRUNCATE;
  if (abi >= 5)
    rights |= EDR_ACCESS_FS_IOCTL_DEV;
  return rights;
}

const char *
confine_landlock_summary (int abi)
{
  if (abi < 1)
    return "none: chroot only (enter warns)";
  if (abi >= EDR_LANDLOCK_ABI_SCOPES)
    return "filesystem limited to the root; signals, abstract sockets, ptrace scoped";
  if (abi >= 2)
    return "filesystem limited to the root, ptrace scoped; signals and abstract sockets "
           "NOT scoped (needs ABI 6)";
  return "filesystem limited to the root (no cross-directory rename/link: ABI 1), ptrace "
         "scoped; signals and abstract sockets NOT scoped (needs ABI 6)";
}

/* The warning for a kernel without Landlock, or without its scoping. */
static void
warn_landlock (const char *name, int abi)
{
  if (abi == -ENOSYS)
    warn ("root '%s': Landlock unavailable (kernel built without it): confined by chroot "
          "only; see --no-landlock", name);
  else if (abi == -EOPNOTSUPP)
    warn ("root '%s': Landlock unavailable (disabled at boot: add landlock to lsm=): "
          "confined by chroot only; see --no-landlock", name);
  else if (abi < 1)
    warn ("root '%s': Landlock unavailable (%s): confined by chroot only; see --no-landlock",
          name, strerror (-abi));
  else if (abi == 1)
    warn ("root '%s': Landlock ABI 1: renames and hard links across directories fail "
          "(EXDEV), signals and abstract sockets are not scoped (needs ABI %d); see "
          "--no-landlock", name, EDR_LANDLOCK_ABI_SCOPES);
  else
    warn ("root '%s': Landlock scoping of signals and abstract sockets unavailable (ABI %d, "
          "needs %d): filesystem and ptrace confined only; see --no-landlock", name, abi,
          EDR_LANDLOCK_ABI_SCOPES);
}

static void
apply_landlock (const char *name, int abi)
{
  struct edr_ruleset_attr attr = { .handled_access_fs = fs_rights (abi) };
  if (abi >= EDR_LANDLOCK_ABI_SCOPES)
    attr.scoped = EDR_SCOPE_ABSTRACT_UNIX_SOCKET | EDR_SCOPE_SIGNAL;
  cleanup_fd int ruleset = syscall (SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
  if (ruleset < 0)
    die_with_error ("cannot enter root '%s': Landlock ruleset", name);
  /* "/" is the new root: the rule covers exactly the devroot's tree. */
  cleanup_fd int rootfd = open ("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (rootfd < 0)
    die_with_error ("cannot enter root '%s': open /", name);
  struct edr_path_beneath_attr beneath = { .allowed_access = attr.handled_access_fs,
                                           .parent_fd = rootfd };
  if (syscall (SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0) < 0)
    die_with_error ("cannot enter root '%s': Landlock rule on the root", name);
  if (syscall (SYS_landlock_restrict_self, ruleset, 0) < 0)
    die_with_error ("cannot enter root '%s': Landlock restrict_self", name);
}

/* ---- seccomp: no terminal injection ---- */

/* Per arch: x32 numbers (same arch, high bit set) would need their own rules: refuse them
 * all, as a kernel without x32 does. Then ioctl's request, low 32 bits only
 * (CVE-2019-10063). */
static void
apply_seccomp (const char *name)
{
  static struct bpf_asm a;
  bpf_init (&a);
  bpf_label arch[MAX_SECCOMP_ARCHS];
  for (unsigned i = 0; i < n_seccomp_archs; i++)
    arch[i] = bpf_label_new (&a);
  bpf_label allow = bpf_label_new (&a), eperm = bpf_label_new (&a);
  bpf_label enosys = BPF_NEXT;

  seccomp_arch_switch (&a, arch, SECCOMP_RET_KILL_PROCESS);
  for (unsigned i = 0; i < n_seccomp_archs; i++)
    {
      bpf_bind (&a, arch[i]);
      bpf_load (&a, SECCOMP_NR);
      if (seccomp_archs[i].has_x32)
        {
          enosys = enosys != BPF_NEXT ? enosys : bpf_label_new (&a);
          bpf_jump (&a, BPF_JGE, EDR_X32_SYSCALL_BIT, enosys, BPF_NEXT);
        }
      bpf_jeq (&a, (uint32_t) syscall_nr (EDR_SYS_ioctl, &seccomp_archs[i]), BPF_NEXT, allow);
      bpf_load (&a, ARG_LO (1));
      bpf_jeq (&a, TIOCSTI, eperm, BPF_NEXT);
      bpf_jeq (&a, TIOCLINUX, eperm, allow);
    }
  bpf_bind (&a, allow);
  bpf_ret (&a, SECCOMP_RET_ALLOW);
  bpf_bind (&a, eperm);
  bpf_ret (&a, SECCOMP_RET_ERRNO | EPERM);
  if (enosys != BPF_NEXT)
    {
      bpf_bind (&a, enosys);
      bpf_ret (&a, SECCOMP_RET_ERRNO | ENOSYS);
    }
  bpf_install (&a, name, "seccomp filter");
}

void
confine_root (const char *name, bool no_landlock)
{
  if (!no_landlock)
    {
      int abi = confine_landlock_abi ();
      if (abi >= 1)
        apply_landlock (name, abi);
      verbose ("Landlock ABI %d: %s", abi > 0 ? abi : 0, confine_landlock_summary (abi));
      if (abi < EDR_LANDLOCK_ABI_SCOPES)
        warn_landlock (name, abi);
    }
  else
    verbose ("--no-landlock: no Landlock domain");
  apply_seccomp (name);
}
