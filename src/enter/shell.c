/* enter's shell and prompt (shell.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "enter/shell.h"

/* What create writes as your shell in the root's /etc/passwd (common/account.c). */
#define CREATED_SHELL "/bin/sh"

/* PATH names an executable regular file inside the root. */
static bool
is_shell (const char *path)
{
  struct stat st;
  return path != NULL && path[0] == '/' && stat (path, &st) == 0 && S_ISREG (st.st_mode)
         && access (path, X_OK) == 0;
}

const char *
shell_choose (const char *passwd_shell, const char *caller_shell)
{
  if (passwd_shell != NULL && passwd_shell[0] == '/' && strcmp (passwd_shell, CREATED_SHELL) != 0)
    return passwd_shell; /* chosen for this user: used even where missing (exec says so) */
  if (is_shell (caller_shell))
    return caller_shell;
  static const char *const best[] = { "/bin/bash", "/usr/bin/bash" };
  for (size_t i = 0; i < N_ELEMENTS (best); i++)
    if (is_shell (best[i]))
      return best[i];
  return passwd_shell != NULL && passwd_shell[0] == '/' ? passwd_shell : CREATED_SHELL;
}

char *
shell_prompt (const char *shell, const char *name, bool root)
{
  /* What the shell is, by the program it resolves to: /bin/sh is dash in a Debian root and
   * busybox in an Alpine or busybox one. */
  char real[PATH_MAX];
  const char *base = realpath (shell, real) != NULL ? real : shell;
  const char *slash = strrchr (base, '/');
  base = slash != NULL ? slash + 1 : base;
  const char *end = root ? "#" : "$";
  if (strcmp (base, "bash") == 0 || strcmp (base, "ash") == 0 || strcmp (base, "busybox") == 0)
    return xasprintf ("(%s) \\u@\\h:\\w\\%s ", name, end);
  if (strcmp (base, "zsh") == 0)
    return xasprintf ("(%s) %%n@%%m:%%~%%# ", name);
  return xasprintf ("(%s) %s ", name, end);
}
