/* The store of devroots as `list` and `images` print it: the names, each root's metadata. */
#include <dirent.h>
#include <errno.h>
#include <fts.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/inuse.h"
#include "common/meta.h"
#include "common/name.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"

static int
compare_strings (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

char *
human_size (uint64_t bytes)
{
  static const char units[] = "BKMGTPE";
  double v = (double) bytes;
  size_t u = 0;
  while (v >= 1024 && u + 1 < sizeof units - 1)
    {
      v /= 1024;
      u++;
    }
  return u == 0 ? xasprintf ("%" PRIu64 "B", bytes) : xasprintf ("%.1f%c", v, units[u]);
}

/* Bytes of the regular files under DIR, not following symlinks nor crossing into another
 * filesystem; what cannot be read is not counted. */
static uint64_t
tree_bytes (const char *dir)
{
  cleanup_free char *start = xstrdup (dir); /* fts_open takes char *const * */
  char *paths[] = { start, NULL };
  FTS *fts = fts_open (paths, FTS_PHYSICAL | FTS_NOCHDIR | FTS_XDEV, NULL);
  uint64_t bytes = 0;
  for (FTSENT *e; fts != NULL && (e = fts_read (fts)) != NULL;)
    if (e->fts_info == FTS_F)
      bytes += (uint64_t) e->fts_statp->st_size;
  if (fts != NULL)
    fts_close (fts);
  return bytes;
}

/* A root's own bytes and those of the layers it shares: an overlay root's own are its
 * upper's files (measured now: a root's diff is small next to its image); a flat root's are
 * all of its files, a copy of its layers made at creation (M's size, not measured again:
 * walking a whole root would make a listing of large roots take seconds). Shared: its
 * layers in the layer store, which `cache clean` keeps for it. */
static void
root_sizes (const struct store_paths *p, const struct meta *m, uint64_t *own, uint64_t *shared)
{
  *shared = 0;
  for (char **l = m->layers; l != NULL && *l != NULL; l++)
    *shared += overlay_layer_size (*l);
  if (!overlay_is_root (m))
    {
      *own = m->size_bytes;
      return;
    }
  cleanup_free char *dir = paths_overlay (p, m->name);
  cleanup_free char *upper = xasprintf ("%s/upper", dir);
  *own = tree_bytes (upper);
}

/* The names of the devroots, sorted. */
static char **
root_names (const struct store_paths *p)
{
  char **names = xcalloc (1, sizeof (char *));
  size_t n = 0;
  DIR *d = opendir (p->roots);
  if (d == NULL && errno != ENOENT)
    die_with_error ("cannot read %s", p->roots);
  for (struct dirent *de; d != NULL && (de = readdir (d)) != NULL;)
    {
      if (!name_is_valid (de->d_name) || ephemeral_abandoned (p, de->d_name))
        continue;
      names = xrealloc (names, (n + 2) * sizeof (char *));
      names[n++] = xstrdup (de->d_name);
      names[n] = NULL;
    }
  if (d != NULL)
    closedir (d);
  qsort (names, n, sizeof (char *), compare_strings);
  return names;
}

char **
roots_names (void)
{
  struct store_paths p;
  store_paths_from_env (&p);
  char **names = root_names (&p);
  store_paths_clear (&p);
  return names;
}

bool
roots_read_meta (const char *name, struct meta *m)
{
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_free char *meta_path = paths_meta (&p, name);
  store_paths_clear (&p);
  *m = (struct meta) { 0 };
  if (meta_read (meta_path, m) == 0)
    return true;
  meta_clear (m);
  return false;
}

void
roots_list (bool json)
{
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_strv char **names = root_names (&p);
  size_t n = strv_length (names);

  /* The NAME column is as wide as the longest name (up to 64 characters). */
  int width = (int) strlen ("NAME");
  for (size_t i = 0; i < n; i++)
    if ((int) strlen (names[i]) > width)
      width = (int) strlen (names[i]);
  struct strbuf out = { 0 };
  if (json)
    strbuf_append (&out, n == 0 ? "[" : "[\n");
  else if (n > 0)
    /* The size is what create unpacked (the metadata's): walking every root to measure it
     * now would make a listing of large roots take seconds. The header says so. */
    strbuf_appendf (&out, "%-*s %-16s  %-8s %-8s  %-20s  %-12s %s\n", width, "NAME",
                    "SIZE-AT-CREATION", "OWN", "SHARED", "CREATED", "WARM", "SOURCE");
  for (size_t i = 0; i < n; i++)
    {
      cleanup_free char *root = paths_root (&p, names[i]);
      struct meta m;
      roots_read_meta (names[i], &m); /* listed with empty fields: metadata lost or unreadable */
      free (m.name);
      m.name = xstrdup (names[i]);
      uint64_t own, shared;
      root_sizes (&p, &m, &own, &shared);
      /* The processes that keep the root warm (stepns.c): warm runs' namespaces and an
       * overlay root's one mount. `remove` stops them; they idle out on their own. */
      pid_t pids[64];
      size_t k = inuse_keepers (p.locks, names[i], pids, N_ELEMENTS (pids));
      if (k > N_ELEMENTS (pids))
        k = N_ELEMENTS (pids);
      struct strbuf warm = { 0 };
      for (size_t j = 0; j < k; j++)
        strbuf_appendf (&warm, "%s%ld", j > 0 ? "," : "", (long) pids[j]);
      cleanup_free char *warm_text = strbuf_steal (&warm);
      if (json)
        {
          strbuf_append (&out, "  ");
          meta_append_json (&out, &m, root);
          out.len--; /* the object's closing brace: the sizes go in it */
          strbuf_appendf (&out, ", \"own_bytes\": %" PRIu64 ", \"shared_bytes\": %" PRIu64
                          ", \"warm_pids\": [%s]}%s", own, shared,
                          warm_text, i + 1 < n ? ",\n" : "\n");
        }
      else
        {
          cleanup_free char *size = human_size (m.size_bytes);
          cleanup_free char *own_h = human_size (own);
          cleanup_free char *shared_h = human_size (shared);
          strbuf_appendf (&out, "%-*s %-16s  %-8s %-8s  %-20s  %-12s %s\n", width, m.name, size,
                          own_h, shared_h, m.created != NULL ? m.created : "-",
                          warm_text[0] != '\0' ? warm_text : "-",
                          m.source != NULL ? m.source : "-");
        }
      meta_clear (&m);
    }
  if (json)
    strbuf_append (&out, "]\n");
  cleanup_free char *text = strbuf_steal (&out);
  fputs (text, stdout);
  store_paths_clear (&p);
}

void
roots_list_images (bool json)
{
  struct store_paths p;
  store_paths_from_env (&p);
  cleanup_strv char **names = root_names (&p);
  store_paths_clear (&p);

  struct strbuf out = { 0 };
  bool first = true;
  strbuf_append (&out, json ? "[" : "");
  for (size_t i = 0; names[i] != NULL; i++)
    {
      struct meta m;
      if (!roots_read_meta (names[i], &m) || m.image.digest == NULL)
        {
          meta_clear (&m);
          continue;
        }
      if (json)
        {
          strbuf_append (&out, first ? "\n  {\"name\": " : ",\n  {\"name\": ");
          json_append_string (&out, names[i]);
          strbuf_append (&out, ", \"image\": ");
          json_append_string (&out, m.image.ref);
          strbuf_append (&out, ", \"digest\": ");
          json_append_string (&out, m.image.digest);
          strbuf_append_c (&out, '}');
        }
      else
        {
          if (first)
            strbuf_appendf (&out, "%-24s %-71s  %s\n", "NAME", "DIGEST", "IMAGE");
          strbuf_appendf (&out, "%-24s %-71s  %s\n", names[i], m.image.digest,
                          m.image.ref != NULL ? m.image.ref : "-");
        }
      first = false;
      meta_clear (&m);
    }
  if (json)
    strbuf_append (&out, first ? "]\n" : "\n]\n");
  cleanup_free char *text = strbuf_steal (&out);
  fputs (text, stdout);
}
