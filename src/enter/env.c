/* The environment a command gets inside a devroot. */
#include <string.h>

#include "common/util.h"
#include "enter/env.h"

static const char *const passed_through[] = { "TERM", "COLORTERM", "LANG", "LANGUAGE", "TZ" };
/* What a task of a Slurm job step, and an MPI library in it, read to know its place in the
 * job (rank, node, step, the process manager's address): `srun enter-devroot run` would
 * not work without them. The SPANK plugin passes the same prefixes. */
static const char *const passed_prefixes[] = { "LC_", "SLURM_", "SLURMD_", "PMI_", "PMIX_", "OMPI_" };

static bool
key_matches (const char *kv, const char *key, size_t keylen)
{
  return strncmp (kv, key, keylen) == 0 && kv[keylen] == '=';
}

static bool
is_passed_through (const char *kv)
{
  for (size_t i = 0; i < N_ELEMENTS (passed_prefixes); i++)
    if (str_has_prefix (kv, passed_prefixes[i]))
      return true;
  for (size_t i = 0; i < N_ELEMENTS (passed_through); i++)
    if (key_matches (kv, passed_through[i], strlen (passed_through[i])))
      return true;
  return false;
}

struct env_vec
{
  char **v;
  size_t n;
};

/* Replace KEY's entry if present, else append. KV is copied. */
static void
env_vec_set (struct env_vec *e, const char *kv)
{
  size_t keylen = (size_t) (strchr (kv, '=') - kv);
  for (size_t i = 0; i < e->n; i++)
    if (key_matches (e->v[i], kv, keylen))
      {
        free (e->v[i]);
        e->v[i] = xstrdup (kv);
        return;
      }
  e->v = xrealloc (e->v, (e->n + 2) * sizeof (char *));
  e->v[e->n++] = xstrdup (kv);
  e->v[e->n] = NULL;
}

static void
env_vec_set2 (struct env_vec *e, const char *key, const char *value)
{
  if (value == NULL)
    return;
  cleanup_free char *kv = xasprintf ("%s=%s", key, value);
  env_vec_set (e, kv);
}

char **
env_build (char *const *caller_env, const struct env_opts *opts, char *const *image_env,
           const struct env_user *user)
{
  struct env_vec e = { .v = xcalloc (1, sizeof (char *)), .n = 0 };
  const char *why;

  env_vec_set2 (&e, "PATH", DEFAULT_PATH);
  /* The image's own variables (its PATH, LANG, tool versions...), under ours: an entry
   * that is not K=V was never written by a builder and is skipped. */
  for (size_t i = 0; !opts->clear_env && image_env != NULL && image_env[i] != NULL; i++)
    if (env_check_assignment (image_env[i], &why) == 0)
      env_vec_set (&e, image_env[i]);

  if (!opts->clear_env)
    for (size_t i = 0; caller_env != NULL && caller_env[i] != NULL; i++)
      if (strchr (caller_env[i], '=') != NULL && is_passed_through (caller_env[i]))
        env_vec_set (&e, caller_env[i]);
  if (!opts->clear_env && user != NULL)
    {
      env_vec_set2 (&e, "HOME", user->home);
      env_vec_set2 (&e, "USER", user->user);
      env_vec_set2 (&e, "LOGNAME", user->user);
      env_vec_set2 (&e, "SHELL", user->shell);
      env_vec_set2 (&e, "ENTER_DEVROOT_NAME", user->devroot);
      env_vec_set2 (&e, "debian_chroot", user->devroot);
      if (user->prompt != NULL)
        env_vec_set2 (&e, "PS1", user->prompt);
    }

  /* What a --device's libraries read (NVIDIA_VISIBLE_DEVICES...): the device's, even with
   * --clear-env, which says nothing of the host's. */
  for (size_t i = 0; opts->device_env != NULL && opts->device_env[i] != NULL; i++)
    if (env_check_assignment (opts->device_env[i], &why) == 0)
      env_vec_set (&e, opts->device_env[i]);

  for (size_t i = 0; opts->assignments != NULL && opts->assignments[i] != NULL; i++)
    {
      if (env_check_assignment (opts->assignments[i], &why) < 0)
        die ("invalid --env '%s': %s", opts->assignments[i], why);
      env_vec_set (&e, opts->assignments[i]);
    }
  return e.v;
}
