/* A warm run's key: what the namespaces a keeper holds were made of (warm-key.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/overlay.h"
#include "common/paths.h"
#include "common/roots.h"
#include "common/util.h"
#include "enter/warm-key.h"

/* FNV-1a of H and the string S with its terminating NUL (so "a","bc" is not "ab","c"). */
static uint64_t
fnv_str (uint64_t h, const char *s)
{
  do
    h = (h ^ (unsigned char) *s) * UINT64_C (1099511628211);
  while (*s++ != '\0');
  return h;
}

/* Where the files a view mounts on are looked up: the root (the working directory), or for
 * an overlay root, whose roots/NAME on the host is only the empty mount point, its upper
 * and then its layers, top first: BASES[0..N). */
struct lookup
{
  char **bases;
  int *fds; /* each base opened, or -1 */
  size_t n;
};

static void
lookup_open (struct lookup *l)
{
  l->fds = xcalloc (l->n + 1, sizeof *l->fds);
  for (size_t i = 0; i < l->n; i++)
    l->fds[i] = open (l->bases[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void
lookup_init (struct lookup *l, const struct warm_view *v)
{
  size_t n_layers = 0;
  if (v->overlay != NULL)
    while (v->overlay->layers != NULL && v->overlay->layers[n_layers] != NULL)
      n_layers++;
  l->bases = xcalloc (n_layers + 2, sizeof *l->bases);
  l->n = 0;
  if (v->overlay == NULL)
    l->bases[l->n++] = xstrdup (".");
  else
    {
      struct store_paths p;
      store_paths_from_env (&p);
      cleanup_free char *dir = paths_overlay (&p, v->name);
      store_paths_clear (&p);
      l->bases[l->n++] = xasprintf ("%s/upper", dir);
      for (size_t i = n_layers; i-- > 0;)
        {
          char *tree = overlay_layer_tree (v->overlay->layers[i]);
          if (tree != NULL)
            l->bases[l->n++] = tree;
        }
    }
  lookup_open (l);
}

static void
lookup_clear (struct lookup *l)
{
  for (size_t i = 0; i < l->n; i++)
    if (l->fds[i] >= 0)
      close (l->fds[i]);
  free (l->fds);
  free_string_array (l->bases, l->n);
}

/* H and the identity of PATH in the view (L), or its absence ("-"): a mount point the
 * keeper's view holds. An overlay whiteout (a 0/0 character device) is an absence. PATH is
 * looked up beneath each base through no symlink (the root and an upper are the job's to
 * change): a symlink on the way is no identity, *UNSTABLE, and the run makes its own
 * namespaces, as a first run does. */
static uint64_t
fnv_identity (uint64_t h, const struct lookup *l, const char *path, bool *unstable)
{
  char id[96] = "-";
  for (size_t i = 0; i < l->n; i++)
    {
      struct stat st;
      cleanup_fd int fd = l->fds[i] < 0 ? -1 : open_beneath (l->fds[i], path, O_PATH);
      if (fd < 0 && (errno == ENOENT || l->fds[i] < 0))
        continue;
      if (fd < 0 || fstat (fd, &st) < 0)
        break; /* a symlink on the way: "-" */
      if (S_ISCHR (st.st_mode) && st.st_rdev == 0)
        break; /* whited out: absent */
      /* The change time too: a file deleted and made again may get the same inode number. */
      snprintf (id, sizeof id, "%ju:%ju:%jd.%ld", (uintmax_t) st.st_dev, (uintmax_t) st.st_ino,
                (intmax_t) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
      break;
    }
  if (strcmp (id, "-") == 0)
    *unstable = true;
  return fnv_str (fnv_str (h, path), id);
}

/* See warm-key.h. */
bool
warm_key (const struct warm_view *view, uint64_t *key)
{
  const char *root = view->root;
  const struct stat *root_st = view->root_st;
  char ids[96];
  snprintf (ids, sizeof ids, "%ju:%ju:%d:%d", (uintmax_t) root_st->st_dev,
            (uintmax_t) root_st->st_ino, (int) view->opts->root, (int) view->opts->no_host_dns);
  uint64_t h = fnv_str (fnv_str (UINT64_C (14695981039346656037), root), ids);
  bool stable = false, missing = false; /* dev/ and proc/ are never created */
  struct lookup l;
  lookup_init (&l, view);
  h = fnv_identity (fnv_identity (h, &l, "dev", &stable), &l, "proc", &stable);
  if (!view->opts->no_host_dns)
    h = fnv_identity (fnv_identity (h, &l, "etc/resolv.conf", &missing), &l, "etc/hosts",
                      &missing);
  for (size_t i = 0; i < view->n_binds; i++)
    h = fnv_identity (fnv_str (fnv_str (fnv_str (h, view->binds[i].src), view->binds[i].dst),
                               view->binds[i].ro ? "ro" : "rw"),
                      &l, view->binds[i].dst + 1, &missing);
  if (view->cdi != NULL)
    {
      const struct cdi_view *c = view->cdi;
      for (size_t i = 0; i < c->blob_len; i++)
        h = (h ^ (unsigned char) c->blob[i]) * UINT64_C (1099511628211);
      /* The nodes go on the job's own /dev; the mounts on the root's files, as binds do. */
      for (size_t i = c->n_nodes; i < c->n_binds; i++)
        h = fnv_identity (h, &l, c->binds[i].dst + 1, &missing);
    }
  lookup_clear (&l);
  *key = h;
  return !missing;
}
