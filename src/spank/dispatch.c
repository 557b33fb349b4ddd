/* The callbacks Slurm looks up, each switching on who is calling (plugin.h). */
#include "spank/plugin.h"

SPANK_PLUGIN (enter_devroot, 1);

int
slurm_spank_init (spank_t sp, int ac, char **av)
{
  switch (spank_context ())
    {
    case S_CTX_LOCAL:
    case S_CTX_REMOTE:
    case S_CTX_ALLOCATOR:
      if (config_parse (ac, av) < 0)
        return -1;
      return options_register (sp);
    default:
      return 0;
    }
}

int
slurm_spank_init_post_opt (spank_t sp, int ac, char **av)
{
  (void) ac;
  (void) av;
  switch (spank_context ())
    {
    case S_CTX_LOCAL:
      return options_from_env (sp);
    case S_CTX_REMOTE:
      return options_from_env (sp) < 0 ? -1 : stepd_init_post_opt (sp);
    default:
      return 0;
    }
}

int
slurm_spank_local_user_init (spank_t sp, int ac, char **av)
{
  (void) ac;
  (void) av;
  return spank_context () == S_CTX_LOCAL ? srun_local_user_init (sp) : 0;
}

int
slurm_spank_user_init (spank_t sp, int ac, char **av)
{
  (void) ac;
  (void) av;
  return spank_context () == S_CTX_REMOTE ? stepd_user_init (sp) : 0;
}

int
slurm_spank_task_init (spank_t sp, int ac, char **av)
{
  (void) ac;
  (void) av;
  return spank_context () == S_CTX_REMOTE ? task_init (sp) : 0;
}

int
slurm_spank_exit (spank_t sp, int ac, char **av)
{
  (void) ac;
  (void) av;
  return spank_context () == S_CTX_REMOTE ? stepd_exit (sp) : 0;
}

/* Slurm calls no slurm_spank_init in the epilog's process: the settings are read here. */
int
slurm_spank_job_epilog (spank_t sp, int ac, char **av)
{
  if (spank_context () != S_CTX_JOB_SCRIPT)
    return 0;
  return config_parse (ac, av) < 0 ? -1 : epilog_remove_named_roots (sp);
}
