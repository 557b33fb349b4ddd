/* The edits of the devices asked for (see resolve.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cdi/resolve.h"
#include "cdi/specdirs.h"
#include "common/util.h"
#include "common/verbose.h"

/* A containerEdits to apply, and the file it is in (for messages). */
struct pending
{
  const struct spec_file *file;
  const struct cdi_spec_edits *edits;
};

struct plan
{
  struct pending *items;
  size_t n;
  const struct spec_file **specs_done; /* whose own edits are in ITEMS already */
  size_t n_specs;
};

static void
plan_add (struct plan *p, const struct spec_file *f, const struct cdi_spec_edits *e)
{
  p->items = xrealloc (p->items, (p->n + 1) * sizeof *p->items);
  p->items[p->n++] = (struct pending) { .file = f, .edits = e };
}

static void
plan_device (struct plan *p, const struct device_entry *d)
{
  bool spec_done = false;
  for (size_t i = 0; i < p->n_specs; i++)
    spec_done = spec_done || p->specs_done[i] == d->file;
  if (!spec_done)
    {
      p->specs_done = xrealloc (p->specs_done, (p->n_specs + 1) * sizeof *p->specs_done);
      p->specs_done[p->n_specs++] = d->file;
      plan_add (p, d->file, &d->file->spec.edits);
    }
  for (size_t i = 0; i < p->n; i++)
    if (p->items[i].edits == &d->device->edits)
      return; /* asked for twice (or by name and by =all): once */
  plan_add (p, d->file, &d->device->edits);
  verbose ("CDI device %s: %s (%s)", d->qualified, d->file->path, d->device->edits.where);
}

static void
check_entry (const char *asked, const struct device_entry *d)
{
  if (d->conflict != NULL)
    die ("--device %s: defined by both %s and %s, specs of one directory: remove one", asked,
         d->file->path, d->conflict->path);
}

/* KIND=NAME no spec defines: the device of another name, or every device of KIND for
 * NAME "all"; else die() saying what the specs do define. */
static void
plan_missing (struct plan *p, const struct spec_set *set, const char *asked)
{
  const char *eq = strchr (asked, '=');
  size_t kind_len = (size_t) (eq - asked) + 1; /* "VENDOR/CLASS=" */
  bool all = strcmp (eq + 1, "all") == 0;
  struct strbuf names = { 0 };
  strbuf_append (&names, "");
  const struct spec_file *some_file = NULL;
  for (size_t i = 0; i < set->n_devices; i++)
    {
      const struct device_entry *d = &set->devices[i];
      if (strncmp (d->qualified, asked, kind_len) != 0)
        continue;
      some_file = d->file;
      if (all)
        {
          check_entry (asked, d);
          plan_device (p, d);
        }
      strbuf_appendf (&names, "%s%s", names.len > 0 ? ", " : "", d->qualified + kind_len);
    }
  cleanup_free char *list = strbuf_steal (&names);
  cleanup_free char *dirs = spec_set_dirs_text (set);
  if (some_file == NULL)
    die ("--device %s: no CDI spec of kind %.*s in %s", asked, (int) kind_len - 1, asked, dirs);
  if (!all)
    die ("--device %s: no such device in %s (its devices[].name: %s)", asked, some_file->path,
         list);
}

/* ---- the host's side of each edit ---- */

__attribute__((noreturn, format (printf, 4, 5))) static void
die_field (const struct pending *at, const char *list, size_t j, const char *format, ...)
{
  va_list args;
  va_start (args, format);
  cleanup_free char *msg = xvasprintf (format, args);
  va_end (args);
  die ("CDI spec %s: %s.%s[%zu].%s", at->file->path, at->edits->where, list, j,
       str_one_line (msg));
}

/* The host's node of E's J-th device node: there, and of the spec's type and numbers where
 * it gives them (the node bound is the host's: one that is not what the spec says is not
 * given in its place). */
static void
host_node (const struct pending *at, size_t j, struct cdi_node *out)
{
  const struct cdi_spec_node *n = &at->edits->nodes[j];
  bool own = n->host_path != NULL && n->host_path[0] != '\0';
  const char *host = own ? n->host_path : n->path;
  const char *field = own ? "hostPath" : "path";
  struct stat st;
  if (stat (host, &st) < 0)
    die_field (at, "deviceNodes", j, "%s: %s: %s (the host's node is bound in: enter-devroot "
               "never makes one)", field, host, strerror (errno));
  char kind = S_ISCHR (st.st_mode) ? 'c' : S_ISBLK (st.st_mode) ? 'b'
              : S_ISFIFO (st.st_mode) ? 'p' : 0;
  if (kind == 0)
    die_field (at, "deviceNodes", j, "%s: %s is not a device node on this host", field, host);
  char want = n->type[0] == 'u' ? 'c' : n->type[0];
  if (want != '\0' && want != kind)
    die_field (at, "deviceNodes", j, "type: '%s', but %s on this host is of type %c", n->type,
               host, kind);
  if (kind != 'p' && n->major != 0
      && ((int64_t) major (st.st_rdev) != n->major || (int64_t) minor (st.st_rdev) != n->minor))
    die_field (at, "deviceNodes", j, "major: the spec says %lld:%lld, %s on this host is "
               "%u:%u (the host's node is bound in, never one made)", (long long) n->major,
               (long long) n->minor, host, major (st.st_rdev), minor (st.st_rdev));
  *out = (struct cdi_node) { .host = xstrdup (host), .path = xstrdup (n->path) };
}

/* Options a mount may carry that change nothing here: propagation (the job's mounts are
 * private to its namespace whatever they say) and access-time updates. */
static const char *const ignored_options[] = {
  "private", "rprivate", "slave", "rslave", "shared", "rshared", "unbindable", "runbindable",
  "relatime", "norelatime", "noatime", "atime", "strictatime", "nostrictatime", "nodiratime",
  "diratime", NULL,
};

/* struct cdi_mount's OPTIONS for E's J-th mount: read-only, nosuid and nodev unless the spec
 * says otherwise (never more than it asks), a bind (recursive with rbind). */
static char *
mount_options (const struct pending *at, size_t j)
{
  const struct cdi_spec_mount *m = &at->edits->mounts[j];
  static const char *const pairs[][2] = {
    { "ro", "rw" }, { "nosuid", "suid" }, { "nodev", "dev" }, { "noexec", "exec" },
    { "bind", "rbind" },
  };
  const char *chosen[N_ELEMENTS (pairs)] = { "ro", "nosuid", "nodev", "exec", "bind" };
  bool bind = false;
  for (size_t k = 0; m->options[k] != NULL; k++)
    {
      const char *o = m->options[k];
      bool known = false;
      for (size_t i = 0; i < N_ELEMENTS (pairs); i++)
        for (size_t s = 0; s < 2; s++)
          if (strcmp (o, pairs[i][s]) == 0)
            {
              chosen[i] = pairs[i][s];
              known = true;
              bind = bind || i == N_ELEMENTS (pairs) - 1;
            }
      for (size_t i = 0; ignored_options[i] != NULL; i++)
        known = known || strcmp (o, ignored_options[i]) == 0;
      if (!known)
        die_field (at, "mounts", j, "options[%zu]: '%s' is not an option enter-devroot applies "
                   "(ro, rw, nosuid, suid, nodev, dev, noexec, exec, bind, rbind; propagation "
                   "and atime options change nothing)", k, o);
    }
  const char *type = m->type != NULL ? m->type : "";
  if (!bind && type[0] != '\0' && strcmp (type, "bind") != 0 && strcmp (type, "none") != 0)
    die_field (at, "mounts", j, "type: '%s': enter-devroot makes bind mounts of host paths "
               "only", type);
  struct stat st;
  if (stat (m->host_path, &st) < 0)
    die_field (at, "mounts", j, "hostPath: %s: %s", m->host_path, strerror (errno));
  return xasprintf ("%s,%s,%s,%s,%s", chosen[0], chosen[1], chosen[2], chosen[3], chosen[4]);
}

/* E's J-th hook: one enter-devroot runs (hooks.h says when), found where it will be. */
static void
check_hook (const struct pending *at, size_t j)
{
  const struct cdi_spec_hook *h = &at->edits->hooks[j];
  if (strcmp (h->name, "poststart") == 0 || strcmp (h->name, "poststop") == 0)
    die_field (at, "hooks", j, "hookName: %s hooks are not run (enter-devroot runs prestart, "
               "createRuntime, createContainer and startContainer hooks)", h->name);
  /* A startContainer hook's path is the root's, looked up when it runs. */
  if (strcmp (h->name, "startContainer") != 0 && access (h->path, X_OK) < 0)
    die_field (at, "hooks", j, "path: %s: %s", h->path, strerror (errno));
}

/* ---- the edits, merged ---- */

static void
add_node (struct cdi_edits *out, struct cdi_node n)
{
  for (size_t i = 0; i < out->n_nodes; i++)
    if (strcmp (out->nodes[i].path, n.path) == 0)
      {
        free (out->nodes[i].host);
        free (out->nodes[i].path);
        memmove (&out->nodes[i], &out->nodes[i + 1], (out->n_nodes - i - 1) * sizeof n);
        out->n_nodes--;
        break;
      }
  out->nodes = xrealloc (out->nodes, (out->n_nodes + 1) * sizeof n);
  out->nodes[out->n_nodes++] = n;
}

static void
add_mount (struct cdi_edits *out, struct cdi_mount m)
{
  for (size_t i = 0; i < out->n_mounts; i++)
    if (strcmp (out->mounts[i].path, m.path) == 0)
      {
        char *owned[] = { out->mounts[i].host, out->mounts[i].path, out->mounts[i].options };
        free_strings (owned, N_ELEMENTS (owned));
        memmove (&out->mounts[i], &out->mounts[i + 1], (out->n_mounts - i - 1) * sizeof m);
        out->n_mounts--;
        break;
      }
  out->mounts = xrealloc (out->mounts, (out->n_mounts + 1) * sizeof m);
  out->mounts[out->n_mounts++] = m;
}

static size_t
depth (const char *path)
{
  size_t n = 0;
  for (const char *c = path; *c != '\0'; c++)
    n += *c == '/' && c[1] != '/' && c[1] != '\0';
  return n;
}

/* A stable sort by depth (the Go library's orderedMounts): insertion, as the list is short. */
static void
sort_mounts (struct cdi_edits *out)
{
  for (size_t i = 1; i < out->n_mounts; i++)
    {
      struct cdi_mount m = out->mounts[i];
      size_t j = i;
      for (; j > 0 && depth (out->mounts[j - 1].path) > depth (m.path); j--)
        out->mounts[j] = out->mounts[j - 1];
      out->mounts[j] = m;
    }
}

static char **
strv_dup (char *const *v)
{
  size_t n = strv_length (v);
  char **copy = xcalloc (n + 1, sizeof (char *));
  for (size_t i = 0; i < n; i++)
    copy[i] = xstrdup (v[i]);
  return copy;
}

static void
apply (const struct pending *at, struct cdi_edits *out)
{
  const struct cdi_spec_edits *e = at->edits;
  if (e->unsupported != NULL)
    die ("CDI spec %s: %s: enter-devroot cannot apply it (no supplementary groups, resource "
         "control or network devices in a user namespace): this device cannot be given",
         at->file->path, e->unsupported);
  size_t n_env = strv_length (out->env);
  for (size_t i = 0; e->env[i] != NULL; i++)
    {
      out->env = xrealloc (out->env, (n_env + 2) * sizeof (char *));
      out->env[n_env++] = xstrdup (e->env[i]);
      out->env[n_env] = NULL;
    }
  for (size_t j = 0; j < e->n_nodes; j++)
    {
      struct cdi_node n;
      host_node (at, j, &n);
      add_node (out, n);
    }
  for (size_t j = 0; j < e->n_mounts; j++)
    add_mount (out, (struct cdi_mount) { .host = xstrdup (e->mounts[j].host_path),
                                         .path = xstrdup (e->mounts[j].container_path),
                                         .options = mount_options (at, j) });
  for (size_t j = 0; j < e->n_hooks; j++)
    {
      const struct cdi_spec_hook *h = &e->hooks[j];
      check_hook (at, j);
      out->hooks = xrealloc (out->hooks, (out->n_hooks + 1) * sizeof *out->hooks);
      out->hooks[out->n_hooks++] = (struct cdi_hook) {
        .stage = xstrdup (h->name), .spec = xstrdup (at->file->path), .path = xstrdup (h->path),
        .args = strv_dup (h->args), .env = strv_dup (h->env), .timeout = h->timeout,
      };
    }
}

void
resolve_devices (char *const *devices, struct cdi_edits *out)
{
  struct spec_set set;
  spec_set_load (&set);
  struct plan plan = { 0 };
  for (size_t i = 0; devices[i] != NULL; i++)
    {
      const char *why;
      if (cdi_device_name_check (devices[i], &why) < 0)
        die ("invalid --device '%s': %s", str_one_line (devices[i]), why);
      const struct device_entry *d = spec_set_find (&set, devices[i]);
      if (d == NULL)
        {
          plan_missing (&plan, &set, devices[i]);
          continue;
        }
      check_entry (devices[i], d);
      plan_device (&plan, d);
    }
  *out = (struct cdi_edits) { .env = xcalloc (1, sizeof (char *)) };
  for (size_t i = 0; i < plan.n; i++)
    apply (&plan.items[i], out);
  sort_mounts (out);
  free (plan.items);
  free (plan.specs_done);
  spec_set_clear (&set);
}
