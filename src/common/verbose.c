/* The step lines of verbose.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "common/verbose.h"

static int on = -1; /* -1: not read yet */

void
verbose_enable (void)
{
  on = 1;
  if (setenv (VERBOSE_ENV, "1", 1) < 0)
    die_with_error ("cannot set %s", VERBOSE_ENV);
}

bool
verbose_on (void)
{
  if (on < 0)
    {
      const char *v = getenv (VERBOSE_ENV);
      on = v != NULL && v[0] != '\0' && strcmp (v, "0") != 0;
    }
  return on == 1;
}

void
verbose (const char *format, ...)
{
  if (!verbose_on ())
    return;
  int errsv = errno;
  va_list args;
  va_start (args, format);
  flockfile (stderr);
  fprintf (stderr, "%s: ", PROGRAM_NAME);
  vfprintf (stderr, format, args);
  fputc ('\n', stderr);
  funlockfile (stderr);
  va_end (args);
  errno = errsv;
}
