/* i386's system call numbers from the kernel headers (test-bpf-i386.c), for test-bpf.c. */
#pragma once

#include <stddef.h>

struct named_nr
{
  const char *name;
  int nr;
};
extern const struct named_nr i386_numbers[];
extern const size_t n_i386_numbers;
