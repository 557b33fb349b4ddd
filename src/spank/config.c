/* What the admin set in plugstack.conf: the plugin's arguments. Runs in every context. */
#include <stdlib.h>
#include <string.h>
#include <slurm/slurm.h>

#include "common/cdi-name.h"
#include "spank/plugin.h"

#ifndef ENTER_DEVROOT_BIN
#error "ENTER_DEVROOT_BIN: the installed enter-devroot, set by Makefile.am"
#endif

struct devroot_config config;

int
config_parse (int ac, char **av)
{
  static const char bin_key[] = "enter_devroot=", compat_key[] = "pyxis_compat=",
                    runtime_key[] = "runtime_path=", timeout_key[] = "child_timeout=",
                    gpu_key[] = "gpu_devices=";
  config.enter_devroot = ENTER_DEVROOT_BIN;
  config.runtime_path = "/run/enter-devroot";
  config.workdir_submit = true;
  config.child_timeout = CHILD_TIMEOUT_DEFAULT;
  config.gpu_kind = GPU_KIND_DEFAULT;
  for (int i = 0; i < ac; i++)
    {
      if (strncmp (av[i], gpu_key, sizeof gpu_key - 1) == 0)
        {
          const char *v = av[i] + sizeof gpu_key - 1, *slash = strchr (v, '/'), *why;
          if (strcmp (v, "none") == 0)
            config.gpu_kind = NULL;
          else if (slash == NULL || cdi_vendor_check (v, (size_t) (slash - v), &why) < 0
                   || cdi_class_check (slash + 1, strlen (slash + 1), &why) < 0)
            {
              slurm_error ("%s: plugstack.conf: %s: not a CDI kind VENDOR/CLASS (as "
                           "nvidia.com/gpu) nor none", PLUGIN_NAME, av[i]);
              return -1;
            }
          else
            config.gpu_kind = v;
          continue;
        }
      if (strncmp (av[i], timeout_key, sizeof timeout_key - 1) == 0)
        {
          const char *v = av[i] + sizeof timeout_key - 1;
          char *end;
          unsigned long t = strtoul (v, &end, 10);
          if (v[0] < '1' || v[0] > '9' || *end != '\0' || t > CHILD_TIMEOUT_MAX)
            {
              slurm_error ("%s: plugstack.conf: %s: not a number of seconds from 1 to %d",
                           PLUGIN_NAME, av[i], CHILD_TIMEOUT_MAX);
              return -1;
            }
          config.child_timeout = (unsigned) t;
          continue;
        }
      if (strncmp (av[i], bin_key, sizeof bin_key - 1) == 0 && av[i][sizeof bin_key - 1] == '/')
        config.enter_devroot = av[i] + sizeof bin_key - 1;
      else if (strncmp (av[i], runtime_key, sizeof runtime_key - 1) == 0
               && av[i][sizeof runtime_key - 1] == '/')
        config.runtime_path = av[i] + sizeof runtime_key - 1;
      else if (strcmp (av[i], "default_workdir=submit") == 0
               || strcmp (av[i], "default_workdir=root") == 0)
        config.workdir_submit = strcmp (av[i], "default_workdir=submit") == 0;
      else if (strcmp (av[i], "pyxis_compat=1") == 0 || strcmp (av[i], "pyxis_compat=0") == 0)
        config.pyxis_compat = av[i][sizeof compat_key - 1] == '1';
      else
        {
          slurm_error ("%s: plugstack.conf: unknown argument '%s' (enter_devroot=/ABSOLUTE/PATH, "
                       "pyxis_compat=0|1, runtime_path=/ABSOLUTE/DIR, default_workdir=submit|root, "
                       "child_timeout=SECONDS, gpu_devices=VENDOR/CLASS|none)",
                       PLUGIN_NAME, av[i]);
          return -1;
        }
    }
  return 0;
}
