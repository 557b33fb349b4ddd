/* Where devroots, their metadata, staging areas and locks live. */
#include <fcntl.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/paths.h"
#include "common/util.h"

char *
paths_xdg_home (const char *value, const char *home, const char *home_subdir)
{
  if (value != NULL && value[0] == '/')
    return xstrdup (value);
  if (home != NULL && home[0] == '/')
    return xasprintf ("%s/%s", home, home_subdir);
  return NULL;
}

const char *
paths_home (void)
{
  const char *home = getenv ("HOME");
  if (home == NULL || home[0] != '/')
    {
      struct passwd *pw = getpwuid (getuid ());
      home = pw != NULL ? pw->pw_dir : NULL;
    }
  return home;
}

char *
paths_xdg_dir (const char *var, const char *home_subdir)
{
  const char *home = paths_home ();
  char *dir = paths_xdg_home (getenv (var), home, home_subdir);
  if (dir == NULL)
    die ("cannot find the %s directory: neither %s nor HOME is an absolute path", home_subdir,
         var);
  return dir;
}

/* The config file is small: its reader in the store helper allows this much. */
#define CONFIG_MAX_BYTES (64 * 1024)

char *
paths_config_value (const char *key, char **file)
{
  cleanup_free char *dir = paths_xdg_dir ("XDG_CONFIG_HOME", ".config");
  cleanup_free char *path = xasprintf ("%s/enter-devroot/config", dir);
  cleanup_free char *text = load_file_at (AT_FDCWD, path, CONFIG_MAX_BYTES, NULL);
  char *value = NULL;
  for (char *line = text, *next; line != NULL && *line != '\0'; line = next)
    {
      next = strchr (line, '\n');
      if (next != NULL)
        *next++ = '\0';
      line += strspn (line, " \t");
      if (strncmp (line, key, strlen (key)) != 0)
        continue;
      char *v = line + strlen (key);
      v += strspn (v, " \t");
      if (*v != '=')
        continue;
      v += 1 + strspn (v + 1, " \t");
      size_t len = strlen (v);
      while (len > 0 && (v[len - 1] == ' ' || v[len - 1] == '\t' || v[len - 1] == '\r'))
        len--;
      v[len] = '\0';
      free (value);
      value = xstrdup (v); /* the last one wins, as the store's reader has it */
    }
  if (file != NULL)
    *file = steal_pointer (&path);
  return value;
}

void
store_paths_init (struct store_paths *p, const char *data_home)
{
  p->base = xasprintf ("%s/enter-devroot", data_home);
  p->roots = xasprintf ("%s/roots", p->base);
  p->meta = xasprintf ("%s/meta", p->base);
  p->staging = xasprintf ("%s/staging", p->base);
  p->locks = xasprintf ("%s/locks", p->base);
  p->overlays = xasprintf ("%s/overlays", p->base);
}

void
store_paths_clear (struct store_paths *p)
{
  char *owned[] = { p->base, p->roots, p->meta, p->staging, p->locks, p->overlays };
  free_strings (owned, N_ELEMENTS (owned));
  *p = (struct store_paths) { 0 };
}

void
store_paths_from_env (struct store_paths *p)
{
  cleanup_free char *data_home = paths_xdg_dir ("XDG_DATA_HOME", ".local/share");
  store_paths_init (p, data_home);
}

char *
paths_root (const struct store_paths *p, const char *name)
{
  return xasprintf ("%s/%s", p->roots, name);
}

char *
paths_meta (const struct store_paths *p, const char *name)
{
  return xasprintf ("%s/%s.json", p->meta, name);
}

char *
paths_overlay (const struct store_paths *p, const char *name)
{
  return xasprintf ("%s/%s", p->overlays, name);
}

char *
paths_lock (const struct store_paths *p, const char *name)
{
  return xasprintf ("%s/%s.lock", p->locks, name);
}

char *
paths_run_lock (const struct store_paths *p, const char *name)
{
  return xasprintf ("%s/%s.run", p->locks, name);
}
