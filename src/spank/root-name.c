/* The names the plugin gives a job's roots on this host (slurm-job.h makes them), and where
 * root records them. */
#include <stdio.h>
#include <slurm/slurm.h>

#include "spank/plugin.h"

int
root_name (spank_t sp, char name[ROOT_NAME_MAX + 1])
{
  uint32_t job, step, node;
  struct jobroot r = { .owner = SLURM_ROOT_PLUGIN, .name = request.name };
  char where[SLURM_WHERE_MAX + 1], step_s[16];
  if (spank_get_item (sp, S_JOB_ID, &job) != ESPANK_SUCCESS)
    return -1;
  r.job = job;
  if (request.name != NULL)
    {
      /* The job's on this host: root's record of it is this host's (stepd-as-root.c). */
      jobroot_host (where);
      r.where = where;
      return jobroot_name (&r, name);
    }
  if (spank_get_item (sp, S_JOB_STEPID, &step) != ESPANK_SUCCESS
      || spank_get_item (sp, S_JOB_NODEID, &node) != ESPANK_SUCCESS)
    return -1;
  if (step == SLURM_BATCH_SCRIPT)
    snprintf (step_s, sizeof step_s, "batch");
  else if (step == SLURM_INTERACTIVE_STEP)
    snprintf (step_s, sizeof step_s, "interactive");
  else
    snprintf (step_s, sizeof step_s, "%u", step);
  snprintf (where, sizeof where, "%u", node);
  r.step = step_s;
  r.where = where;
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
