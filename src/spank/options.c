/* What the user asks for: one table of options, each with an environment fallback. Runs in
 * every context: srun and sbatch/salloc as the user, slurmstepd as root, where it only parses
 * strings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <slurm/slurm.h>

#include "common/cdi-name.h"
#include "spank/image-name.h"
#include "spank/plugin.h"

struct devroot_request request;

/* A --devroot-mounts item, and the --bind argument made of it. */
#define MOUNT_SPEC_MAX 8192
/* A --devroot-name NAME: what fits in a root name beside the job id and the host. */
#define USER_NAME_MAX 24
/* The longest value of an option or of its variable: what slurmstepd reads of a variable
 * (spank_getenv into a buffer of ours), PATH_MAX less its NUL. */
#define VALUE_MAX 4095
/* Added to an option's id for the "no-" form of a flag (--no-devroot-root). */
#define NEGATED 0x100

enum option_id
{
  OPT_IMAGE,
  OPT_NAME,
  OPT_WORKDIR,
  OPT_ENV,
  OPT_SAVE,
  OPT_MOUNTS,
  OPT_DEVICE,
  OPT_ROOT,
  OPT_ENTRYPOINT,
  OPT_MOUNT_HOME,
  OPT_BATCH,
};

/* One row per option: our name, pyxis's (pyxis_compat=1), the environment variables that
 * stand in when the option is not given. A flag (no arginfo) also has a "no-" form, which
 * turns it off whatever its variable says. */
struct option_row
{
  enum option_id id;
  const char *name, *pyxis_name;
  const char *env, *pyxis_env;
  const char *arginfo; /* NULL: a flag */
  const char *usage;
};

/* --container-image takes pyxis's names (image-name.c), not ours. */
static const char pyxis_image_arginfo[] = "[USER@][REGISTRY#]IMAGE[:TAG]|PATH",
                  pyxis_image_usage[] = "run the tasks in a devroot made from an image, named "
                                        "as pyxis names it (Docker Hub without REGISTRY#), or "
                                        "from a tarball whose PATH starts with / or ./";

static const struct option_row rows[] = {
  { OPT_IMAGE, "devroot-image", "container-image", "DEVROOT_IMAGE", "PYXIS_CONTAINER_IMAGE",
    "SOURCE", "run the tasks in a devroot made from SOURCE: a template name, a tarball path "
    "or URL, anything 'enter-devroot create --from' takes" },
  { OPT_NAME, "devroot-name", "container-name", "DEVROOT_NAME", "PYXIS_CONTAINER_NAME",
    "NAME[:create|exec|no_exec]", "keep the devroot as NAME for the job's later steps on "
    "this host (removed when the job ends); :create it must be new, :exec it must exist" },
  { OPT_WORKDIR, "devroot-workdir", "container-workdir", "DEVROOT_WORKDIR",
    "PYXIS_CONTAINER_WORKDIR", "DIR", "start the tasks in DIR inside the devroot" },
  { OPT_ENV, "devroot-env", "container-env", "DEVROOT_ENV", "PYXIS_CONTAINER_ENV", "NAME,...",
    "pass these variables of the job into the devroot (SLURM_* always are)" },
  { OPT_SAVE, "devroot-save", "container-save", "DEVROOT_SAVE", "PYXIS_CONTAINER_SAVE",
    "FILE", "when the step ends, export the devroot to FILE (an absolute path; .tar.zst, "
    ".tar.gz, .tar.xz or .tar); a directory or a file that is not an archive is refused" },
  { OPT_MOUNTS, "devroot-mounts", "container-mounts", "DEVROOT_MOUNTS",
    "PYXIS_CONTAINER_MOUNTS", "SRC[:DST[:ro]],...", "bind host directories into the devroot "
    "(\\, is a comma within a path; a relative SRC is the working directory's)" },
  /* Ours only, as devroot-batch: pyxis gives GPUs through enroot's hooks, not an option. */
  { OPT_DEVICE, "devroot-device", "container-device", "DEVROOT_DEVICE", "PYXIS_CONTAINER_DEVICE",
    "VENDOR/CLASS=NAME,...", "give the tasks these CDI devices (enter-devroot run --device); "
    "the job's GPUs (--gres=gpu, --gpus) are given without it" },
  { OPT_ROOT, "devroot-root", "container-remap-root", "DEVROOT_ROOT",
    "PYXIS_CONTAINER_REMAP_ROOT", NULL,
    "look like root inside the devroot, for package managers (enter-devroot run --root)" },
  { OPT_ENTRYPOINT, "devroot-entrypoint", "container-entrypoint", "DEVROOT_ENTRYPOINT",
    "PYXIS_CONTAINER_ENTRYPOINT", NULL,
    "run the command through the OCI image's Entrypoint (enter-devroot run --entrypoint)" },
  { OPT_MOUNT_HOME, "devroot-mount-home", "container-mount-home", "DEVROOT_MOUNT_HOME",
    "PYXIS_CONTAINER_MOUNT_HOME", NULL,
    "bind the job's HOME into the devroot at the same path, and make it HOME there" },
  /* Ours only: pyxis has no such option, so its name under pyxis_compat is made up. */
  { OPT_BATCH, "devroot-batch", "container-batch", "DEVROOT_BATCH", "PYXIS_CONTAINER_BATCH",
    "host|root", "sbatch: run the batch script on the host, its srun steps in devroots "
    "(host), or the script itself in one (root, pyxis's way)" },
};

#define N_ROWS (sizeof rows / sizeof rows[0])

static const struct option_row *
row_for (enum option_id id)
{
  for (size_t i = 0; i < N_ROWS; i++)
    if (rows[i].id == id)
      return &rows[i];
  return NULL;
}

static const char *
option_name (const struct option_row *r)
{
  return config.pyxis_compat ? r->pyxis_name : r->name;
}

/* NAME[:create|exec|no_exec] into request.name and request.name_mode. */
static int
set_name (const char *value, const char *from)
{
  size_t len = strcspn (value, ":");
  const char *mode = value[len] == ':' ? value + len + 1 : "";
  bool ok = len > 0 && len <= USER_NAME_MAX;
  for (size_t i = 0; ok && i < len; i++)
    ok = (value[i] >= 'A' && value[i] <= 'Z') || (value[i] >= 'a' && value[i] <= 'z')
         || (value[i] >= '0' && value[i] <= '9') || value[i] == '_' || value[i] == '-';
  if (!ok)
    {
      slurm_error ("%s: %s '%s': a name is 1 to %d of A-Z a-z 0-9 _ -", PLUGIN_NAME, from, value,
                   USER_NAME_MAX);
      return -1;
    }
  if (mode[0] == '\0' || strcmp (mode, "auto") == 0 || strcmp (mode, "no_exec") == 0)
    request.name_mode = NAME_AUTO; /* each step enters anew: no_exec is what auto does */
  else if (strcmp (mode, "create") == 0)
    request.name_mode = NAME_CREATE;
  else if (strcmp (mode, "exec") == 0)
    request.name_mode = NAME_EXEC;
  else
    {
      slurm_error ("%s: %s '%s': unknown flag '%s' (create, exec, no_exec)", PLUGIN_NAME, from,
                   value, mode);
      return -1;
    }
  free (request.name);
  request.name = strndup (value, len);
  if (request.name == NULL)
    {
      slurm_error ("%s: out of memory", PLUGIN_NAME);
      return -1;
    }
  return 0;
}

static bool
is_env_name (const char *s, size_t len)
{
  if (len == 0 || (s[0] >= '0' && s[0] <= '9'))
    return false;
  for (size_t i = 0; i < len; i++)
    if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z')
          || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
      return false;
  return true;
}

/* What a flag's variable says, in pyxis's words: 1 for 1 y yes true, 0 for 0 n no false,
 * -1 for anything else. */
static int
flag_value (const char *value)
{
  static const char *const on[] = { "1", "y", "yes", "true" },
                           *const off[] = { "0", "n", "no", "false" };
  for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
    {
      if (strcmp (value, on[i]) == 0)
        return 1;
      if (strcmp (value, off[i]) == 0)
        return 0;
    }
  return -1;
}

static bool *
flag_slot (enum option_id id)
{
  switch (id)
    {
    case OPT_ROOT: return &request.root;
    case OPT_ENTRYPOINT: return &request.entrypoint;
    case OPT_MOUNT_HOME: return &request.mount_home;
    default: return NULL;
    }
}

/* --container-image VALUE (pyxis_compat=1) as pyxis reads it (image-name.c), kept as what
 * `create --from` takes. */
static int
set_pyxis_image (const char *value, const char *from)
{
  char *source, *user;
  const char *why;
  if (pyxis_image_source (value, &source, &user, &why) < 0)
    {
      if (why == NULL)
        slurm_error ("%s: out of memory", PLUGIN_NAME);
      else
        slurm_error ("%s: %s '%s': %s", PLUGIN_NAME, from, value, why);
      return -1;
    }
  /* Said once, on the user's terminal: the credentials are the registry's in the auth file. */
  if (user != NULL && spank_context () == S_CTX_LOCAL)
    fprintf (stderr, "%s: %s '%s': USER@ is not used: enter-devroot logs in to a registry with "
             "the credentials $REGISTRY_AUTH_FILE or ~/.docker/config.json holds for it\n",
             PLUGIN_NAME, from, value);
  free (user);
  free (request.image);
  request.image = source;
  return 0;
}

/* Which flags an option of the command line set, on or off: their variables then say nothing. */
static unsigned flags_given;

/* Check VALUE for option ID and keep it; -1 with one error line naming the option. A flag's
 * VALUE is NULL (its option: on) or a word of flag_value. */
static int
set_option (enum option_id id, const char *value, const char *from)
{
  char **slot = NULL;
  if (value != NULL && strlen (value) > VALUE_MAX)
    {
      slurm_error ("%s: %s: longer than %d bytes; the command was not run", PLUGIN_NAME, from,
                   VALUE_MAX);
      return -1;
    }
  switch (id)
    {
    case OPT_IMAGE:
      if (value == NULL || value[0] == '\0')
        {
          slurm_error ("%s: %s: empty image", PLUGIN_NAME, from);
          return -1;
        }
      if (config.pyxis_compat)
        return set_pyxis_image (value, from);
      slot = &request.image;
      break;
    case OPT_NAME:
      return set_name (value != NULL ? value : "", from);
    case OPT_SAVE:
    case OPT_WORKDIR:
      if (value == NULL || value[0] != '/')
        {
          slurm_error ("%s: %s '%s': not an absolute path", PLUGIN_NAME, from,
                       value != NULL ? value : "");
          return -1;
        }
      slot = id == OPT_SAVE ? &request.save : &request.workdir;
      break;
    case OPT_ENV:
      for (const char *p = value; p != NULL && *p != '\0';)
        {
          size_t len = strcspn (p, ",");
          if (!is_env_name (p, len))
            {
              slurm_error ("%s: %s '%s': not a list of variable names", PLUGIN_NAME, from, value);
              return -1;
            }
          p += len + (p[len] == ',');
        }
      slot = &request.env;
      break;
    case OPT_MOUNTS:
      {
        const char *why = "empty";
        if (value == NULL || value[0] == '\0' || mounts_parse (value, "/", NULL, NULL, &why) < 0)
          {
            slurm_error ("%s: %s '%s': %s", PLUGIN_NAME, from, value != NULL ? value : "", why);
            return -1;
          }
        slot = &request.mounts;
        break;
      }
    case OPT_DEVICE:
      for (const char *p = value != NULL && value[0] != '\0' ? value : ","; *p != '\0';)
        {
          size_t len = strcspn (p, ",");
          char device[VALUE_MAX + 1];
          const char *why = "empty";
          snprintf (device, sizeof device, "%.*s", (int) len, p);
          if (len == 0 || cdi_device_name_check (device, &why) < 0)
            {
              slurm_error ("%s: %s '%s': '%s' is not VENDOR/CLASS=NAME: %s", PLUGIN_NAME, from,
                           value != NULL ? value : "", device, why);
              return -1;
            }
          p += len + (p[len] == ',');
        }
      slot = &request.devices;
      break;
    case OPT_BATCH:
      if (value == NULL || (strcmp (value, "host") != 0 && strcmp (value, "root") != 0))
        {
          slurm_error ("%s: %s '%s': not host or root", PLUGIN_NAME, from,
                       value != NULL ? value : "");
          return -1;
        }
      request.batch = strcmp (value, "host") == 0 ? BATCH_HOST : BATCH_ROOT;
      return 0;
    case OPT_ROOT:
    case OPT_ENTRYPOINT:
    case OPT_MOUNT_HOME:
      {
        int on = value == NULL ? 1 : flag_value (value);
        if (on < 0)
          {
            slurm_error ("%s: %s '%s': not one of 1 y yes true 0 n no false", PLUGIN_NAME, from,
                         value);
            return -1;
          }
        *flag_slot (id) = on;
        return 0;
      }
    }
  char *copy = strdup (value);
  if (copy == NULL)
    {
      slurm_error ("%s: out of memory", PLUGIN_NAME);
      return -1;
    }
  free (*slot);
  *slot = copy;
  return 0;
}

static int
option_cb (int val, const char *optarg, int remote)
{
  (void) remote;
  bool negated = (val & NEGATED) != 0;
  const struct option_row *r = row_for ((enum option_id) (val & ~NEGATED));
  if (r == NULL)
    return -1;
  char from[SPANK_OPTION_MAXLEN + 3];
  snprintf (from, sizeof from, "--%s%s", negated ? "no-" : "", option_name (r));
  bool *flag = flag_slot (r->id);
  if (flag == NULL)
    return set_option (r->id, optarg, from);
  /* Slurm may call us again with the same option; the two forms together are a mistake. */
  if ((flags_given & (1u << r->id)) != 0 && *flag == negated)
    {
      slurm_error ("%s: both --%s and --no-%s were given", PLUGIN_NAME, option_name (r),
                   option_name (r));
      return -1;
    }
  flags_given |= 1u << r->id;
  return set_option (r->id, negated ? "0" : NULL, from);
}

/* Register one option with Slurm, which keeps the strings for the life of the process and
 * wants them writable; -1 with one error line. */
static int
register_one (spank_t sp, const char *prefix, const struct option_row *r, const char *usage,
              int val)
{
  char name[SPANK_OPTION_MAXLEN + 1];
  snprintf (name, sizeof name, "%s%s", prefix, option_name (r));
  bool pyxis_image = config.pyxis_compat && r->id == OPT_IMAGE;
  const char *arginfo = pyxis_image ? pyxis_image_arginfo : r->arginfo;
  usage = pyxis_image ? pyxis_image_usage : usage;
  struct spank_option o = {
    .name = strdup (name),
    .arginfo = arginfo != NULL ? strdup (arginfo) : NULL,
    .usage = strdup (usage),
    .has_arg = r->arginfo != NULL,
    .val = val,
    .cb = option_cb,
  };
  if (o.name == NULL || o.usage == NULL || (r->arginfo != NULL && o.arginfo == NULL))
    {
      slurm_error ("%s: out of memory", PLUGIN_NAME);
      return -1;
    }
  spank_err_t err = spank_option_register (sp, &o);
  if (err != ESPANK_SUCCESS)
    {
      slurm_error ("%s: cannot register --%s: %s", PLUGIN_NAME, o.name, spank_strerror (err));
      return -1;
    }
  return 0;
}

int
options_register (spank_t sp)
{
  for (size_t i = 0; i < N_ROWS; i++)
    {
      const struct option_row *r = &rows[i];
      if (register_one (sp, "", r, r->usage, r->id) < 0)
        return -1;
      if (r->arginfo != NULL)
        continue;
      char usage[2 * SPANK_OPTION_MAXLEN];
      snprintf (usage, sizeof usage, "turn --%s off, whatever %s says", option_name (r),
                config.pyxis_compat ? r->pyxis_env : r->env);
      if (register_one (sp, "no-", r, usage, r->id + NEGATED) < 0)
        return -1;
    }
  return 0;
}

/* The job's variable NAME into *VALUE (NULL when it is not set): srun's own environment is
 * the job's; slurmstepd reads the job's through a buffer of VALUE_MAX + 1 bytes. A longer
 * value must never make the step run without what its user asked for (its tasks would run
 * on the host, slurmstepd having seen no image: fail closed): in srun it is -1 with one
 * line, before any task; in slurmstepd it sets request.refused, which each task says on
 * srun's stderr before it fails. */
static int
job_getenv (spank_t sp, const char *name, char **value)
{
  const char *v = NULL;
  char buf[VALUE_MAX + 1];
  bool too_long = false;
  *value = NULL;
  if (spank_context () != S_CTX_REMOTE)
    v = getenv (name);
  else
    {
      spank_err_t err = spank_getenv (sp, name, buf, sizeof buf);
      v = err == ESPANK_SUCCESS ? buf : NULL;
      too_long = err == ESPANK_NOSPACE;
    }
  if (too_long || (v != NULL && strlen (v) > VALUE_MAX))
    {
      char why[256];
      snprintf (why, sizeof why, "%s: %s: longer than %d bytes; the command was not run",
                PLUGIN_NAME, name, VALUE_MAX);
      if (spank_context () != S_CTX_REMOTE)
        {
          slurm_error ("%s", why);
          return -1;
        }
      /* A failed init_post_opt in slurmstepd only logs, and srun returns 0: each task
       * says it instead, and fails (task_init). */
      free (request.refused);
      request.refused = strdup (why);
      return request.refused != NULL ? 0 : -1;
    }
  if (v == NULL)
    return 0;
  *value = strdup (v);
  if (*value == NULL)
    {
      slurm_error ("%s: out of memory", PLUGIN_NAME);
      return -1;
    }
  return 0;
}

static bool
option_given (enum option_id id)
{
  switch (id)
    {
    case OPT_IMAGE: return request.image != NULL;
    case OPT_NAME: return request.name != NULL;
    case OPT_WORKDIR: return request.workdir != NULL;
    case OPT_ENV: return request.env != NULL;
    case OPT_SAVE: return request.save != NULL;
    case OPT_MOUNTS: return request.mounts != NULL;
    case OPT_DEVICE: return request.devices != NULL;
    case OPT_ROOT:
    case OPT_ENTRYPOINT:
    case OPT_MOUNT_HOME: return (flags_given & (1u << id)) != 0;
    case OPT_BATCH: return request.batch != BATCH_DEFAULT;
    }
  return false;
}

int
options_from_env (spank_t sp)
{
  for (size_t i = 0; i < N_ROWS; i++)
    {
      if (option_given (rows[i].id))
        continue;
      const char *var = config.pyxis_compat ? rows[i].pyxis_env : rows[i].env;
      char *value;
      if (job_getenv (sp, var, &value) < 0)
        return -1;
      if (value == NULL)
        continue;
      int r = set_option (rows[i].id, value, var);
      free (value);
      if (r < 0)
        return -1;
    }
  return 0;
}

/* Slurm's copy of option ROW (its no- form when NEGATED) in the environment of the
 * script sbatch runs, which srun takes as its own option, as spank(7) names it. */
static void
slurm_option_var (const struct option_row *r, bool negated, char *buf, size_t size)
{
  extern const char plugin_name[]; /* SPANK_PLUGIN's, dispatch.c */
  int n = snprintf (buf, size, "SLURM_SPANK__SLURM_SPANK_OPTION_%s_%s%s", plugin_name,
                    negated ? "no_" : "", option_name (r));
  for (char *p = buf + n - strlen (option_name (r)); n > 0 && (size_t) n < size && *p; p++)
    *p = *p == '-' ? '_' : *p;
}

int
options_to_job_env (spank_t sp)
{
  for (size_t i = 0; i < N_ROWS; i++)
    {
      const struct option_row *r = &rows[i];
      char var[2 * SPANK_OPTION_MAXLEN], name[USER_NAME_MAX + sizeof ":create"];
      const char *value = NULL;
      bool *flag = flag_slot (r->id);
      for (int negated = 0; negated <= (flag != NULL); negated++)
        {
          slurm_option_var (r, negated, var, sizeof var);
          spank_unsetenv (sp, var);
        }
      if (r->id == OPT_BATCH || !option_given (r->id))
        continue;
      if (flag != NULL)
        value = *flag ? "1" : "0";
      else if (r->id == OPT_NAME)
        {
          snprintf (name, sizeof name, "%s%s", request.name,
                    request.name_mode == NAME_CREATE ? ":create"
                    : request.name_mode == NAME_EXEC ? ":exec" : "");
          value = name;
        }
      else
        value = r->id == OPT_IMAGE ? request.image
                : r->id == OPT_WORKDIR ? request.workdir
                : r->id == OPT_ENV ? request.env
                : r->id == OPT_SAVE ? request.save
                : r->id == OPT_DEVICE ? request.devices : request.mounts;
      if (spank_setenv (sp, config.pyxis_compat ? r->pyxis_env : r->env, value, 1)
          != ESPANK_SUCCESS)
        {
          slurm_error ("%s: cannot pass %s to the batch script's steps", PLUGIN_NAME,
                       option_name (r));
          return -1;
        }
    }
  return 0;
}

enum batch_mode
batch_mode_of (void)
{
  if (request.batch != BATCH_DEFAULT)
    return request.batch;
  /* pyxis runs the batch script in the container: its scripts keep doing so unchanged. */
  return config.pyxis_compat ? BATCH_ROOT : BATCH_HOST;
}

bool
devroot_requested (void)
{
  return request.image != NULL || request.name != NULL || request.refused != NULL;
}

/* A --devroot-mounts item, unescaped, as enter-devroot's "SRC:DST[:ro]". */
static int
mount_item (char *item, const char *cwd, void (*each) (const char *, void *), void *arg,
            const char **why)
{
  char *dst = strchr (item, ':'), *flags = NULL;
  if (dst != NULL)
    {
      *dst++ = '\0';
      flags = strchr (dst, ':');
      if (flags != NULL)
        *flags++ = '\0';
    }
  if (item[0] == '\0')
    *why = "an empty SRC";
  else if (dst != NULL && dst[0] != '/')
    *why = "DST is not an absolute path";
  else if (flags != NULL && strcmp (flags, "ro") != 0)
    *why = "the only flag is ro";
  else
    {
      char src[MOUNT_SPEC_MAX], spec[MOUNT_SPEC_MAX];
      int m = item[0] == '/' ? snprintf (src, sizeof src, "%s", item)
                             : snprintf (src, sizeof src, "%s/%s", cwd, item);
      int n = snprintf (spec, sizeof spec, "%s:%s%s", src, dst != NULL ? dst : src,
                        flags != NULL ? ":ro" : "");
      if (m > 0 && (size_t) m < sizeof src && n > 0 && (size_t) n < sizeof spec)
        {
          if (each != NULL)
            each (spec, arg);
          return 0;
        }
      *why = "too long";
    }
  return -1;
}

int
mounts_parse (const char *value, const char *cwd, void (*each) (const char *, void *),
              void *arg, const char **why)
{
  char item[MOUNT_SPEC_MAX];
  size_t n = 0;
  for (const char *p = value;; p++)
    {
      if (*p == '\\' && (p[1] == ',' || p[1] == '\\'))
        p++;
      else if (*p == ',' || *p == '\0')
        {
          item[n] = '\0';
          if (mount_item (item, cwd, each, arg, why) < 0)
            return -1;
          if (*p == '\0')
            return 0;
          n = 0;
          continue;
        }
      if (n + 1 >= sizeof item)
        {
          *why = "too long";
          return -1;
        }
      item[n++] = *p;
    }
}

bool
image_is_template (const char *image)
{
  /* Paths and URLs have a '/'; a template name never does (the catalogue refuses one). */
  return strchr (image, '/') == NULL && strchr (image, ':') == NULL;
}
