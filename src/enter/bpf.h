/* A small assembler for the classic-BPF programs of enter-devroot's two seccomp filters
 * (confine.c against terminal injection, rootemu.c for --root), spelled without
 * libseccomp (the entering program links the C library only).
 *
 * Classic BPF jumps go forward only, a conditional one by at most 255 instructions, and a
 * program has at most BPF_MAXINSNS instructions. Counting offsets by hand is how filters
 * go wrong when a rule is added; here a jump names a label, the label is bound where the
 * code it means begins, and bpf_finish resolves every jump and refuses a program the
 * kernel would (too long, a jump out of reach, backwards, or to a label never bound). */
#pragma once

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>

/* The low 32 bits of syscall argument N: ioctl's request and mknod's mode are 32-bit
 * in the kernel, whatever the caller put in the high bits. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define ARG_LO(n) (offsetof (struct seccomp_data, args[n]))
#else
#define ARG_LO(n) (offsetof (struct seccomp_data, args[n]) + sizeof (uint32_t))
#endif
#define SECCOMP_NR offsetof (struct seccomp_data, nr)
#define SECCOMP_ARCH offsetof (struct seccomp_data, arch)

/* A jump target: 0 continues with the next instruction, others come from bpf_label. */
typedef unsigned bpf_label;
#define BPF_NEXT 0u
#define BPF_MAX_LABELS 64

struct bpf_asm
{
  struct sock_filter insn[BPF_MAXINSNS];
  /* Per instruction, the labels its true and false branches (or BPF_JA's k) still wait
   * for; BPF_NEXT once resolved. */
  uint8_t jt_label[BPF_MAXINSNS];
  uint8_t jf_label[BPF_MAXINSNS];
  size_t len;
  /* Where each label is bound (an instruction index), or SIZE_MAX while unbound. */
  size_t label_at[BPF_MAX_LABELS];
  unsigned n_labels;
  const char *error; /* the first mistake; later calls do nothing */
};

/* Start an empty program. A struct bpf_asm is ~40 KiB: keep it static, not on a stack. */
void bpf_init (struct bpf_asm *a);

/* A new, unbound label. */
bpf_label bpf_label_new (struct bpf_asm *a);

/* Bind LABEL to the next instruction emitted. */
void bpf_bind (struct bpf_asm *a, bpf_label label);

/* Load the 32-bit word at OFFSET of struct seccomp_data (SECCOMP_NR, ARG_LO (n) ...). */
void bpf_load (struct bpf_asm *a, uint32_t offset);

/* A conditional jump: compare the accumulator with K by OP (BPF_JEQ, BPF_JGE ...), go to
 * label JT when true, JF when false. */
void bpf_jump (struct bpf_asm *a, uint16_t op, uint32_t k, bpf_label jt, bpf_label jf);
#define bpf_jeq(a, k, jt, jf) bpf_jump ((a), BPF_JEQ, (k), (jt), (jf))

/* Go to LABEL unconditionally (any distance forward). */
void bpf_goto (struct bpf_asm *a, bpf_label label);

/* The accumulator &= K. */
void bpf_and (struct bpf_asm *a, uint32_t k);

/* Return V (SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | e ...). */
void bpf_ret (struct bpf_asm *a, uint32_t v);

/* Resolve every jump and point PROG at the program. Returns NULL, or (program unusable)
 * a static phrase saying what is wrong with it. */
const char *bpf_finish (struct bpf_asm *a, struct sock_fprog *prog);

/* bpf_finish, then install the program as a seccomp filter of the calling process. Dies
 * (exit 125) naming root NAME and WHAT filter when it cannot. */
void bpf_install (struct bpf_asm *a, const char *name, const char *what);
