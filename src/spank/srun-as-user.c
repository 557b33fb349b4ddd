/* srun, the user's own process, once per job step after the allocation and before any task
 * launches: one pull per job. A template is fetched into the (possibly shared) cache here,
 * once, with its progress and any error on the user's terminal; the nodes then only find it
 * cached. A bad image ends srun here, before any task runs. */
#include <stddef.h>

#include "spank/plugin.h"

extern char **environ;

int
srun_local_user_init (spank_t sp)
{
  (void) sp;
  if (request.image == NULL || !image_is_template (request.image))
    return 0;
  const char *argv[] = { "enter-devroot", "fetch", request.image, NULL };
  /* fetch prints the cached file's path: the job's output has no use for it. */
  int status = run_and_wait (argv, environ, STDOUT_TO_STDERR);
  if (status != 0)
    slurm_error ("%s: cannot fetch template %s (the line above says why)", PLUGIN_NAME,
                 request.image);
  return status == 0 ? 0 : -1;
}
