/* A CDI spec file read and checked (see spec.h). The walk stops at the first fault and says
 * which field it is; the message quotes the spec's own text, so it is made one line (every
 * control character a '?') once, at the end. */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "cdi/spec.h"
#include "cdi/yaml.h"
#include "common/cdi-name.h"
#include "common/util.h"

/* The versions read, oldest first, and what each added that a spec may use only from it on
 * (SPEC.md, "Released versions"; specs-go/version.go's requiredVersion). */
static const char *const versions[] = { "0.3.0", "0.4.0", "0.5.0", "0.6.0", "0.7.0",
                                        "0.8.0", "1.0.0", "1.1.0" };
enum
{
  V030,
  V040, /* mounts[].type */
  V050, /* deviceNodes[].hostPath; device names starting with a digit */
  V060, /* annotations; '.' in the kind's class */
  V070, /* intelRdt, additionalGids */
  V080,
  V100,
  V110, /* netDevices, intelRdt's schemata and enableMonitoring */
};

struct walk
{
  char *error;
  int needs;         /* the newest version a field used needs */
  char *needed_by;   /* that field's path */
};

__attribute__((format (printf, 3, 4))) static bool
fault (struct walk *w, const char *path, const char *format, ...)
{
  if (w->error != NULL)
    return false;
  va_list args;
  va_start (args, format);
  cleanup_free char *msg = xvasprintf (format, args);
  va_end (args);
  w->error = xasprintf ("%s: %s", path[0] != '\0' ? path : "(the document)", msg);
  return false;
}

static void
need (struct walk *w, int version, const char *path)
{
  if (version <= w->needs)
    return;
  w->needs = version;
  free (w->needed_by);
  w->needed_by = xstrdup (path);
}

/* PARENT.KEY as a field path (an owned string). */
static char *
field (const char *parent, const char *key)
{
  return parent[0] == '\0' ? xstrdup (key) : xasprintf ("%s.%s", parent, key);
}

static char *
element (const char *parent, size_t i)
{
  return xasprintf ("%s[%zu]", parent, i);
}

/* The member of OBJ named KEY, the name matched regardless of case (Go's encoding/json);
 * NULL when absent. */
static json_t *
member (json_t *obj, const char *key)
{
  const char *k;
  json_t *v;
  json_object_foreach (obj, k, v)
    if (strcasecmp (k, key) == 0)
      return v;
  return NULL;
}

/* OBJ (at PATH) is an object whose every member is one of KEYS (at most KEYS_MAX), each
 * once. One pass: an object of any size costs what its members do. */
#define KEYS_MAX 16

static bool
check_object (struct walk *w, json_t *obj, const char *path, const char *const *keys)
{
  if (!json_is_object (obj))
    return fault (w, path, "not an object");
  unsigned seen[KEYS_MAX] = { 0 };
  const char *k;
  json_t *v;
  json_object_foreach (obj, k, v)
    {
      size_t i = 0;
      while (keys[i] != NULL && strcasecmp (k, keys[i]) != 0)
        i++;
      cleanup_free char *p = field (path, k);
      if (keys[i] == NULL)
        return fault (w, p, "an unknown field");
      if (seen[i]++ > 0)
        return fault (w, p, "given twice (field names are matched without regard to case)");
    }
  return true;
}

/* A string member: *OUT a copy, or NULL when absent (a fault if REQUIRED). */
static bool
get_string (struct walk *w, json_t *obj, const char *path, const char *key, bool required,
            char **out)
{
  json_t *v = member (obj, key);
  cleanup_free char *p = field (path, key);
  if (v == NULL || json_is_null (v))
    return required ? fault (w, p, "missing") : true;
  if (!json_is_string (v))
    return fault (w, p, "not a string");
  *out = xstrdup (json_string_value (v));
  return true;
}

static bool
get_int (struct walk *w, json_t *obj, const char *path, const char *key, int64_t min,
         int64_t max, int64_t *out)
{
  json_t *v = member (obj, key);
  cleanup_free char *p = field (path, key);
  if (v == NULL || json_is_null (v))
    return true;
  if (!json_is_integer (v))
    return fault (w, p, "not an integer");
  json_int_t i = json_integer_value (v);
  if (i < min || i > max)
    return fault (w, p, "%lld is out of range (%lld to %lld)", (long long) i, (long long) min,
                  (long long) max);
  *out = i;
  return true;
}

/* An array member (NULL when absent): *ARRAY and its length. */
static bool
get_array (struct walk *w, json_t *obj, const char *path, const char *key, json_t **array)
{
  json_t *v = member (obj, key);
  *array = NULL;
  if (v == NULL || json_is_null (v))
    return true;
  if (!json_is_array (v))
    {
      cleanup_free char *p = field (path, key);
      return fault (w, p, "not an array");
    }
  *array = v;
  return true;
}

/* An array of strings into *OUT (NULL-terminated; empty when absent). KV: each K=V with K
 * not empty. */
static bool
get_strv (struct walk *w, json_t *obj, const char *path, const char *key, bool kv, char ***out)
{
  json_t *a;
  if (!get_array (w, obj, path, key, &a))
    return false;
  size_t n = a != NULL ? json_array_size (a) : 0;
  *out = xcalloc (n + 1, sizeof (char *));
  cleanup_free char *p = field (path, key);
  for (size_t i = 0; i < n; i++)
    {
      json_t *s = json_array_get (a, i);
      cleanup_free char *pi = element (p, i);
      if (!json_is_string (s))
        return fault (w, pi, "not a string");
      const char *v = json_string_value (s);
      if (kv && (v[0] == '=' || strchr (v, '=') == NULL))
        return fault (w, pi, "not NAME=VALUE");
      (*out)[i] = xstrdup (v);
    }
  return true;
}

/* A path the spec names: absolute, without a ".." component. */
static bool
check_path (struct walk *w, const char *path, const char *key, const char *value)
{
  cleanup_free char *p = field (path, key);
  if (value[0] != '/')
    return fault (w, p, "'%s' is not an absolute path", value);
  for (const char *c = value; (c = strstr (c, "..")) != NULL; c += 2)
    if (c[-1] == '/' && (c[2] == '/' || c[2] == '\0'))
      return fault (w, p, "'%s' has a '..' component", value);
  return true;
}

static bool
check_annotations (struct walk *w, json_t *obj, const char *path)
{
  json_t *a = member (obj, "annotations");
  cleanup_free char *p = field (path, "annotations");
  if (a == NULL || json_is_null (a))
    return true;
  if (!json_is_object (a))
    return fault (w, p, "not an object");
  const char *k;
  json_t *v;
  json_object_foreach (a, k, v)
    if (!json_is_string (v))
      {
        cleanup_free char *pk = field (p, k);
        return fault (w, pk, "not a string");
      }
  if (json_object_size (a) > 0)
    need (w, V060, p);
  return true;
}

static bool
parse_node (struct walk *w, json_t *obj, const char *path, struct cdi_spec_node *n)
{
  static const char *const keys[] = { "path", "hostPath", "type", "major", "minor", "fileMode",
                                      "permissions", "uid", "gid", NULL };
  int64_t ignored = 0;
  cleanup_free char *permissions = NULL;
  if (!check_object (w, obj, path, keys) || !get_string (w, obj, path, "path", true, &n->path)
      || !check_path (w, path, "path", n->path)
      || !get_string (w, obj, path, "hostPath", false, &n->host_path)
      || (n->host_path != NULL && !check_path (w, path, "hostPath", n->host_path))
      || !get_string (w, obj, path, "type", false, &n->type)
      || !get_int (w, obj, path, "major", INT64_MIN, INT64_MAX, &n->major)
      || !get_int (w, obj, path, "minor", INT64_MIN, INT64_MAX, &n->minor)
      || !get_int (w, obj, path, "fileMode", 0, UINT32_MAX, &ignored)
      || !get_string (w, obj, path, "permissions", false, &permissions)
      || !get_int (w, obj, path, "uid", 0, UINT32_MAX, &ignored)
      || !get_int (w, obj, path, "gid", 0, UINT32_MAX, &ignored))
    return false;
  if (n->type == NULL)
    n->type = xstrdup ("");
  static const char *const types[] = { "", "b", "c", "u", "p" };
  bool known = false;
  for (size_t i = 0; i < N_ELEMENTS (types); i++)
    known = known || strcmp (n->type, types[i]) == 0;
  cleanup_free char *pt = field (path, "type");
  if (!known)
    return fault (w, pt, "'%s' is not b, c, u or p", n->type);
  cleanup_free char *pp = field (path, "permissions");
  if (permissions != NULL && strcmp (permissions, "none") != 0
      && strspn (permissions, "rwm") != strlen (permissions))
    return fault (w, pp, "'%s' is not made of r, w and m (or none)", permissions);
  if (n->host_path != NULL && n->host_path[0] != '\0')
    {
      cleanup_free char *ph = field (path, "hostPath");
      need (w, V050, ph);
    }
  return true;
}

static bool
parse_mount (struct walk *w, json_t *obj, const char *path, struct cdi_spec_mount *m)
{
  static const char *const keys[] = { "hostPath", "containerPath", "options", "type", NULL };
  if (!check_object (w, obj, path, keys)
      || !get_string (w, obj, path, "hostPath", true, &m->host_path)
      || !check_path (w, path, "hostPath", m->host_path)
      || !get_string (w, obj, path, "containerPath", true, &m->container_path)
      || !check_path (w, path, "containerPath", m->container_path)
      || !get_strv (w, obj, path, "options", false, &m->options)
      || !get_string (w, obj, path, "type", false, &m->type))
    return false;
  if (m->type != NULL && m->type[0] != '\0')
    {
      cleanup_free char *pt = field (path, "type");
      need (w, V040, pt);
    }
  return true;
}

static bool
parse_hook (struct walk *w, json_t *obj, const char *path, struct cdi_spec_hook *h)
{
  static const char *const keys[] = { "hookName", "path", "args", "env", "timeout", NULL };
  static const char *const names[] = { "prestart", "createRuntime", "createContainer",
                                       "startContainer", "poststart", "poststop" };
  int64_t timeout = 0;
  json_t *t = json_is_object (obj) ? member (obj, "timeout") : NULL;
  if (!check_object (w, obj, path, keys)
      || !get_string (w, obj, path, "hookName", true, &h->name)
      || !get_string (w, obj, path, "path", true, &h->path)
      || !check_path (w, path, "path", h->path)
      || !get_strv (w, obj, path, "args", false, &h->args)
      || !get_strv (w, obj, path, "env", true, &h->env)
      || !get_int (w, obj, path, "timeout", INT64_MIN, UINT32_MAX, &timeout))
    return false;
  bool known = false;
  for (size_t i = 0; i < N_ELEMENTS (names); i++)
    known = known || strcmp (h->name, names[i]) == 0;
  cleanup_free char *pn = field (path, "hookName");
  if (!known)
    return fault (w, pn, "'%s' is not prestart, createRuntime, createContainer, "
                  "startContainer, poststart nor poststop", h->name);
  cleanup_free char *pt = field (path, "timeout");
  if (t != NULL && !json_is_null (t) && timeout <= 0)
    return fault (w, pt, "%lld: a timeout is a number of seconds above 0", (long long) timeout);
  h->timeout = (unsigned) timeout;
  return true;
}

/* ITEMS at PATH.KEY, each parsed into ARRAY[i] (SIZE bytes each) by PARSE; *N of them. */
static bool
parse_list (struct walk *w, json_t *obj, const char *path, const char *key, void **array,
            size_t *n, size_t size, bool (*parse) (struct walk *, json_t *, const char *, void *))
{
  json_t *a;
  if (!get_array (w, obj, path, key, &a))
    return false;
  size_t count = a != NULL ? json_array_size (a) : 0;
  *array = xcalloc (count + 1, size);
  cleanup_free char *p = field (path, key);
  for (*n = 0; *n < count; (*n)++)
    {
      cleanup_free char *pi = element (p, *n);
      if (!parse (w, json_array_get (a, *n), pi, (char *) *array + *n * size))
        {
          (*n)++; /* what it filled is freed with the rest */
          return false;
        }
    }
  return true;
}

static bool
parse_node_v (struct walk *w, json_t *o, const char *p, void *out)
{
  return parse_node (w, o, p, out);
}

static bool
parse_mount_v (struct walk *w, json_t *o, const char *p, void *out)
{
  return parse_mount (w, o, p, out);
}

static bool
parse_hook_v (struct walk *w, json_t *o, const char *p, void *out)
{
  return parse_hook (w, o, p, out);
}

/* additionalGids, intelRdt and netDevices: checked for their shape, and where given (a gid
 * not 0, any intelRdt or net device) recorded in E->unsupported. */
static bool
check_unsupported (struct walk *w, json_t *obj, const char *path, struct cdi_spec_edits *e)
{
  json_t *gids, *net;
  if (!get_array (w, obj, path, "additionalGids", &gids)
      || !get_array (w, obj, path, "netDevices", &net))
    return false;
  cleanup_free char *pg = field (path, "additionalGids");
  for (size_t i = 0; gids != NULL && i < json_array_size (gids); i++)
    {
      json_t *g = json_array_get (gids, i);
      cleanup_free char *pi = element (pg, i);
      if (!json_is_integer (g) || json_integer_value (g) < 0
          || json_integer_value (g) > UINT32_MAX)
        return fault (w, pi, "not a group id");
      need (w, V070, pg);
      e->others = true;
      if (json_integer_value (g) != 0 && e->unsupported == NULL)
        e->unsupported = xstrdup (pg);
    }
  cleanup_free char *pn = field (path, "netDevices");
  for (size_t i = 0; net != NULL && i < json_array_size (net); i++)
    {
      static const char *const keys[] = { "hostInterfaceName", "name", NULL };
      cleanup_free char *pi = element (pn, i);
      cleanup_free char *host = NULL, *name = NULL;
      json_t *d = json_array_get (net, i);
      if (!check_object (w, d, pi, keys) || !get_string (w, d, pi, "hostInterfaceName", true, &host)
          || !get_string (w, d, pi, "name", true, &name))
        return false;
      need (w, V110, pn);
      e->others = true;
      if (e->unsupported == NULL)
        e->unsupported = xstrdup (pn);
    }
  json_t *rdt = member (obj, "intelRdt");
  cleanup_free char *pr = field (path, "intelRdt");
  if (rdt != NULL && !json_is_null (rdt))
    {
      static const char *const keys[] = { "closID", "l3CacheSchema", "memBwSchema", "schemata",
                                          "enableMonitoring", NULL };
      if (!check_object (w, rdt, pr, keys))
        return false;
      need (w, member (rdt, "schemata") != NULL || member (rdt, "enableMonitoring") != NULL
                 ? V110 : V070, pr);
      e->others = true;
      if (e->unsupported == NULL)
        e->unsupported = xstrdup (pr);
    }
  return true;
}

static bool
parse_edits (struct walk *w, json_t *obj, const char *path, struct cdi_spec_edits *e)
{
  static const char *const keys[] = { "env", "deviceNodes", "netDevices", "hooks", "mounts",
                                      "intelRdt", "additionalGids", NULL };
  e->where = xstrdup (path);
  if (obj == NULL || json_is_null (obj))
    {
      e->env = xcalloc (1, sizeof (char *));
      return true;
    }
  return check_object (w, obj, path, keys) && get_strv (w, obj, path, "env", true, &e->env)
         && parse_list (w, obj, path, "deviceNodes", (void **) &e->nodes, &e->n_nodes,
                        sizeof *e->nodes, parse_node_v)
         && parse_list (w, obj, path, "mounts", (void **) &e->mounts, &e->n_mounts,
                        sizeof *e->mounts, parse_mount_v)
         && parse_list (w, obj, path, "hooks", (void **) &e->hooks, &e->n_hooks,
                        sizeof *e->hooks, parse_hook_v)
         && check_unsupported (w, obj, path, e);
}

static bool
edits_empty (const struct cdi_spec_edits *e)
{
  return strv_length (e->env) == 0 && e->n_nodes == 0 && e->n_mounts == 0 && e->n_hooks == 0
         && !e->others;
}

static bool
parse_device (struct walk *w, json_t *obj, const char *path, struct cdi_spec_device *d)
{
  static const char *const keys[] = { "name", "annotations", "containerEdits", NULL };
  const char *why;
  if (!check_object (w, obj, path, keys) || !get_string (w, obj, path, "name", true, &d->name)
      || !check_annotations (w, obj, path))
    return false;
  cleanup_free char *pn = field (path, "name");
  if (cdi_name_check (d->name, strlen (d->name), &why) < 0)
    return fault (w, pn, "'%s' is not a device name: %s", d->name, why);
  if (d->name[0] >= '0' && d->name[0] <= '9')
    need (w, V050, pn);
  cleanup_free char *pe = field (path, "containerEdits");
  if (!parse_edits (w, member (obj, "containerEdits"), pe, &d->edits))
    return false;
  if (edits_empty (&d->edits))
    return fault (w, pe, "missing or empty (a device edits the container)");
  return true;
}

static bool
parse_device_v (struct walk *w, json_t *o, const char *p, void *out)
{
  return parse_device (w, o, p, out);
}

static bool
parse_kind (struct walk *w, json_t *doc, struct cdi_spec *s)
{
  cleanup_free char *kind = NULL;
  const char *why;
  if (!get_string (w, doc, "", "kind", true, &kind))
    return false;
  char *slash = strchr (kind, '/');
  if (slash == NULL)
    return fault (w, "kind", "'%s' is not VENDOR/CLASS", kind);
  if (cdi_vendor_check (kind, (size_t) (slash - kind), &why) < 0)
    return fault (w, "kind", "'%s': its vendor %s", kind, why);
  if (cdi_class_check (slash + 1, strlen (slash + 1), &why) < 0)
    return fault (w, "kind", "'%s': its class %s", kind, why);
  s->vendor = strndup (kind, (size_t) (slash - kind));
  s->class = xstrdup (slash + 1);
  if (s->vendor == NULL)
    die ("out of memory");
  if (strchr (s->class, '.') != NULL)
    need (w, V060, "kind");
  return true;
}

static int
version_index (const char *v)
{
  if (v[0] == 'v')
    v++;
  for (size_t i = 0; i < N_ELEMENTS (versions); i++)
    if (strcmp (v, versions[i]) == 0)
      return (int) i;
  return -1;
}

static bool
parse_document (struct walk *w, json_t *doc, struct cdi_spec *s)
{
  static const char *const keys[] = { "cdiVersion", "kind", "annotations", "devices",
                                      "containerEdits", NULL };
  if (!check_object (w, doc, "", keys)
      || !get_string (w, doc, "", "cdiVersion", true, &s->version))
    return false;
  int version = version_index (s->version);
  if (version < 0)
    return fault (w, "cdiVersion", "'%s' is not a version enter-devroot reads (%s to %s)",
                  s->version, versions[0], versions[N_ELEMENTS (versions) - 1]);
  json_t *devices = member (doc, "devices");
  if (!parse_kind (w, doc, s) || !check_annotations (w, doc, "")
      || !parse_list (w, doc, "", "devices", (void **) &s->devices, &s->n_devices,
                      sizeof *s->devices, parse_device_v)
      || !parse_edits (w, member (doc, "containerEdits"), "containerEdits", &s->edits))
    return false;
  if (devices == NULL || json_is_null (devices) || s->n_devices == 0)
    return fault (w, "devices", "missing or empty (a spec defines one device at least)");
  for (size_t i = 0; i < s->n_devices; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp (s->devices[i].name, s->devices[j].name) == 0)
        {
          cleanup_free char *p = xasprintf ("devices[%zu].name", i);
          return fault (w, p, "'%s' is the name of devices[%zu] too", s->devices[i].name, j);
        }
  if (w->needs > version)
    return fault (w, "cdiVersion", "'%s' is older than the %s that %s needs",
                  s->version, versions[w->needs], w->needed_by);
  return true;
}

int
cdi_spec_parse (const char *text, size_t len, bool is_yaml, struct cdi_spec *out,
                char **error)
{
  *out = (struct cdi_spec) { 0 };
  json_t *doc = NULL;
  if (is_yaml)
    {
      if (yaml_to_json (text, len, &doc, error) < 0)
        return -1;
    }
  else
    {
      json_error_t jerr;
      doc = json_loadb (text, len, JSON_REJECT_DUPLICATES, &jerr);
      if (doc == NULL)
        {
          *error = xasprintf ("line %d: %s", jerr.line, jerr.text);
          str_one_line (*error);
          return -1;
        }
    }
  struct walk w = { .needs = V030 };
  bool ok = parse_document (&w, doc, out);
  json_decref (doc);
  free (w.needed_by);
  if (!ok)
    {
      *error = str_one_line (w.error != NULL ? w.error : xstrdup ("(the document): not a spec"));
      return -1;
    }
  return 0;
}

static void
edits_clear (struct cdi_spec_edits *e)
{
  free (e->where);
  free (e->unsupported);
  strv_free (e->env);
  for (size_t i = 0; i < e->n_nodes; i++)
    {
      char *owned[] = { e->nodes[i].path, e->nodes[i].host_path, e->nodes[i].type };
      free_strings (owned, N_ELEMENTS (owned));
    }
  free (e->nodes);
  for (size_t i = 0; i < e->n_mounts; i++)
    {
      char *owned[] = { e->mounts[i].host_path, e->mounts[i].container_path, e->mounts[i].type };
      free_strings (owned, N_ELEMENTS (owned));
      strv_free (e->mounts[i].options);
    }
  free (e->mounts);
  for (size_t i = 0; i < e->n_hooks; i++)
    {
      char *owned[] = { e->hooks[i].name, e->hooks[i].path };
      free_strings (owned, N_ELEMENTS (owned));
      strv_free (e->hooks[i].args);
      strv_free (e->hooks[i].env);
    }
  free (e->hooks);
  *e = (struct cdi_spec_edits) { 0 };
}

void
cdi_spec_clear (struct cdi_spec *s)
{
  for (size_t i = 0; i < s->n_devices; i++)
    {
      free (s->devices[i].name);
      edits_clear (&s->devices[i].edits);
    }
  free (s->devices);
  edits_clear (&s->edits);
  char *owned[] = { s->version, s->vendor, s->class };
  free_strings (owned, N_ELEMENTS (owned));
  *s = (struct cdi_spec) { 0 };
}
