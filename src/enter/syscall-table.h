/* The architectures enter-devroot's seccomp filters are written for, and the numbers of
 * the system calls they name on each (charliecloud's root emulation keeps such a table):
 * one place to add an architecture or a call, for both filters (confine.c, rootemu.c). */
#pragma once

#include <linux/audit.h>
#include <stdbool.h>
#include <stdint.h>

#include "enter/bpf.h"

#if !defined(__x86_64__) && !defined(__aarch64__) && !defined(__i386__)
#error "syscall-table.h: add this architecture's AUDIT_ARCH (and check both filters' numbers)"
#endif

/* The calls the filters name: confine.c's ioctl, rootemu.c's mknod and mknodat, then every
 * call that --root fakes (rootemu.c), from EDR_SYS_FAKED_FIRST to the end. */
enum edr_syscall
{
  EDR_SYS_ioctl,
  EDR_SYS_mknod,
  EDR_SYS_mknodat,
  EDR_SYS_getuid, EDR_SYS_FAKED_FIRST = EDR_SYS_getuid, EDR_SYS_geteuid, EDR_SYS_getgid, EDR_SYS_getegid,
  EDR_SYS_getuid32, EDR_SYS_geteuid32, EDR_SYS_getgid32, EDR_SYS_getegid32,
  EDR_SYS_chown, EDR_SYS_fchown, EDR_SYS_lchown, EDR_SYS_fchownat,
  EDR_SYS_chown32, EDR_SYS_fchown32, EDR_SYS_lchown32,
  EDR_SYS_setuid, EDR_SYS_setgid, EDR_SYS_setreuid, EDR_SYS_setregid,
  EDR_SYS_setresuid, EDR_SYS_setresgid, EDR_SYS_setfsuid, EDR_SYS_setfsgid,
  EDR_SYS_setgroups,
  EDR_SYS_setuid32, EDR_SYS_setgid32, EDR_SYS_setreuid32, EDR_SYS_setregid32,
  EDR_SYS_setresuid32, EDR_SYS_setresgid32, EDR_SYS_setfsuid32, EDR_SYS_setfsgid32,
  EDR_SYS_setgroups32,
  EDR_SYS_capset,
  EDR_SYS_COUNT
};

/* A call the architecture does not have (aarch64 has no chown, only fchownat). */
#define NR_NONE (-1)

/* The x32 ABI shares x86_64's AUDIT_ARCH and sets this bit in the call number. */
#define EDR_X32_SYSCALL_BIT 0x40000000u

struct seccomp_arch
{
  const char *name;
  uint32_t audit_arch;
  bool has_x32; /* numbers with EDR_X32_SYSCALL_BIT arrive under this arch too */
  unsigned column; /* in syscall_table[].nr */
};

/* The build's own architecture first; on x86_64 also i386, whose calls a 64-bit process
 * can still make (int $0x80): both filters give them the same rules as native calls,
 * with i386's own numbers. */
#define MAX_SECCOMP_ARCHS 2
extern const struct seccomp_arch seccomp_archs[];
extern const unsigned n_seccomp_archs;

#define SYSCALL_TABLE_COLUMNS 2
struct syscall_row
{
  const char *name;
  int32_t nr[SYSCALL_TABLE_COLUMNS]; /* by seccomp_arch.column; NR_NONE: no such call */
};
extern const struct syscall_row syscall_table[EDR_SYS_COUNT];

/* The number of CALL on ARCH, or NR_NONE. */
int32_t syscall_nr (enum edr_syscall call, const struct seccomp_arch *arch);

/* Emit: load the arch, go to LABELS[i] for seccomp_archs[i], return FOREIGN for any
 * other arch (no rule was written for it). Every filter starts so: a call number means
 * nothing until its arch is known. */
void seccomp_arch_switch (struct bpf_asm *a, const bpf_label *labels, uint32_t foreign);
