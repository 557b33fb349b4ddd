/* Entering a devroot: the in-process sequence from "a path" to "exec inside it". */
#pragma once

#include <stdbool.h>

#include "env.h"

enum enter_mode
{
  ENTER_MODE_AUTO,   /* chroot; on EPERM, the user-namespace fallback */
  ENTER_MODE_CHROOT, /* plain chroot only (root, or the patched kernel) */
  ENTER_MODE_USERNS, /* user namespace, then chroot */
};

struct enter_opts
{
  enum enter_mode mode;
  const char *workdir;  /* NULL: the user's home inside the root, else "/" */
  bool no_landlock;     /* --no-landlock: no Landlock domain around the devroot */
  struct env_opts env;
  char **argv;          /* NULL: the user's shell from the root's /etc/passwd */
};

/* Refuse to run setuid or setgid (or with any other secure-exec transition): this tool
 * is never meant to hold more privilege than its caller. */
void refuse_if_privileged_exec (void);

/* Parse a --mode value; -1 when unknown. */
int enter_mode_parse (const char *s, enum enter_mode *out);

/* Enter ROOT (the directory of devroot NAME) and exec there. Never returns: the process
 * becomes the command, or exits 125 (setup failed), 126 or 127 (see run's exit status). */
__attribute__((noreturn)) void enter_root (const char *name, const char *root,
                                           const struct enter_opts *opts);
