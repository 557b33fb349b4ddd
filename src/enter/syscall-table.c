/* The table of syscall-table.h. Native numbers come from the build's <asm/unistd.h>; the
 * i386 column (used on x86_64 only, where no header of the build has them) is spelled
 * out from arch/x86/entry/syscalls/syscall_32.tbl, and tests/unit/test-bpf checks it
 * against <asm/unistd_32.h>. */
#include <sys/syscall.h>

#include "common/util.h"
#include "enter/syscall-table.h"

const struct seccomp_arch seccomp_archs[] = {
#if defined(__x86_64__)
  { "x86_64", AUDIT_ARCH_X86_64, true, 0 },
  { "i386", AUDIT_ARCH_I386, false, 1 },
#elif defined(__aarch64__)
  { "aarch64", AUDIT_ARCH_AARCH64, false, 0 },
#elif defined(__i386__)
  { "i386", AUDIT_ARCH_I386, false, 0 },
#endif
};
const unsigned n_seccomp_archs = N_ELEMENTS (seccomp_archs);
_Static_assert (N_ELEMENTS (seccomp_archs) <= MAX_SECCOMP_ARCHS, "MAX_SECCOMP_ARCHS");

/* Native calls some architectures lack: aarch64 has only the *at calls, and only i386
 * has the *32 calls (32-bit ids on a 16-bit-id ABI). */
#ifndef __NR_chown
#define __NR_chown NR_NONE
#define __NR_lchown NR_NONE
#endif
#ifndef __NR_mknod
#define __NR_mknod NR_NONE
#endif
#ifndef __NR_getuid32
#define __NR_getuid32 NR_NONE
#define __NR_geteuid32 NR_NONE
#define __NR_getgid32 NR_NONE
#define __NR_getegid32 NR_NONE
#define __NR_chown32 NR_NONE
#define __NR_fchown32 NR_NONE
#define __NR_lchown32 NR_NONE
#define __NR_setuid32 NR_NONE
#define __NR_setgid32 NR_NONE
#define __NR_setreuid32 NR_NONE
#define __NR_setregid32 NR_NONE
#define __NR_setresuid32 NR_NONE
#define __NR_setresgid32 NR_NONE
#define __NR_setfsuid32 NR_NONE
#define __NR_setfsgid32 NR_NONE
#define __NR_setgroups32 NR_NONE
#endif

#ifdef __x86_64__
#define ROW(call, i386) [EDR_SYS_##call] = { #call, { __NR_##call, i386 } }
#else
#define ROW(call, i386) [EDR_SYS_##call] = { #call, { __NR_##call, NR_NONE } }
#endif

const struct syscall_row syscall_table[EDR_SYS_COUNT] = {
  /*   call          i386 */
  ROW (ioctl,        54),
  ROW (mknod,        14),
  ROW (mknodat,      297),
  ROW (getuid,       24),
  ROW (geteuid,      49),
  ROW (getgid,       47),
  ROW (getegid,      50),
  ROW (getuid32,     199),
  ROW (geteuid32,    201),
  ROW (getgid32,     200),
  ROW (getegid32,    202),
  ROW (chown,        182),
  ROW (fchown,       95),
  ROW (lchown,       16),
  ROW (fchownat,     298),
  ROW (chown32,      212),
  ROW (fchown32,     207),
  ROW (lchown32,     198),
  ROW (setuid,       23),
  ROW (setgid,       46),
  ROW (setreuid,     70),
  ROW (setregid,     71),
  ROW (setresuid,    164),
  ROW (setresgid,    170),
  ROW (setfsuid,     138),
  ROW (setfsgid,     139),
  ROW (setgroups,    81),
  ROW (setuid32,     213),
  ROW (setgid32,     214),
  ROW (setreuid32,   203),
  ROW (setregid32,   204),
  ROW (setresuid32,  208),
  ROW (setresgid32,  210),
  ROW (setfsuid32,   215),
  ROW (setfsgid32,   216),
  ROW (setgroups32,  206),
  ROW (capset,       185),
};

int32_t
syscall_nr (enum edr_syscall call, const struct seccomp_arch *arch)
{
  return syscall_table[call].nr[arch->column];
}

void
seccomp_arch_switch (struct bpf_asm *a, const bpf_label *labels, uint32_t foreign)
{
  bpf_load (a, SECCOMP_ARCH);
  for (unsigned i = 0; i < n_seccomp_archs; i++)
    bpf_jeq (a, seccomp_archs[i].audit_arch, labels[i], BPF_NEXT);
  bpf_ret (a, foreign);
}
