#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "common/options.h"
#include "common/util.h"

int
enter_mode_parse (const char *s, enum enter_mode *out)
{
  if (strcmp (s, "auto") == 0)
    *out = ENTER_MODE_AUTO;
  else if (strcmp (s, "chroot") == 0)
    *out = ENTER_MODE_CHROOT;
  else if (strcmp (s, "userns") == 0)
    *out = ENTER_MODE_USERNS;
  else
    return -1;
  return 0;
}

int
env_check_assignment (const char *kv, const char **why)
{
  const char *eq = strchr (kv, '=');
  if (eq == NULL)
    {
      *why = "expected K=V";
      return -1;
    }
  if (eq == kv)
    {
      *why = "the variable name is empty";
      return -1;
    }
  return 0;
}

void
refuse_if_privileged_exec (void)
{
  if (getauxval (AT_SECURE) != 0 || getuid () != geteuid () || getgid () != getegid ())
    die ("refusing to run setuid or setgid: install enter-devroot as an ordinary "
         "executable (chmod u-s,g-s)");
}
