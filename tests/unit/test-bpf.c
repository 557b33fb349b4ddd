/* The seccomp filters' assembler (src/enter/bpf.c) and syscall table
 * (src/enter/syscall-table.c): jumps land where their labels are bound, and a program
 * the kernel would refuse is refused here first. */
#include "unit.h"

#include <linux/audit.h>

#include "enter/bpf.h"
#include "enter/syscall-table.h"
#include "i386-numbers.h"

static struct bpf_asm a; /* ~40 KiB */

static void
forward_jumps_resolve_to_their_labels (void **state)
{
  (void) state;
  bpf_init (&a);
  bpf_label yes = bpf_label_new (&a), no = bpf_label_new (&a);
  bpf_load (&a, SECCOMP_NR);                 /* 0 */
  bpf_jeq (&a, 1, yes, BPF_NEXT);            /* 1: true -> 4 */
  bpf_jeq (&a, 2, no, yes);                  /* 2: true -> 5, false -> 4 */
  bpf_goto (&a, no);                         /* 3: -> 5 */
  bpf_bind (&a, yes);
  bpf_ret (&a, SECCOMP_RET_ALLOW);           /* 4 */
  bpf_bind (&a, no);
  bpf_ret (&a, SECCOMP_RET_ERRNO | 1);       /* 5 */

  struct sock_fprog prog;
  const char *error = bpf_finish (&a, &prog);
  assert_null (error);
  assert_int_equal (6, prog.len);
  assert_ptr_equal (a.insn, prog.filter);
  assert_int_equal (2, prog.filter[1].jt);
  assert_int_equal (0, prog.filter[1].jf);
  assert_int_equal (2, prog.filter[2].jt);
  assert_int_equal (1, prog.filter[2].jf);
  assert_int_equal (BPF_JMP | BPF_JA, prog.filter[3].code);
  assert_int_equal (1, prog.filter[3].k);
  assert_int_equal (2, prog.filter[2].k); /* the operands are kept */
  assert_int_equal (SECCOMP_RET_ERRNO | 1, prog.filter[5].k);
}

/* A conditional jump over N instructions. */
static const char *
jump_over (size_t n)
{
  bpf_init (&a);
  bpf_label far = bpf_label_new (&a);
  bpf_load (&a, SECCOMP_NR);
  bpf_jeq (&a, 0, far, BPF_NEXT);
  for (size_t i = 0; i < n; i++)
    bpf_ret (&a, SECCOMP_RET_ALLOW);
  bpf_bind (&a, far);
  bpf_ret (&a, SECCOMP_RET_KILL_PROCESS);
  struct sock_fprog prog;
  return bpf_finish (&a, &prog);
}

static void
conditional_jump_reaches_255_and_no_farther (void **state)
{
  (void) state;
  assert_null (jump_over (255));
  assert_int_equal (255, a.insn[1].jt);
  assert_string_equal ("conditional jump farther than 255 instructions", jump_over (256));
}

static void
unconditional_jump_goes_farther (void **state)
{
  (void) state;
  bpf_init (&a);
  bpf_label far = bpf_label_new (&a);
  bpf_goto (&a, far);
  for (size_t i = 0; i < 1000; i++)
    bpf_ret (&a, SECCOMP_RET_ALLOW);
  bpf_bind (&a, far);
  bpf_ret (&a, SECCOMP_RET_KILL_PROCESS);
  struct sock_fprog prog;
  assert_null (bpf_finish (&a, &prog));
  assert_int_equal (1000, prog.filter[0].k);
}

static void
refuses_more_than_bpf_maxinsns (void **state)
{
  (void) state;
  struct sock_fprog prog;
  bpf_init (&a);
  for (size_t i = 0; i < BPF_MAXINSNS; i++)
    bpf_ret (&a, SECCOMP_RET_ALLOW);
  assert_null (bpf_finish (&a, &prog));
  assert_int_equal (BPF_MAXINSNS, prog.len);

  bpf_init (&a);
  for (size_t i = 0; i < BPF_MAXINSNS + 1; i++)
    bpf_ret (&a, SECCOMP_RET_ALLOW);
  assert_string_equal ("more than 4096 instructions", bpf_finish (&a, &prog));
}

static void
refuses_backward_unbound_and_trailing_jumps (void **state)
{
  (void) state;
  struct sock_fprog prog;

  bpf_init (&a);
  bpf_label back = bpf_label_new (&a);
  bpf_bind (&a, back);
  bpf_load (&a, SECCOMP_NR);
  bpf_jeq (&a, 0, back, BPF_NEXT);
  bpf_ret (&a, SECCOMP_RET_ALLOW);
  assert_string_equal ("jump backwards", bpf_finish (&a, &prog));

  bpf_init (&a);
  bpf_label never = bpf_label_new (&a);
  bpf_load (&a, SECCOMP_NR);
  bpf_jeq (&a, 0, never, BPF_NEXT);
  bpf_ret (&a, SECCOMP_RET_ALLOW);
  assert_string_equal ("jump to a label never bound", bpf_finish (&a, &prog));

  bpf_init (&a);
  bpf_label end = bpf_label_new (&a);
  bpf_load (&a, SECCOMP_NR);
  bpf_jeq (&a, 0, end, BPF_NEXT);
  bpf_ret (&a, SECCOMP_RET_ALLOW);
  bpf_bind (&a, end);
  assert_string_equal ("jump past the last instruction", bpf_finish (&a, &prog));

  bpf_init (&a);
  bpf_load (&a, SECCOMP_NR);
  assert_string_equal ("the last instruction does not return", bpf_finish (&a, &prog));
}

static void
syscall_table_has_every_call_and_i386_numbers_match_the_headers (void **state)
{
  (void) state;
  for (int call = 0; call < EDR_SYS_COUNT; call++)
    assert_non_null (syscall_table[call].name);
  assert_int_equal (AUDIT_ARCH_X86_64 == seccomp_archs[0].audit_arch ? EDR_SYS_COUNT : 0,
                    n_i386_numbers);
  for (size_t i = 0; i < n_i386_numbers; i++)
    {
      int call = 0;
      while (call < EDR_SYS_COUNT && strcmp (syscall_table[call].name, i386_numbers[i].name))
        call++;
      assert_int_not_equal (EDR_SYS_COUNT, call);
      if (syscall_table[call].nr[seccomp_archs[1].column] != i386_numbers[i].nr)
        fail_msg ("i386 %s: table %d, <asm/unistd_32.h> %d", i386_numbers[i].name,
                  syscall_table[call].nr[seccomp_archs[1].column], i386_numbers[i].nr);
    }
}

int
main (void)
{
  const struct CMUnitTest tests[] = {
    cmocka_unit_test (forward_jumps_resolve_to_their_labels),
    cmocka_unit_test (conditional_jump_reaches_255_and_no_farther),
    cmocka_unit_test (unconditional_jump_goes_farther),
    cmocka_unit_test (refuses_more_than_bpf_maxinsns),
    cmocka_unit_test (refuses_backward_unbound_and_trailing_jumps),
    cmocka_unit_test (syscall_table_has_every_call_and_i386_numbers_match_the_headers),
  };
  return cmocka_run_group_tests (tests, NULL, NULL);
}
