/* Finding and running enter-devroot-store; see helper.h. */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/helper.h"
#include "common/util.h"

char *
program_path (const char *name, const char *installed_dir)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    {
      self[n] = '\0';
      char *slash = strrchr (self, '/');
      if (slash != NULL)
        {
          *slash = '\0';
          char *beside = xasprintf ("%s/%s", self, name);
          if (access (beside, X_OK) == 0)
            return beside;
          free (beside);
        }
    }
  return xasprintf ("%s/%s", installed_dir, name);
}

char *
store_helper_path (void)
{
  return program_path (STORE_HELPER_NAME, PKGLIBEXECDIR);
}

char *
cdi_helper_path (void)
{
  return program_path (CDI_HELPER_NAME, PKGLIBEXECDIR);
}

void
block_interrupts (sigset_t *set)
{
  sigemptyset (set);
  sigaddset (set, SIGINT);
  sigaddset (set, SIGTERM);
  sigaddset (set, SIGHUP);
  sigprocmask (SIG_BLOCK, set, NULL);
}

void
exec_store_helper (char **argv)
{
  cleanup_free char *path = store_helper_path ();
  /* An interrupt between here and the helper's handlers (while the dynamic loader maps
   * its libraries) stays pending instead of killing it with no word: the helper unblocks
   * the signals once it can clean up after them (src/store/interrupt.c). */
  sigset_t set;
  block_interrupts (&set);
  /* Same argv: the helper parses the command line again, so errors read the same. */
  execv (path, argv);
  sigprocmask (SIG_UNBLOCK, &set, NULL);
  die_with_error ("%s: cannot run %s (it creates roots and fetches templates; reinstall "
                  "enter-devroot)", argv[1] != NULL ? argv[1] : "create", path);
}
