/* What both seccomp filters of enter-devroot share (confine.c against terminal injection,
 * rootemu.c for --root): the architectures they are written for and the classic-BPF
 * instructions they are made of, spelled without libseccomp (the entering program links
 * the C library only). */
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__x86_64__)
#define EDR_AUDIT_ARCH AUDIT_ARCH_X86_64
/* A 64-bit process can still make i386 system calls (int $0x80): both filters give them
 * the same rules as native calls, with i386's own numbers. */
#define EDR_COMPAT_ARCH AUDIT_ARCH_I386
#define EDR_X32_SYSCALL_BIT 0x40000000
#elif defined(__aarch64__)
#define EDR_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define EDR_AUDIT_ARCH AUDIT_ARCH_I386
#else
#error "bpf.h: add this architecture's AUDIT_ARCH (and check both filters' numbers)"
#endif

/* The low 32 bits of syscall argument N: ioctl's request and mknod's mode are 32-bit
 * in the kernel, whatever the caller put in the high bits. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof (struct seccomp_data, args[n]))
#else
#define ARG_LO(n) (offsetof (struct seccomp_data, args[n]) + sizeof (uint32_t))
#endif

#define LOAD(off) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, (off))
#define JEQ(k, jt, jf) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (k), (jt), (jf))
#define RET(v) BPF_STMT (BPF_RET | BPF_K, (v))
