/* Member names and the no-symlink walk: archive_path_normalize, the sets of paths an
 * extraction remembers, and open_parent, which reaches an entry's directory from the root
 * one component at a time with openat(O_DIRECTORY|O_NOFOLLOW) (the rules are at the top
 * of extract.c). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/util.h"
#include "store/extract/extract-internal.h"
#include "common/walk.h"

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

int
archive_path_normalize (const char *in, char **out, bool *was_absolute, const char **why)
{
  struct strbuf sb = { 0 };
  const char *p = in;
  size_t components = 0;

  *was_absolute = (*p == '/');
  while (*p != '\0')
    {
      while (*p == '/')
        p++;
      if (*p == '\0')
        break;
      size_t len = strcspn (p, "/");
      if (len == 1 && p[0] == '.')
        ;
      else if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          free (sb.str);
          *why = "it contains a '..' component";
          return -1;
        }
      else if (len > NAME_MAX)
        {
          free (sb.str);
          *why = "a path component is longer than NAME_MAX";
          return -1;
        }
      else
        {
          if (++components > WALK_MAX_DEPTH)
            {
              free (sb.str);
              *why = "it is more than " STRINGIFY (WALK_MAX_DEPTH) " levels deep";
              return -1;
            }
          if (sb.len > 0)
            strbuf_append_c (&sb, '/');
          strbuf_append_len (&sb, p, len);
        }
      p += len;
    }
  /* Nothing could use a longer path inside the root. The depth is bounded above: every
   * walk of the root (export, the flat copy of its layers) can then go to the bottom. */
  if (sb.len >= PATH_MAX - 1)
    {
      free (sb.str);
      *why = "the path is longer than PATH_MAX";
      return -1;
    }
  *out = strbuf_steal (&sb);
  return 0;
}

static size_t
path_hash (const char *s)
{
  size_t h = 14695981039346656037ULL; /* FNV-1a */
  for (; *s != '\0'; s++)
    h = (h ^ (unsigned char) *s) * 1099511628211ULL;
  return h;
}

bool
path_set_has (const struct path_set *set, const char *path)
{
  if (set->cap == 0)
    return false;
  for (size_t i = path_hash (path) & (set->cap - 1); set->slots[i] != NULL;
       i = (i + 1) & (set->cap - 1))
    if (strcmp (set->slots[i], path) == 0)
      return true;
  return false;
}

void
path_set_add (struct path_set *set, const char *path)
{
  if (path_set_has (set, path))
    return;
  if (2 * (set->n + 1) > set->cap)
    {
      struct path_set bigger = { .cap = set->cap ? 2 * set->cap : 256 };
      bigger.slots = xcalloc (bigger.cap, sizeof *bigger.slots);
      for (size_t i = 0; i < set->cap; i++)
        if (set->slots[i] != NULL)
          {
            size_t j = path_hash (set->slots[i]) & (bigger.cap - 1);
            while (bigger.slots[j] != NULL)
              j = (j + 1) & (bigger.cap - 1);
            bigger.slots[j] = set->slots[i];
          }
      bigger.n = set->n;
      free (set->slots);
      *set = bigger;
    }
  size_t i = path_hash (path) & (set->cap - 1);
  while (set->slots[i] != NULL)
    i = (i + 1) & (set->cap - 1);
  set->slots[i] = xstrdup (path);
  set->n++;
}

void
path_set_clear (struct path_set *set)
{
  free_string_array (set->slots, set->cap);
  *set = (struct path_set) { 0 };
}

/* Open the directory holding REL's last component, walking from the root (or from CACHE
 * when it holds a prefix) one component at a time without following symlinks, creating
 * missing directories when CREATE. Returns the fd and points *leaf at the last component
 * inside *copy (caller frees *copy), or -1 with errno and *bad naming the component that
 * failed. */
int
open_parent (int rootfd, struct dir_cache *cache, const char *rel, bool create, char **copy,
             const char **leaf, const char **bad)
{
  *copy = xstrdup (rel);
  char *comp = *copy;
  const char *last_slash = strrchr (*copy, '/');
  size_t parent_len = last_slash != NULL ? (size_t) (last_slash - *copy) : 0;
  int dfd = -1;
  if (cache != NULL && cache->fd >= 0)
    {
      size_t clen = strlen (cache->path);
      if (clen > 0 && clen <= parent_len && strncmp (*copy, cache->path, clen) == 0
          && (*copy)[clen] == '/')
        {
          /* The cached directory is an ancestor: walk down from it. */
          dfd = dup (cache->fd);
          comp = *copy + clen + 1;
        }
      else if (parent_len > 0 && parent_len < clen && strncmp (*copy, cache->path, parent_len) == 0
               && cache->path[parent_len] == '/')
        {
          /* It is a descendant (directory fixups go deepest first): climb with "..", which
           * stays inside the tree because no directory in it moves. */
          dfd = dup (cache->fd);
          for (const char *p = cache->path + parent_len; dfd >= 0 && *p != '\0'; p++)
            if (*p == '/')
              {
                int up = openat (dfd, "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                close (dfd);
                dfd = up;
              }
          comp = *copy + parent_len + 1;
        }
    }
  if (dfd < 0)
    {
      dfd = dup (rootfd);
      comp = *copy;
    }
  if (dfd < 0)
    return -1;
  for (char *slash; (slash = strchr (comp, '/')) != NULL; comp = slash + 1)
    {
      *slash = '\0';
      int next = openat (dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0 && errno == ENOENT && create)
        {
          if (mkdirat (dfd, comp, IMPLICIT_DIR_MODE) < 0 && errno != EEXIST)
            goto fail;
          next = openat (dfd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
      if (next < 0)
        goto fail;
      close (dfd);
      dfd = next;
      *slash = '/';
    }
  *leaf = comp;
  if (cache != NULL && parent_len > 0)
    {
      int keep = dup (dfd);
      if (keep >= 0)
        {
          if (cache->fd >= 0)
            close (cache->fd);
          free (cache->path);
          cache->path = xasprintf ("%.*s", (int) parent_len, *copy);
          cache->fd = keep;
        }
    }
  return dfd;

fail:
  {
    int errsv = errno;
    *bad = comp;
    close (dfd);
    errno = errsv;
    return -1;
  }
}

/* The target of the symlink at REL in the root, read without following anything; NULL
 * when REL is not a symlink. */
static char *
symlink_target (struct extractor *x, const char *rel)
{
  cleanup_free char *copy = NULL;
  const char *leaf, *bad;
  cleanup_fd int dfd = open_parent (x->rootfd, NULL, rel, false, &copy, &leaf, &bad);
  char buf[PATH_MAX];
  ssize_t n = dfd >= 0 ? readlinkat (dfd, leaf, buf, sizeof buf - 1) : -1;
  if (n <= 0)
    return NULL;
  return xasprintf ("%.*s", (int) n, buf);
}

/* Where the symlink LINK (a path in the root) to TARGET points, as a path in the root;
 * NULL when that would need a '..' (the message then says less). */
static char *
canonical_path (const char *link, const char *target)
{
  const char *slash = strrchr (link, '/');
  cleanup_free char *joined = target[0] == '/' || slash == NULL
    ? xstrdup (target) : xasprintf ("%.*s/%s", (int) (slash - link), link, target);
  char *out;
  bool absolute;
  const char *why;
  if (archive_path_normalize (joined, &out, &absolute, &why) < 0)
    return NULL;
  return out;
}

/* open_parent for entry ENTRY, or -1 with the reason it is refused (which names the
 * symlink in the way and what to do about it). */
int
open_parent_or_refuse (struct extractor *x, const char *entry, const char *rel, bool create,
                       char **copy, const char **leaf)
{
  const char *bad = NULL;
  int dfd = open_parent (x->rootfd, &x->cache, rel, create, copy, leaf, &bad);
  if (dfd >= 0)
    return dfd;
  if (errno == ELOOP || errno == ENOTDIR)
    {
      /* *copy now ends with the component that failed: the path of that symlink. */
      cleanup_free char *target = symlink_target (x, *copy);
      cleanup_free char *canonical = target != NULL ? canonical_path (*copy, target) : NULL;
      if (canonical != NULL)
        return refuse (x, entry, "its path goes through '%s', a symlink to '%s', and symlinks "
                       "are never followed: repack the archive with canonical paths ('%s/...' "
                       "rather than '%s/...')", *copy, target, canonical, *copy);
      if (target != NULL)
        return refuse (x, entry, "its path goes through '%s', a symlink to '%s', and symlinks "
                       "are never followed: repack the archive with the paths it points to",
                       *copy, target);
      return refuse (x, entry, "its path goes through '%s', which is not a directory", bad);
    }
  return refuse (x, entry, "cannot open directory '%s': %s", bad, strerror (errno));
}
