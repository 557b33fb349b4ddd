/* The shell `enter` starts when it is given no command, and its prompt. */
#pragma once

#include <stdbool.h>

/* Inside the root (after the chroot): the user's shell, as distrobox and toolbox give it.
 * PASSWD_SHELL, from the root's /etc/passwd, wins when it is not the /bin/sh create writes
 * for you (the image or you chose it); else CALLER_SHELL (your $SHELL outside) where the
 * root has it; else bash; else PASSWD_SHELL or /bin/sh. Static or PASSWD_SHELL's text. */
const char *shell_choose (const char *passwd_shell, const char *caller_shell);

/* A PS1 naming devroot NAME for SHELL, in the escapes that shell expands: bash's and
 * busybox ash's \u@\h:\w, zsh's %n@%m:%~, and none for the others (dash prints escapes
 * as they are). ROOT: the prompt ends in # rather than $. */
char *shell_prompt (const char *shell, const char *name, bool root);
