/* The classic-BPF assembler of bpf.h: instructions are appended, jumps keep the labels
 * they name until bpf_finish turns them into offsets. */
#include <sys/prctl.h>

#include "common/util.h"
#include "common/verbose.h"
#include "enter/bpf.h"

#define STR_(x) #x
#define STR(x) STR_ (x)

void
bpf_init (struct bpf_asm *a)
{
  a->len = 0;
  a->n_labels = 1; /* label 0 is BPF_NEXT */
  a->error = NULL;
}

static void
fail (struct bpf_asm *a, const char *error)
{
  if (a->error == NULL)
    a->error = error;
}

bpf_label
bpf_label_new (struct bpf_asm *a)
{
  if (a->n_labels >= BPF_MAX_LABELS)
    {
      fail (a, "too many labels");
      return BPF_NEXT;
    }
  a->label_at[a->n_labels] = SIZE_MAX;
  return a->n_labels++;
}

/* A label jumped to before it was bound is a forward jump; one already bound would be a
 * backward jump, which classic BPF has not. */
static uint8_t
reference (struct bpf_asm *a, bpf_label label)
{
  if (label == BPF_NEXT)
    return BPF_NEXT;
  if (label >= a->n_labels)
    fail (a, "jump to an unknown label");
  else if (a->label_at[label] != SIZE_MAX)
    fail (a, "jump backwards");
  else
    return (uint8_t) label;
  return BPF_NEXT;
}

void
bpf_bind (struct bpf_asm *a, bpf_label label)
{
  if (label == BPF_NEXT || label >= a->n_labels)
    fail (a, "binding an unknown label");
  else if (a->label_at[label] != SIZE_MAX)
    fail (a, "label bound twice");
  else
    a->label_at[label] = a->len;
}

static void
emit (struct bpf_asm *a, struct sock_filter insn, bpf_label jt, bpf_label jf)
{
  if (a->len >= BPF_MAXINSNS)
    {
      fail (a, "more than " STR (BPF_MAXINSNS) " instructions");
      return;
    }
  a->insn[a->len] = insn;
  a->jt_label[a->len] = reference (a, jt);
  a->jf_label[a->len] = reference (a, jf);
  a->len++;
}

void
bpf_load (struct bpf_asm *a, uint32_t offset)
{
  emit (a, (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offset), 0, 0);
}

void
bpf_jump (struct bpf_asm *a, uint16_t op, uint32_t k, bpf_label jt, bpf_label jf)
{
  emit (a, (struct sock_filter) BPF_JUMP (BPF_JMP | op | BPF_K, k, 0, 0), jt, jf);
}

void
bpf_goto (struct bpf_asm *a, bpf_label label)
{
  emit (a, (struct sock_filter) BPF_STMT (BPF_JMP | BPF_JA, 0), label, 0);
}

void
bpf_and (struct bpf_asm *a, uint32_t k)
{
  emit (a, (struct sock_filter) BPF_STMT (BPF_ALU | BPF_AND | BPF_K, k), 0, 0);
}

void
bpf_ret (struct bpf_asm *a, uint32_t v)
{
  emit (a, (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, v), 0, 0);
}

/* The offset from the instruction AT to LABEL, or -1 (and the reason in A) when LABEL
 * was never bound or is beyond MAX. */
static int64_t
offset_to (struct bpf_asm *a, size_t at, bpf_label label, uint32_t max)
{
  size_t target = a->label_at[label];
  if (target == SIZE_MAX)
    fail (a, "jump to a label never bound");
  else if (target == a->len)
    fail (a, "jump past the last instruction");
  else if (target - at - 1 > max)
    fail (a, "conditional jump farther than 255 instructions");
  else
    return (int64_t) (target - at - 1);
  return -1;
}

const char *
bpf_finish (struct bpf_asm *a, struct sock_fprog *prog)
{
  for (size_t i = 0; i < a->len && a->error == NULL; i++)
    {
      struct sock_filter *insn = &a->insn[i];
      bool ja = insn->code == (BPF_JMP | BPF_JA);
      int64_t off;
      if (a->jt_label[i] != BPF_NEXT
          && (off = offset_to (a, i, a->jt_label[i], ja ? UINT32_MAX : UINT8_MAX)) >= 0)
        {
          if (ja)
            insn->k = (uint32_t) off;
          else
            insn->jt = (uint8_t) off;
        }
      if (a->jf_label[i] != BPF_NEXT
          && (off = offset_to (a, i, a->jf_label[i], UINT8_MAX)) >= 0)
        insn->jf = (uint8_t) off;
      a->jt_label[i] = a->jf_label[i] = BPF_NEXT;
    }
  if (a->error == NULL && a->len == 0)
    fail (a, "no instructions");
  if (a->error == NULL && BPF_CLASS (a->insn[a->len - 1].code) != BPF_RET)
    fail (a, "the last instruction does not return");
  if (a->error != NULL)
    return a->error;
  *prog = (struct sock_fprog) { .len = (unsigned short) a->len, .filter = a->insn };
  return NULL;
}

void
bpf_install (struct bpf_asm *a, const char *name, const char *what)
{
  struct sock_fprog prog;
  const char *error = bpf_finish (a, &prog);
  if (error != NULL)
    die ("cannot enter root '%s': %s: %s", name, what, error);
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
    die_with_error ("cannot enter root '%s': %s", name, what);
  verbose ("installed %s (%u instructions)", what, (unsigned) prog.len);
}
