/* The name the plugin gives a job's named root on this host (slurm-job.h makes it), and
 * where root records them. */
#include <stdio.h>
#include <slurm/slurm.h>

#include "spank/plugin.h"

int
root_name (spank_t sp, char name[ROOT_NAME_MAX + 1])
{
  uint32_t job;
  char where[SLURM_WHERE_MAX + 1];
  if (request.name == NULL || spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    return -1;
  /* The job's on this host: root's record of it is this host's (stepd-as-root.c). A step's
   * own root is run --ephemeral's, which names it. */
  jobroot_host (where);
  struct jobroot r = { .owner = SLURM_ROOT_PLUGIN, .job = job, .name = request.name,
                       .where = where };
  return jobroot_name (&r, name);
}

int
record_path (spank_t sp, char *buf, size_t size)
{
  uint32_t job;
  if (spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    return -1;
  int n = snprintf (buf, size, "%s/%u", config.runtime_path, job);
  return n > 0 && (size_t) n < size ? 0 : -1;
}
