/* The user's settings: the catalogue (built-in default < config file < environment <
 * option) and the cache's directory (XDG default < config file < environment). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "common/paths.h"
#include "common/util.h"
#include "store/cache/fetch.h"
#include "store/cache/userconfig.h"

#define CONFIG_MAX_BYTES (64 * 1024)

const char *
config_pick_index (const struct index_sources *s)
{
  const char *order[] = { s->option, s->env, s->config_file, s->built_in };
  for (size_t i = 0; i < N_ELEMENTS (order); i++)
    if (order[i] != NULL && order[i][0] != '\0')
      return order[i];
  return NULL;
}

static void
trim_in_place (char **s)
{
  while (**s == ' ' || **s == '\t')
    (*s)++;
  size_t len = strlen (*s);
  while (len > 0 && ((*s)[len - 1] == ' ' || (*s)[len - 1] == '\t' || (*s)[len - 1] == '\r'))
    (*s)[--len] = '\0';
}

/* Call FN(KEY, VALUE, LINE, DATA) for each "key = value" line of TEXT, in order. -1 with a
 * malloc'd "line N: why" in *error for a malformed line. */
static int
config_each (const char *text, void (*fn) (const char *key, const char *value, unsigned line,
                                           void *data),
             void *data, char **error)
{
  cleanup_free char *copy = xstrdup (text);
  unsigned line = 0;
  char *save = NULL;
  /* strtok_r would skip empty lines and so miscount them: split by hand. */
  for (char *s = copy; s != NULL; s = save)
    {
      char *nl = strchr (s, '\n');
      save = nl != NULL ? nl + 1 : NULL;
      if (nl != NULL)
        *nl = '\0';
      line++;
      trim_in_place (&s);
      if (s[0] == '\0' || s[0] == '#' || s[0] == ';')
        continue;
      char *eq = strchr (s, '=');
      if (eq == NULL)
        {
          *error = xasprintf ("line %u: malformed line (expected 'key = value')", line);
          return -1;
        }
      *eq = '\0';
      char *key = s, *value = eq + 1;
      trim_in_place (&key);
      trim_in_place (&value);
      fn (key, value, line, data);
    }
  return 0;
}

struct wanted_value
{
  const char *key;
  char *found;
};

static void
keep_wanted (const char *key, const char *value, unsigned line, void *data)
{
  (void) line;
  struct wanted_value *w = data;
  if (strcmp (key, w->key) == 0)
    {
      free (w->found);
      w->found = xstrdup (value);
    }
}

int
config_parse_value (const char *text, const char *wanted, char **value_out, char **error)
{
  struct wanted_value w = { .key = wanted };
  if (config_each (text, keep_wanted, &w, error) < 0)
    {
      free (w.found);
      return -1;
    }
  *value_out = w.found;
  return 0;
}

/* The keys this version reads; any other is most likely a typo, which would otherwise be
 * ignored without a word. */
static const char *const known_keys[] = { "index", "cache", "registry-mirror", "keep-idle",
                                          "layout", "cdi-spec-dirs" };

static void
warn_unknown_key (const char *key, const char *value, unsigned line, void *data)
{
  (void) value;
  const char *const *path = data;
  for (size_t i = 0; i < N_ELEMENTS (known_keys); i++)
    if (strcmp (key, known_keys[i]) == 0)
      return;
  warn ("%s: line %u: unknown key '%s' ignored (known: index, cache, registry-mirror, "
        "keep-idle, layout, cdi-spec-dirs)", *path, line, key);
}

static char *
config_file_path (void)
{
  cleanup_free char *dir = paths_xdg_dir ("XDG_CONFIG_HOME", ".config");
  return xasprintf ("%s/enter-devroot/config", dir);
}

/* KEY's value in the config file at PATH, or NULL (no file, or no such line). */
static char *
config_file_value (const char *path, const char *key)
{
  char *value = NULL;
  cleanup_free char *text = load_file_at (AT_FDCWD, path, CONFIG_MAX_BYTES, NULL);
  if (text == NULL && errno != ENOENT)
    die_with_error ("cannot read %s", path);
  if (text != NULL)
    {
      cleanup_free char *error = NULL;
      if (config_parse_value (text, key, &value, &error) < 0)
        die ("%s: %s", path, error);
      /* Once per run, however many keys are looked up. */
      static bool checked;
      if (!checked)
        config_each (text, warn_unknown_key, &path, &error);
      checked = true;
    }
  return value;
}

char *
config_index_url (const char *option, bool required)
{
  cleanup_free char *path = config_file_path ();
  cleanup_free char *from_file = config_file_value (path, "index");
  struct index_sources s = {
    .built_in = DEFAULT_INDEX_URL,
    .config_file = from_file,
    .env = getenv ("ENTER_DEVROOT_INDEX"),
    .option = option,
  };
  const char *url = config_pick_index (&s);
  if (url == NULL && !required)
    return NULL;
  if (url == NULL)
    die ("no template catalogue configured: pass --index URL, set ENTER_DEVROOT_INDEX, or "
         "put 'index = URL' in %s", path);
  if (fetch_is_url (url))
    return xstrdup (url);
  /* A plain path, as --from takes one: the file:// URL of the file it names. */
  cleanup_free char *absolute = realpath (url, NULL);
  if (absolute == NULL)
    die_with_error ("cannot read the catalogue %s", url);
  return xasprintf ("file://%s", absolute);
}

char *
config_cache_dir (void)
{
  const char *env = getenv ("ENTER_DEVROOT_CACHE");
  if (env != NULL && env[0] != '\0')
    {
      if (env[0] != '/')
        die ("ENTER_DEVROOT_CACHE '%s': not an absolute path", env);
      return xstrdup (env);
    }
  cleanup_free char *path = config_file_path ();
  char *dir = config_file_value (path, "cache");
  if (dir != NULL && dir[0] != '/')
    {
      cleanup_free char *bad = dir;
      die ("%s: cache = %s: not an absolute path", path, bad);
    }
  if (dir != NULL)
    return dir;
  cleanup_free char *home = paths_xdg_dir ("XDG_CACHE_HOME", ".cache");
  return xasprintf ("%s/enter-devroot", home);
}

char *
config_registry_mirror (bool insecure_http)
{
  cleanup_free char *path = config_file_path ();
  const char *env = getenv ("ENTER_DEVROOT_REGISTRY_MIRROR");
  char *url = env != NULL && env[0] != '\0' ? xstrdup (env)
                                            : config_file_value (path, "registry-mirror");
  if (url == NULL)
    return NULL;
  size_t len = strlen (url);
  while (len > 0 && url[len - 1] == '/')
    url[--len] = '\0';
  const char *host = strstr (url, "://");
  bool https = str_has_prefix (url, "https://"), http = str_has_prefix (url, "http://");
  if (host == NULL || host[3] == '\0' || strchr (host + 3, '/') != NULL || !(https || http))
    die ("registry mirror '%s': expected https://HOST[:PORT]", url);
  if (http && !insecure_http)
    die ("registry mirror '%s': plain http needs --insecure-http", url);
  return url;
}
