/* i386's system call numbers as the kernel headers give them, for test-bpf to check
 * syscall-table.c's i386 column against. A file of its own: <asm/unistd_32.h> and the
 * x86_64 <asm/unistd.h> define the same __NR_ names with other numbers. */
#include <stddef.h>

#include "i386-numbers.h"

#ifdef __x86_64__
#include <asm/unistd_32.h>
#define I386(call) { #call, __NR_##call }
const struct named_nr i386_numbers[] = {
  I386 (ioctl), I386 (mknod), I386 (mknodat),
  I386 (getuid), I386 (geteuid), I386 (getgid), I386 (getegid),
  I386 (getuid32), I386 (geteuid32), I386 (getgid32), I386 (getegid32),
  I386 (chown), I386 (fchown), I386 (lchown), I386 (fchownat),
  I386 (chown32), I386 (fchown32), I386 (lchown32),
  I386 (setuid), I386 (setgid), I386 (setreuid), I386 (setregid),
  I386 (setresuid), I386 (setresgid), I386 (setfsuid), I386 (setfsgid), I386 (setgroups),
  I386 (setuid32), I386 (setgid32), I386 (setreuid32), I386 (setregid32),
  I386 (setresuid32), I386 (setresgid32), I386 (setfsuid32), I386 (setfsgid32),
  I386 (setgroups32), I386 (capset),
};
const size_t n_i386_numbers = sizeof i386_numbers / sizeof i386_numbers[0];
#else
const struct named_nr i386_numbers[1];
const size_t n_i386_numbers = 0;
#endif
