/* enter-devroot-cdi: the third program of enter-devroot, what --device needs of the CDI
 * specs (JSON and YAML, through libjansson and libyaml), so that enter-devroot itself parses
 * neither and a GPU job does not pay enter-devroot-store's libraries at each start. It links
 * the C library, libjansson and libyaml; enter-devroot runs it (src/enter/cdi.c):
 *
 *   enter-devroot-cdi resolve DEVICE...          the edits, on standard output (resolve.h)
 *   enter-devroot-cdi hooks BUNDLE ROOT PID ID   the hooks, edits on standard input (hooks.h)
 *
 * Both are internal: their words and formats are enter-devroot's own and change with it. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cdi/hooks.h"
#include "cdi/resolve.h"
#include "common/cdi-edits.h"
#include "common/helper.h"
#include "common/options.h"
#include "common/util.h"
#include "common/verbose.h"

static int
resolve (char **devices)
{
  struct cdi_edits e;
  resolve_devices (devices, &e);
  size_t len;
  cleanup_free char *blob = cdi_edits_encode (&e, &len);
  cdi_edits_clear (&e);
  if (write_all (STDOUT_FILENO, blob, len) < 0)
    die_with_error ("resolve: cannot write the edits");
  return 0;
}

int
main (int argc, char **argv)
{
  refuse_if_privileged_exec ();
  (void) verbose_on ();
  if (argc >= 3 && strcmp (argv[1], "resolve") == 0)
    return resolve (argv + 2);
  if (argc == 6 && strcmp (argv[1], "hooks") == 0)
    return hooks_run (argv[2], argv[3], argv[4], argv[5]);
  die ("%s is enter-devroot's helper for --device (CDI devices): run '%s help run'",
       CDI_HELPER_NAME, PROGRAM_NAME);
}
